// Synthetic data with known calibration error, and the debiasing functions.
#include <span>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "arrays.hpp"
#include "docstrings.hpp"
#include "debias.hpp"
#include "ecekde/error.hpp"
#include "ecekde/synthetic.hpp"
#include "module.hpp"

namespace ecekde::python {

namespace {

namespace param = parameters;

using Values = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::span<const double> span_of(const Values& x) {
  return {x.data(), static_cast<std::size_t>(x.size())};
}

SyntheticModel model_of(std::size_t classes, double t1, double t2) {
  return {.classes = classes, .t1 = t1, .t2 = t2};
}

}  // namespace

void register_stats(py::module_& m) {
  const SyntheticModel sd{};
  m.def(
      "generate_synthetic",
      [](std::size_t n, std::size_t classes, double t1, double t2, std::uint64_t seed, int threads) {
        py::gil_scoped_release nogil;
        return generate_synthetic(model_of(classes, t1, t2), n, seed, threads);
      },
      docstring("n samples of the paper's synthetic model (Section 4): u uniform on the simplex, p1 = T_t1(u), "
                "y ~ Categorical(p1), f = T_t2(p1), with T_t(q) = softmax(log q / t) "
                "(ecekde::generate_synthetic).",
                {ArgDoc("n", "samples (>= 1)"), ArgDoc(param::classes), ArgDoc(param::t1), ArgDoc(param::t2),
                 ArgDoc(param::synthetic_seed), ArgDoc(param::threads)},
                "SyntheticData")
          .c_str(),
      py::arg("n"), py::kw_only(), arg(param::classes) = sd.classes, arg(param::t1) = sd.t1,
      arg(param::t2) = sd.t2, arg(param::synthetic_seed) = 0, arg(param::threads) = 0);

  const GroundTruthOptions gd{};
  m.def(
      "synthetic_ground_truth",
      [](std::size_t classes, double t1, double t2, double p, std::size_t canonical_samples,
         std::size_t inner_samples, std::size_t jackknife_groups, std::uint64_t seed, int threads) {
        const GroundTruthOptions o{.p = p, .canonical_samples = canonical_samples, .inner_samples = inner_samples,
                                   .jackknife_groups = jackknife_groups, .seed = seed, .threads = threads};
        py::gil_scoped_release nogil;
        return synthetic_ground_truth(model_of(classes, t1, t2), o);
      },
      docstring("The true canonical, marginal and top-label CE_p^p of the synthetic model "
                "(ecekde::synthetic_ground_truth).",
                {ArgDoc(param::classes), ArgDoc(param::t1), ArgDoc(param::t2), ArgDoc(param::p),
                 ArgDoc(param::canonical_samples), ArgDoc(param::inner_samples), ArgDoc(param::jackknife_groups),
                 ArgDoc(param::synthetic_seed), ArgDoc(param::threads)},
                "GroundTruth")
          .c_str(),
      py::kw_only(), arg(param::classes) = sd.classes, arg(param::t1) = sd.t1, arg(param::t2) = sd.t2,
      arg(param::p) = gd.p, arg(param::canonical_samples) = gd.canonical_samples,
      arg(param::inner_samples) = gd.inner_samples, arg(param::jackknife_groups) = gd.jackknife_groups,
      arg(param::synthetic_seed) = gd.seed, arg(param::threads) = gd.threads);

  m.def(
      "temperature_scale",
      [](const Values& q, double t) {
        std::vector<double> out(static_cast<std::size_t>(q.size()));
        temperature_scale(span_of(q), t, out);
        const auto size = static_cast<py::ssize_t>(out.size());
        return array_from(std::move(out), {size});
      },
      "T_t(q) = softmax(log q / t) of one probability vector q (ecekde::temperature_scale).", py::arg("q"),
      py::arg("t"));

  // The research helpers (ecekde::research, research/debias.hpp), in their own submodule.
  py::module_ research = m.def_submodule(
      "research", "Research helpers behind docs/validation.md: unbiased U-statistics and the debiased ratio "
                  "estimators of the paper's Appendices C and D (not the estimators' API).");
  // Unbiased U-statistics.
  research.def("unbiased_square_of_mean", [](const Values& x) { return unbiased_square_of_mean(span_of(x)); },
        "mu_X^2 unbiased: the mean of x_i x_j over i != j (n >= 2).", py::arg("x"));
  research.def("unbiased_product_of_means",
        [](const Values& x, const Values& y) { return unbiased_product_of_means(span_of(x), span_of(y)); },
        "mu_X mu_Y unbiased: the mean of x_i y_j over i != j (n >= 2).", py::arg("x"), py::arg("y"));
  research.def("unbiased_cube_of_mean", [](const Values& x) { return unbiased_cube_of_mean(span_of(x)); },
        "mu_X^3 unbiased: the mean of x_i x_j x_k over distinct i, j, k (n >= 3).", py::arg("x"));
  research.def("unbiased_fourth_power_of_mean", [](const Values& x) { return unbiased_fourth_power_of_mean(span_of(x)); },
        "mu_X^4 unbiased: the mean of x_i x_j x_k x_l over distinct indices (n >= 4).", py::arg("x"));
  research.def("unbiased_covariance",
        [](const Values& x, const Values& y) { return unbiased_covariance(span_of(x), span_of(y)); },
        "Cov(X, Y) with divisor n - 1 (n >= 2).", py::arg("x"), py::arg("y"));
  research.def("unbiased_third_comoment",
        [](const Values& x, const Values& y) { return unbiased_third_comoment(span_of(x), span_of(y)); },
        "E[(X - mu_X)^2 (Y - mu_Y)] unbiased (n >= 3).", py::arg("x"), py::arg("y"));

  // Ratio estimators.
  const std::string ratio_doc = docstring(
      "mu_Y / mu_X from i.i.d. pairs (x_i, y_i), bias-corrected as asked (ecekde::ratio_of_means).",
      {ArgDoc("x", "n values of the denominator's variable"), ArgDoc("y", "n values of the numerator's"),
       ArgDoc(param::debiasing)},
      "float");
  research.def(
      "ratio_of_means",
      [](const Values& x, const Values& y, std::string_view debiasing) {
        return ratio_of_means(span_of(x), span_of(y), parse_name<RatioDebiasing>(debiasing));
      },
      ratio_doc.c_str(), py::arg("x"), py::arg("y"), py::kw_only(), arg(param::debiasing) = "none");
  research.def(
      "ratio_of_squared_means",
      [](const Values& x, const Values& y, std::string_view debiasing) {
        return ratio_of_squared_means(span_of(x), span_of(y), parse_name<RatioDebiasing>(debiasing));
      },
      docstring("mu_Y^2 / mu_X^2 from i.i.d. pairs (x_i, y_i), bias-corrected as asked "
                "(ecekde::ratio_of_squared_means).",
                {ArgDoc("x", "n values of the denominator's variable"), ArgDoc("y", "n values of the numerator's"),
                 ArgDoc(param::debiasing)},
                "float")
          .c_str(),
      py::arg("x"), py::arg("y"), py::kw_only(), arg(param::debiasing) = "none");
  research.def(
      "sharpness_at",
      [](const Values& kernel, py::object labels, std::string_view debiasing) {
        const LabelsInput labels_in = labels_input(labels);
        return sharpness_at(span_of(kernel), labels_in.view, parse_name<RatioDebiasing>(debiasing));
      },
      docstring("One summand of the paper's Eq. 7: the estimate of E[y | f(x)]^2 at a location f_j from the "
                "kernel values k(f_j; f_i) and binary labels of the other samples (ecekde::sharpness_at).",
                {ArgDoc("kernel", "kernel values k(f_j; f_i), finite and >= 0"),
                 ArgDoc("labels", "their labels in {0, 1}"), ArgDoc(param::debiasing)},
                "float")
          .c_str(),
      py::arg("kernel"), py::arg("labels"), py::kw_only(), arg(param::debiasing) = "none");
}

}  // namespace ecekde::python
