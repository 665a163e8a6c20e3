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
  const ArgDoc probs_doc("probs", "n x K probabilities (or n values P(y = 1)), float32/float64, read in place");
  const ArgDoc labels_doc("labels", "n class labels (int32/int64)");
  def_with_options(m, "binned_calibration_error", probs_doc, labels_doc, options::binned_options(),
                   "The binned calibration error ECE^bin with the per-bin statistics behind reliability diagrams "
                   "(ecekde::binned_calibration_error).",
                   "BinnedResult", [](py::object probs, py::object labels, const BinnedOptions& o) {
                     const ProbsInput probs_in = probs_input(probs);
                     const LabelsInput labels_in = labels_input(labels);
                     py::gil_scoped_release nogil;
                     return binned_calibration_error(probs_in.view, labels_in.view, o);
                   });
  def_with_options(m, "reliability_figure", probs_doc, labels_doc, options::reliability_options(),
                   "What the reliability diagram(s) of `type` show, as `ecekde report --plot` and ecekde.plot draw "
                   "them: occupied bins with Wilson intervals, the kernel curve, the error terms "
                   "(ecekde::reliability_figure).",
                   "ReliabilityFigure", [](py::object probs, py::object labels, const ReliabilityOptions& o) {
                     const ProbsInput probs_in = probs_input(probs);
                     const LabelsInput labels_in = labels_input(labels);
                     py::gil_scoped_release nogil;
                     return reliability_figure(probs_in.view, labels_in.view, o);
                   });
  def_with_options(m, "simplex_figure", probs_doc, labels_doc, options::simplex_options(),
                   "What the simplex view of three classes shows, as `ecekde report --plot` and "
                   "ecekde.plot.simplex_view draw it: the canonical binned histogram's cells and the Dirichlet "
                   "kernel density of the predictions on a triangular grid, with both error terms "
                   "(ecekde::simplex_figure).",
                   "SimplexFigure", [](py::object probs, py::object labels, const SimplexOptions& o) {
                     const ProbsInput probs_in = probs_input(probs);
                     const LabelsInput labels_in = labels_input(labels);
                     py::gil_scoped_release nogil;
                     return simplex_figure(probs_in.view, labels_in.view, o);
                   });

  m.def(
      "doane_bins",
      [](py::array_t<double, py::array::c_style | py::array::forcecast> x) {
        return doane_bins(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
      },
      "Doane's number of bins for the scores x: ceil(1 + log2 n + log2(1 + |g1| / s_g1)) (ecekde::doane_bins).",
      py::arg("x"));

  def_with_options(m, "mmce", ArgDoc("probs", "n x K probabilities (K >= 2), float32/float64, read in place"),
                   labels_doc, options::mmce_options(),
                   "MMCE (Kumar, Sarawagi & Jain 2018) of the top-label confidences, with its gradients "
                   "(ecekde::mmce).",
                   "MmceResult", [](py::object probs, py::object labels, const MmceOptions& o) {
                     const ProbsInput probs_in = probs_input(probs);
                     const LabelsInput labels_in = labels_input(labels);
                     py::gil_scoped_release nogil;
                     return mmce(probs_in.view, labels_in.view, o);
                   });

  def_with_options(m, "fit_temperature",
                   ArgDoc("logits", "n x K logits or log-probabilities (float32/float64), read in place"), labels_doc,
                   options::temperature_options(),
                   "Temperature scaling (Guo et al. 2017): the T > 0 minimising the mean NLL of softmax(logits / T) "
                   "(ecekde::fit_temperature).",
                   "TemperatureFit", [](py::object logits, py::object labels, const TemperatureOptions& o) {
                     const ProbsInput logits_in = probs_input(logits, "logits");
                     const LabelsInput labels_in = labels_input(labels);
                     py::gil_scoped_release nogil;
                     return fit_temperature(logits_in.view, labels_in.view, o);
                   });

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
