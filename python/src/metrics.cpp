// Binned ECE, MMCE and temperature scaling.
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "arrays.hpp"
#include "docstrings.hpp"
#include "ecekde/binned.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/reliability.hpp"
#include "ecekde/temperature.hpp"
#include "ecekde/options.hpp"
#include "module.hpp"
#include "option_kwargs.hpp"

namespace ecekde::python {

void register_metrics(py::module_& m) {
  keyword_function("binned_calibration_error", {"probs", "labels"},
                   [](py::list& out) { append_option_table(out, options::binned_options(), options::uses::all); });
  std::vector<ArgDoc> binned_docs{
      ArgDoc("probs", "n x K probabilities (or n values P(y = 1)), float32/float64, read in place"),
      ArgDoc("labels", "n class labels (int32/int64)")};
  add_option_docs(binned_docs, options::binned_options(), options::uses::all);
  m.def(
      "binned_calibration_error",
      [](py::object probs, py::object labels, py::kwargs kwargs) {
        const BinnedOptions o = options_from(options::binned_options(), "binned_calibration_error", kwargs);
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        py::gil_scoped_release nogil;
        return binned_calibration_error(probs_in.view, labels_in.view, o);
      },
      docstring("The binned calibration error ECE^bin with the per-bin statistics behind reliability diagrams "
                "(ecekde::binned_calibration_error).",
                binned_docs, "BinnedResult")
          .c_str(),
      py::arg("probs"), py::arg("labels"));

  keyword_function("reliability_figure", {"probs", "labels"},
                   [](py::list& out) { append_option_table(out, options::reliability_options(), options::uses::all); });
  std::vector<ArgDoc> figure_docs{
      ArgDoc("probs", "n x K probabilities (or n values P(y = 1)), float32/float64, read in place"),
      ArgDoc("labels", "n class labels (int32/int64)")};
  add_option_docs(figure_docs, options::reliability_options(), options::uses::all);
  m.def(
      "reliability_figure",
      [](py::object probs, py::object labels, py::kwargs kwargs) {
        const ReliabilityOptions o = options_from(options::reliability_options(), "reliability_figure", kwargs);
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        py::gil_scoped_release nogil;
        return reliability_figure(probs_in.view, labels_in.view, o);
      },
      docstring("What the reliability diagram(s) of `type` show, as `ecekde report --plot` and ecekde.plot draw "
                "them: occupied bins with Wilson intervals, the kernel curve, the error terms "
                "(ecekde::reliability_figure).",
                figure_docs, "ReliabilityFigure")
          .c_str(),
      py::arg("probs"), py::arg("labels"));

  m.def(
      "doane_bins",
      [](py::array_t<double, py::array::c_style | py::array::forcecast> x) {
        return doane_bins(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
      },
      "Doane's number of bins for the scores x: ceil(1 + log2 n + log2(1 + |g1| / s_g1)) (ecekde::doane_bins).",
      py::arg("x"));

  keyword_function("mmce", {"probs", "labels"},
                   [](py::list& out) { append_option_table(out, options::mmce_options(), options::uses::all); });
  std::vector<ArgDoc> mmce_docs{ArgDoc("probs", "n x K probabilities (K >= 2), float32/float64, read in place"),
                                ArgDoc("labels", "n class labels (int32/int64)")};
  add_option_docs(mmce_docs, options::mmce_options(), options::uses::all);
  m.def(
      "mmce",
      [](py::object probs, py::object labels, py::kwargs kwargs) {
        const MmceOptions o = options_from(options::mmce_options(), "mmce", kwargs);
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        py::gil_scoped_release nogil;
        return mmce(probs_in.view, labels_in.view, o);
      },
      docstring("MMCE (Kumar, Sarawagi & Jain 2018) of the top-label confidences, with its gradients "
                "(ecekde::mmce).",
                mmce_docs, "MmceResult")
          .c_str(),
      py::arg("probs"), py::arg("labels"));

  keyword_function("fit_temperature", {"logits", "labels"},
                   [](py::list& out) { append_option_table(out, options::temperature_options(), options::uses::all); });
  std::vector<ArgDoc> temperature_docs{
      ArgDoc("logits", "n x K logits or log-probabilities (float32/float64), read in place"),
      ArgDoc("labels", "n class labels (int32/int64)")};
  add_option_docs(temperature_docs, options::temperature_options(), options::uses::all);
  m.def(
      "fit_temperature",
      [](py::object logits, py::object labels, py::kwargs kwargs) {
        const TemperatureOptions o = options_from(options::temperature_options(), "fit_temperature", kwargs);
        const ProbsInput logits_in = probs_input(logits, "logits");
        const LabelsInput labels_in = labels_input(labels);
        py::gil_scoped_release nogil;
        return fit_temperature(logits_in.view, labels_in.view, o);
      },
      docstring("Temperature scaling (Guo et al. 2017): the T > 0 minimising the mean NLL of softmax(logits / T) "
                "(ecekde::fit_temperature).",
                temperature_docs, "TemperatureFit")
          .c_str(),
      py::arg("logits"), py::arg("labels"));

  m.def(
      "apply_temperature",
      [](py::object logits, double temperature) {
        const ProbsInput logits_in = probs_input(logits, "logits");
        std::vector<double> out;
        {
          py::gil_scoped_release nogil;
          out = apply_temperature(logits_in.view, temperature);
        }
        return array_from(std::move(out), {py::ssize_t(logits_in.view.rows()), py::ssize_t(logits_in.view.cols())});
      },
      "softmax(logits / temperature) row by row: an n x K float64 array (ecekde::apply_temperature).",
      py::arg("logits"), py::arg("temperature"));
}

}  // namespace ecekde::python
