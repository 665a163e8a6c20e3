// Binned ECE, MMCE and temperature scaling.
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "arrays.hpp"
#include "docstrings.hpp"
#include "ecekde/binned.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/temperature.hpp"
#include "module.hpp"

namespace ecekde::python {

namespace param = parameters;

void register_metrics(py::module_& m) {
  const BinnedOptions bd{};
  m.def(
      "binned_calibration_error",
      [](py::object probs, py::object labels, std::string_view type, double p, bool maximum,
         std::string_view binning, std::optional<std::size_t> bins, std::optional<std::string_view> form,
         bool renormalize) {
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        BinnedOptions o;
        o.type = parse_name<CalibrationType>(type);
        o.p = p;
        o.maximum = maximum;
        o.binning = parse_name<Binning>(binning);
        o.bins = bins;
        if (form) o.form = parse_name<BinnedForm>(*form);
        o.renormalize = renormalize;
        py::gil_scoped_release nogil;
        return binned_calibration_error(probs_in.view, labels_in.view, o);
      },
      docstring("The binned calibration error ECE^bin with the per-bin statistics behind reliability diagrams "
                "(ecekde::binned_calibration_error).",
                {ArgDoc("probs", "n x K probabilities (or n values P(y = 1)), float32/float64, read in place"),
                 ArgDoc("labels", "n class labels (int32/int64)"), ArgDoc(param::binned_type), ArgDoc(param::p),
                 ArgDoc(param::maximum), ArgDoc(param::binning), ArgDoc(param::bins, "None = Doane's formula"),
                 ArgDoc(param::form, "None = that default"), ArgDoc(param::renormalize)},
                "BinnedResult")
          .c_str(),
      py::arg("probs"), py::arg("labels"), py::kw_only(), arg(param::binned_type) = std::string(to_string(bd.type)),
      arg(param::p) = bd.p, arg(param::maximum) = bd.maximum,
      arg(param::binning) = std::string(to_string(bd.binning)), arg(param::bins) = bd.bins,
      arg(param::form) = py::none(),  // BinnedOptions{}.form is empty: chosen by the type
      arg(param::renormalize) = bd.renormalize);

  m.def(
      "doane_bins",
      [](py::array_t<double, py::array::c_style | py::array::forcecast> x) {
        return doane_bins(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
      },
      "Doane's number of bins for the scores x: ceil(1 + log2 n + log2(1 + |g1| / s_g1)) (ecekde::doane_bins).",
      py::arg("x"));

  const MmceOptions md{};
  m.def(
      "mmce",
      [](py::object probs, py::object labels, bool weighted, double kernel_width, bool gradient) {
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        py::gil_scoped_release nogil;
        return mmce(probs_in.view, labels_in.view,
                    {.weighted = weighted, .kernel_width = kernel_width, .gradient = gradient});
      },
      docstring("MMCE (Kumar, Sarawagi & Jain 2018) of the top-label confidences, with its gradients "
                "(ecekde::mmce).",
                {ArgDoc("probs", "n x K probabilities (K >= 2), float32/float64, read in place"),
                 ArgDoc("labels", "n class labels (int32/int64)"), ArgDoc(param::weighted),
                 ArgDoc(param::kernel_width), ArgDoc(param::gradient)},
                "MmceResult")
          .c_str(),
      py::arg("probs"), py::arg("labels"), py::kw_only(), arg(param::weighted) = md.weighted,
      arg(param::kernel_width) = md.kernel_width, arg(param::gradient) = md.gradient);

  const TemperatureOptions td{};
  m.def(
      "fit_temperature",
      [](py::object logits, py::object labels, double min_temperature, double max_temperature) {
        const ProbsInput logits_in = probs_input(logits, "logits");
        const LabelsInput labels_in = labels_input(labels);
        py::gil_scoped_release nogil;
        return fit_temperature(logits_in.view, labels_in.view,
                               {.min_temperature = min_temperature, .max_temperature = max_temperature});
      },
      docstring("Temperature scaling (Guo et al. 2017): the T > 0 minimising the mean NLL of softmax(logits / T) "
                "(ecekde::fit_temperature).",
                {ArgDoc("logits", "n x K logits or log-probabilities (float32/float64), read in place"),
                 ArgDoc("labels", "n class labels (int32/int64)"), ArgDoc(param::min_temperature),
                 ArgDoc(param::max_temperature)},
                "TemperatureFit")
          .c_str(),
      py::arg("logits"), py::arg("labels"), py::kw_only(), arg(param::min_temperature) = td.min_temperature,
      arg(param::max_temperature) = td.max_temperature);

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
