// ecekde.report(): the library's calibration report as the dict `ecekde report --json` prints.
#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "docstrings.hpp"
#include "ecekde/report.hpp"
#include "module.hpp"
#include "option_kwargs.hpp"
#include "watch.hpp"

namespace ecekde::python {

void register_report(py::module_& m) {
  def_with_options(m, "report", ArgDoc("probs", "n x K predicted probabilities, or n values P(y = 1)"),
                   ArgDoc("labels", "n class labels in [0, K)"), report::options(),
                   "The calibration report of `probs` against `labels`: the crossfit estimate of every type with "
                   "its interval, the paper's ECE^KDE, binned ECE and MCE, MMCE, with bootstrap intervals and "
                   "calibration-test p-values, and a summary (accuracy, NLL, Brier score). The same computation "
                   "and structure as `ecekde report --json` (without the file names and plots).",
                   "dict", [](py::object probs, py::object labels, report::Settings settings, py::object progress) {
                     const ProbsInput probs_in = probs_input(probs);
                     const LabelsInput labels_in = labels_input(labels);
                     RunControl control;
                     settings.control = &control;
                     const std::string text = run_watched(control, progress, "ecekde.report", [&] {
                       return report::to_json(report::compute(probs_in.view, labels_in.view, settings)).dump();
                     });
                     return py::module_::import("json").attr("loads")(text);
                   });
}

}  // namespace ecekde::python
