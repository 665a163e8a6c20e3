// ecekde.report(): the library's calibration report, kept whole so that the package's Report
// (python/ecekde/_report.py) shows it as `ecekde report` prints it: text, JSON and HTML tables.
#include <optional>
#include <sstream>
#include <string>

#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "docstrings.hpp"
#include "ecekde/io.hpp"
#include "ecekde/report.hpp"
#include "module.hpp"
#include "option_kwargs.hpp"
#include "watch.hpp"

namespace ecekde::python {

namespace {

// A computed report and where its input came from (the files, when it was read from files).
struct ComputedReport {
  report::Report report;
  report::Provenance provenance;
};

bool is_path(py::handle value) { return py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__"); }

std::string path_text(py::handle value) { return py::module_::import("os").attr("fspath")(value).cast<std::string>(); }

ComputedReport compute_report(py::object probs, py::object labels, report::Settings settings, py::object progress) {
  RunControl control;
  settings.control = &control;
  ComputedReport out;
  if (is_path(probs) || is_path(labels)) {
    if (!is_path(probs) || !is_path(labels))
      throw py::type_error("report takes probs and labels both as arrays or both as file paths");
    const std::string probs_path = path_text(probs), labels_path = path_text(labels);
    out.provenance.files = {{"probs", probs_path}, {"labels", labels_path}};  // as the CLI's --probs, --labels
    out.report = run_watched(control, progress, "ecekde.report", [&] {
      const io::Predictions in = io::read_predictions(probs_path, labels_path);
      return report::compute(in.probs.view(), in.labels.view(), settings);
    });
  } else {
    const ProbsInput probs_in = probs_input(probs);
    const LabelsInput labels_in = labels_input(labels);
    out.report = run_watched(control, progress, "ecekde.report",
                             [&] { return report::compute(probs_in.view, labels_in.view, settings); });
  }
  out.report.settings.control = nullptr;  // this call's, gone with it
  return out;
}

template <class Print>
std::string printed(const ComputedReport& r, Print print) {
  std::ostringstream out;
  print(out, r.report, r.provenance);
  return out.str();
}

}  // namespace

void register_report(py::module_& m) {
  py::class_<ComputedReport>(m, "_ComputedReport", "The library's report, read by ecekde.Report.")
      .def("text", [](const ComputedReport& r) { return printed(r, report::print_text); },
           "The tables `ecekde report` prints.")
      .def("json", [](const ComputedReport& r) { return report::to_json(r.report, r.provenance).dump(2); },
           "The document `ecekde report --json` prints (without its final newline).")
      .def("html", [](const ComputedReport& r) { return printed(r, report::print_html); },
           "The tables as HTML.");

  def_with_options(m, "report",
                   ArgDoc("probs", "n x K predicted probabilities, or n values P(y = 1); or the path of a file "
                                   "the CLI's --probs reads (.npy, .csv)"),
                   ArgDoc("labels", "n class labels in [0, K); or the path of a file the CLI's --labels reads"),
                   report::options(),
                   "The calibration report of `probs` against `labels`: the crossfit estimate of every type with "
                   "its interval, the paper's ECE^KDE, binned ECE and MCE, MMCE, with bootstrap intervals and "
                   "calibration-test p-values, and a summary (accuracy, NLL, Brier score). The same computation "
                   "as `ecekde report`: str() of the result is its text, to_json() its --json document (read from "
                   "files, both name the files as the CLI does).",
                   "Report", [](py::object probs, py::object labels, report::Settings settings, py::object progress) {
                     ComputedReport computed = compute_report(probs, labels, std::move(settings), progress);
                     return py::module_::import("ecekde._report").attr("Report")(std::move(computed));
                   });
}

}  // namespace ecekde::python
