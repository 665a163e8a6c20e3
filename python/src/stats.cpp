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
#include "ecekde/options.hpp"
#include "module.hpp"
#include "option_kwargs.hpp"

namespace ecekde::python {

namespace {

constexpr std::string_view kDebiasingHelp =
    "Bias correction of the ratio: none, paper (the paper's second-order scheme, Appendices C and D) or "
    "complete (every O(1/n) and O(1/n^2) term)";

using Values = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::span<const double> span_of(const Values& x) {
  return {x.data(), static_cast<std::size_t>(x.size())};
}

}  // namespace

void register_stats(py::module_& m) {
  // generate_synthetic reads the model's options and the seed and threads of the ground truth's.
  const std::vector<std::string_view> run_options{"seed", "threads"};
  keyword_function("generate_synthetic", {"n"}, [run_options](py::list& out) {
    append_option_table(out, options::synthetic_model_options(), options::uses::all);
    append_option_table(out, options::ground_truth_options(), options::uses::all, run_options);
  });
  std::vector<ArgDoc> generate_docs{ArgDoc("n", "samples (>= 1)")};
  add_option_docs(generate_docs, options::synthetic_model_options(), options::uses::all);
  add_option_docs(generate_docs, options::ground_truth_options(), options::uses::all, run_options);
  m.def(
      "generate_synthetic",
      [run_options](std::size_t n, py::kwargs kwargs) {
        py::dict left(kwargs);
        SyntheticModel model;
        GroundTruthOptions run;
        take_options(options::synthetic_model_options(), options::uses::all, model, left);
        take_options(options::ground_truth_options(), options::uses::all, run, left, run_options);
        refuse_unknown("generate_synthetic", left);
        py::gil_scoped_release nogil;
        return generate_synthetic(model, n, run.seed, run.threads);
      },
      docstring("n samples of the paper's synthetic model (Section 4): u uniform on the simplex, p1 = T_t1(u), "
                "y ~ Categorical(p1), f = T_t2(p1), with T_t(q) = softmax(log q / t) "
                "(ecekde::generate_synthetic).",
                generate_docs, "SyntheticData")
          .c_str(),
      py::arg("n"));

  keyword_function("synthetic_ground_truth", {}, [](py::list& out) {
    append_option_table(out, options::synthetic_model_options(), options::uses::all);
    append_option_table(out, options::ground_truth_options(), options::uses::all);
  });
  std::vector<ArgDoc> truth_docs;
  add_option_docs(truth_docs, options::synthetic_model_options(), options::uses::all);
  add_option_docs(truth_docs, options::ground_truth_options(), options::uses::all);
  m.def(
      "synthetic_ground_truth",
      [](py::kwargs kwargs) {
        py::dict left(kwargs);
        SyntheticModel model;
        GroundTruthOptions o;
        take_options(options::synthetic_model_options(), options::uses::all, model, left);
        take_options(options::ground_truth_options(), options::uses::all, o, left);
        refuse_unknown("synthetic_ground_truth", left);
        py::gil_scoped_release nogil;
        return synthetic_ground_truth(model, o);
      },
      docstring("The true canonical, marginal and top-label CE_p^p of the synthetic model "
                "(ecekde::synthetic_ground_truth).",
                truth_docs, "GroundTruth")
          .c_str());

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
       ArgDoc("debiasing", kDebiasingHelp)},
      "float");
  research.def(
      "ratio_of_means",
      [](const Values& x, const Values& y, std::string_view debiasing) {
        return ratio_of_means(span_of(x), span_of(y), parse_name<RatioDebiasing>(debiasing));
      },
      ratio_doc.c_str(), py::arg("x"), py::arg("y"), py::kw_only(), py::arg("debiasing") = "none");
  research.def(
      "ratio_of_squared_means",
      [](const Values& x, const Values& y, std::string_view debiasing) {
        return ratio_of_squared_means(span_of(x), span_of(y), parse_name<RatioDebiasing>(debiasing));
      },
      docstring("mu_Y^2 / mu_X^2 from i.i.d. pairs (x_i, y_i), bias-corrected as asked "
                "(ecekde::ratio_of_squared_means).",
                {ArgDoc("x", "n values of the denominator's variable"), ArgDoc("y", "n values of the numerator's"),
                 ArgDoc("debiasing", kDebiasingHelp)},
                "float")
          .c_str(),
      py::arg("x"), py::arg("y"), py::kw_only(), py::arg("debiasing") = "none");
  research.def(
      "sharpness_at",
      [](const Values& kernel, py::object labels, std::string_view debiasing) {
        const LabelsInput labels_in = labels_input(labels);
        return sharpness_at(span_of(kernel), labels_in.view, parse_name<RatioDebiasing>(debiasing));
      },
      docstring("One summand of the paper's Eq. 7: the estimate of E[y | f(x)]^2 at a location f_j from the "
                "kernel values k(f_j; f_i) and binary labels of the other samples (ecekde::sharpness_at).",
                {ArgDoc("kernel", "kernel values k(f_j; f_i), finite and >= 0"),
                 ArgDoc("labels", "their labels in {0, 1}"), ArgDoc("debiasing", kDebiasingHelp)},
                "float")
          .c_str(),
      py::arg("kernel"), py::arg("labels"), py::kw_only(), py::arg("debiasing") = "none");
}

}  // namespace ecekde::python
