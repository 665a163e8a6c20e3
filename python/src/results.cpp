#include "results.hpp"

#include <string>

#include <pybind11/stl.h>

#include "arrays.hpp"
#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/kernel_regression.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/reliability.hpp"
#include "ecekde/synthetic.hpp"
#include "ecekde/temperature.hpp"

namespace ecekde::python {

namespace {

py::object plain(py::handle value);

// The fields of a result object as a dict, in declaration order; None (a field that does not apply) is
// left out, as in the CLI's JSON.
py::dict to_dict(py::handle self) {
  py::dict d;
  for (py::handle name : py::type::handle_of(self).attr("_fields")) {
    py::object v = self.attr(name);
    if (!v.is_none()) d[name] = plain(v);
  }
  return d;
}

// JSON-like: result objects become dicts, arrays and sequences lists.
py::object plain(py::handle value) {
  if (py::hasattr(py::type::handle_of(value), "_fields")) return to_dict(value);
  if (py::isinstance<py::array>(value)) return value.attr("tolist")();
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    py::list out;
    for (py::handle item : value) out.append(plain(item));
    return out;
  }
  return py::reinterpret_borrow<py::object>(value);
}

// "Result(type='canonical', p=1.0, ...)": the scalar fields; arrays and nested results as '...'.
std::string describe(py::handle self) {
  std::string text = py::type::handle_of(self).attr("__name__").cast<std::string>() + "(";
  bool first = true;
  for (py::handle name : py::type::handle_of(self).attr("_fields")) {
    py::object v = self.attr(name);
    if (v.is_none()) continue;
    const bool scalar = py::isinstance<py::str>(v) || py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v);
    text += (first ? "" : ", ") + name.cast<std::string>() + "=" + (scalar ? py::repr(v).cast<std::string>() : "...");
    first = false;
  }
  return text + ")";
}

// A result class: read-only properties registered through field(), whose names form the class's
// _fields (the order of to_dict()).
template <class T>
class ResultClass {
 public:
  ResultClass(py::module_& m, const char* name, const char* doc) : cls_(m, name, doc) {}

  template <class Getter>
  ResultClass& field(const char* name, Getter&& getter, const char* doc) {
    cls_.def_property_readonly(name, std::forward<Getter>(getter), doc);
    names_.append(name);
    return *this;
  }

  ~ResultClass() {
    cls_.attr("_fields") = py::tuple(names_);
    cls_.def("to_dict", [](py::handle self) { return to_dict(self); },
             "The fields as a dict with the structure of the CLI's JSON: nested results as dicts, arrays as "
             "lists, fields that do not apply (None) left out.");
    cls_.def("__repr__", [](py::handle self) { return describe(self); });
  }
  ResultClass(const ResultClass&) = delete;
  ResultClass& operator=(const ResultClass&) = delete;

 private:
  py::class_<T> cls_;
  py::list names_;
};

// Getters for fields that are arrays over the result's own memory (no copy; the array keeps the result
// alive).
template <class T, class V>
auto vector_field(const std::vector<V> T::*member) {
  return [member](py::object self) { return array_over(self.cast<const T&>().*member, self); };
}

void register_kde_results(py::module_& m) {
  ResultClass<BandwidthSelection>(m, "BandwidthSelection", "An automatic bandwidth selection.")
      .field("criterion", [](const BandwidthSelection& s) { return std::string(to_string(s.criterion)); },
             "'loo-likelihood' or 'reference'")
      .field("grid", vector_field(&BandwidthSelection::grid), "candidate bandwidths, increasing")
      .field("score", vector_field(&BandwidthSelection::score), "criterion per grid point (mean per sample)")
      .field("refined_grid", vector_field(&BandwidthSelection::refined_grid),
             "bandwidths evaluated by the refinement, in order")
      .field("refined_score", vector_field(&BandwidthSelection::refined_score), "their criterion values")
      .field("chosen", [](const BandwidthSelection& s) { return s.bandwidth; }, "the chosen bandwidth h")
      .field("chosen_score", [](const BandwidthSelection& s) { return s.best_score; }, "the criterion at h")
      .field("rows", [](const BandwidthSelection& s) { return s.rows; },
             "rows the criterion was averaged over (n, or max_rows)")
      .field("criterion_choice",
             [](const BandwidthSelection& s) -> py::object {
               return s.criterion_choice > 0 ? py::cast(s.criterion_choice) : py::none();
             },
             "crossfit at p = 2: the criterion's own best grid point where the estimate took a narrower one for "
             "CE_2^2 (chosen: the narrowest whose median row has 100 effective neighbours, its correction kept "
             "whole, taken where it reads significantly more); None where it took the criterion's");

  ResultClass<Bounds>(m, "Bounds", "A confidence interval of an estimate.")
      .field("level", [](const Bounds& b) { return b.level; }, "probability of the interval")
      .field("lower", [](const Bounds& b) { return b.lower; }, "lower end")
      .field("upper", [](const Bounds& b) { return b.upper; }, "upper end");

  ResultClass<Result>(m, "Result", "One calibration error estimate (the fields of one result of `ecekde estimate --json`).")
      .field("estimator", [](const Result& r) { return std::string(to_string(r.estimator)); },
             "'crossfit' or 'paper': which estimator produced the numbers")
      .field("type", [](const Result& r) { return std::string(to_string(r.type)); },
             "'canonical', 'marginal', 'top-label' or 'binary'")
      .field("p", [](const Result& r) { return r.p; }, "order of the norm")
      .field("bandwidth", [](const Result& r) { return r.bandwidth; }, "the bandwidth h used")
      .field("ce", [](const Result& r) { return r.ce; }, "CE_p = ce_pow_p ** (1 / p)")
      .field("ce_pow_p", [](const Result& r) { return r.ce_pow_p; }, "CE_p^p (what the authors' code returns)")
      .field("n", [](const Result& r) { return r.n; }, "samples")
      .field("k", [](const Result& r) { return r.k; }, "columns of the input (1 for one-column binary input)")
      .field("bandwidth_rule", [](const Result& r) { return r.selection ? "auto" : "fixed"; },
             "'auto' (chosen by bandwidth selection) or 'fixed'")
      .field("bandwidth_selection", [](const Result& r) -> const std::optional<BandwidthSelection>& {
               return r.selection;
             },
             "the BandwidthSelection when the bandwidth was automatic, else None")
      .field("class_ce_pow_p",
             [](py::object self) -> py::object {
               const Result& r = self.cast<const Result&>();
               if (r.type != CalibrationType::marginal) return py::none();
               return array_over(r.class_ce_pow_p, self);
             },
             "marginal only (else None): each class's contribution to ce_pow_p")
      .field("standard_error",
             [](const Result& r) -> std::optional<double> {
               if (!r.ce_interval) return std::nullopt;
               return r.standard_error;
             },
             "crossfit: standard error of ce_pow_p (None for the paper's estimator)")
      .field("ce_pow_p_interval", [](const Result& r) { return r.ce_pow_p_interval; },
             "crossfit: interval of CE_p^p (Bounds; None for the paper's estimator)")
      .field("ce_interval", [](const Result& r) { return r.ce_interval; },
             "crossfit: interval of CE_p (Bounds; None for the paper's estimator)")
      .field("pilot",
             [](const Result& r) -> std::optional<std::string> {
               if (r.pilot.empty()) return std::nullopt;
               return r.pilot;
             },
             "crossfit: the pilot map it kept, 'structured', 'full-matrix', 'top-class-biases', 'class-biases' or 'trees' (canonical), "
             "'beta', 'beta-step' "
             "(one-dimensional: Beta with a jump), 'pooled-beta' "
             "(marginal: one map for every class) or 'pooled-intercepts' (marginal: that map plus an intercept per class) "
             "(None for the paper's estimator)")
      .field("warnings",
             [](const Result& r) -> std::optional<std::vector<std::string>> {
               if (r.estimator == Estimator::paper && r.warnings.empty()) return std::nullopt;
               return r.warnings;
             },
             "why the figure should not be trusted, in words (empty when nothing is known to be wrong; None for "
             "the paper's estimator unless it has one: precision float at a bandwidth below 0.002)")
      .field("excluded_rows",
             [](const Result& r) -> std::optional<std::size_t> {
               if (r.excluded_rows == 0) return std::nullopt;
               return r.excluded_rows;
             },
             "the debiased form only: rows left out of the mean (None when no row was left out)")
      .field("averaged_rows",
             [](const Result& r) -> std::optional<std::size_t> {
               if (r.averaged_rows == 0 || r.averaged_rows == r.n) return std::nullopt;
               return r.averaged_rows;
             },
             "crossfit: the rows its row mean averaged over when fewer than n (a random subset, option mean_rows; "
             "the standard error includes the subsampling); None when every row");

  ResultClass<Gradient>(m, "GradientResult", "An estimate and its gradient with respect to the probabilities.")
      .field("result", [](const Gradient& g) -> const Result& { return g.value.result; }, "the Result")
      .field("grad_ce_pow_p",
             [](py::object self) {
               const Gradient& g = self.cast<const Gradient&>();
               return array_over(g.value.grad_ce_pow_p, g.shape, self);
             },
             "d CE_p^p / d probs, shaped like probs")
      .field("grad_ce",
             [](py::object self) {
               const Gradient& g = self.cast<const Gradient&>();
               return array_over(g.value.grad_ce, g.shape, self);
             },
             "d CE_p / d probs, shaped like probs (0 where CE_p^p = 0 and p > 1)");

  ResultClass<Interval>(m, "Interval", "A percentile bootstrap interval.")
      .field("estimate", [](const Interval& i) { return i.estimate; }, "the statistic on the data itself")
      .field("lower", [](const Interval& i) { return i.lower; }, "lower end (type-7 quantile of the replicates)")
      .field("upper", [](const Interval& i) { return i.upper; }, "upper end")
      .field("level", [](const Interval& i) { return i.level; }, "central probability of the interval")
      .field("replicates", vector_field(&Interval::replicates), "the statistic on each resample, in order");

  ResultClass<KdeBootstrap>(m, "KdeBootstrap", "ECE^KDE with bootstrap intervals for CE_p^p and CE_p.")
      .field("result", [](const KdeBootstrap& b) -> const Result& { return b.result; }, "the estimate")
      .field("ce_pow_p", [](const KdeBootstrap& b) -> const Interval& { return b.ce_pow_p; }, "interval of CE_p^p")
      .field("ce", [](const KdeBootstrap& b) -> const Interval& { return b.ce; }, "interval of CE_p");

  ResultClass<CalibrationTestResult>(m, "CalibrationTestResult", "A consistency-resampling calibration test.")
      .field("statistic", [](const CalibrationTestResult& t) { return t.statistic; }, "on the observed labels")
      .field("p_value", [](const CalibrationTestResult& t) { return t.p_value; },
             "(1 + #{null >= statistic}) / (B + 1)")
      .field("null_values", vector_field(&CalibrationTestResult::null_values),
             "the statistic on each relabelled copy, in order")
      .field("bandwidth", [](const CalibrationTestResult& t) { return t.bandwidth; },
             "ECE^KDE only: the bandwidth used for every copy (0 otherwise)");

  ResultClass<KernelRegression>(m, "KernelRegression", "The kernel estimates of ECE^KDE at query points.")
      .field("type", [](const KernelRegression& r) { return std::string(to_string(r.type)); }, "calibration type")
      .field("bandwidth", [](const KernelRegression& r) { return r.bandwidth; }, "the bandwidth h used")
      .field("queries", [](const KernelRegression& r) { return r.queries; }, "number of query points Q")
      .field("columns", [](const KernelRegression& r) { return r.columns; },
             "columns of the estimates: K for canonical and marginal, 1 for top-label and binary")
      .field("log_density",
             [](py::object self) {
               const KernelRegression& r = self.cast<const KernelRegression&>();
               return array_over(r.log_density, {py::ssize_t(r.queries), py::ssize_t(r.columns)}, self);
             },
             "Q x columns: log (1/n) sum_i k_h(x_q; x_i) (canonical: the same value in every column)")
      .field("expectation",
             [](py::object self) {
               const KernelRegression& r = self.cast<const KernelRegression&>();
               return array_over(r.expectation, {py::ssize_t(r.queries), py::ssize_t(r.columns)}, self);
             },
             "Q x columns: the kernel estimate of E[y | f = x_q] (per column as described there)");
}

void register_metric_results(py::module_& m) {
  ResultClass<ReliabilityBin>(m, "ReliabilityBin", "One occupied bin of a reliability diagram.")
      .field("index", [](const ReliabilityBin& b) { return b.index; }, "bin number in [0, B)")
      .field("lower", [](const ReliabilityBin& b) { return b.lower; }, "the bin holds scores in [lower, upper)")
      .field("upper", [](const ReliabilityBin& b) { return b.upper; }, "(the last bin also holds upper)")
      .field("count", [](const ReliabilityBin& b) { return b.count; }, "samples in the bin")
      .field("mean_confidence", [](const ReliabilityBin& b) { return b.mean_confidence; }, "their mean score")
      .field("mean_label", [](const ReliabilityBin& b) { return b.mean_label; },
             "fraction of them labelled positive (accuracy, for top-label)");

  ResultClass<ReliabilityPanel>(m, "ReliabilityPanel", "One reliability diagram, as every front end draws it.")
      .field("bin_count", [](const ReliabilityPanel& p) { return p.bin_count; }, "bins of the binning")
      .field("bins", [](const ReliabilityPanel& p) { return p.bins; }, "the occupied ReliabilityBins, increasing")
      .field("lower", vector_field(&ReliabilityPanel::lower), "Wilson interval of each bin's label frequency")
      .field("upper", vector_field(&ReliabilityPanel::upper), "(upper ends)")
      .field("curve_x", vector_field(&ReliabilityPanel::curve_x), "scores of the curve (observed range)")
      .field("curve_y", vector_field(&ReliabilityPanel::curve_y), "the paper's kernel estimate of E[y | score]")
      .field("ece_bin", [](const ReliabilityPanel& p) { return p.ece_bin; }, "binned CE_p^p (marginal: class term)")
      .field("ece_kde", [](const ReliabilityPanel& p) { return p.ece_kde; },
             "the paper's ECE^KDE CE_p^p at the figure's bandwidth (marginal: class term)");

  ResultClass<ReliabilityFigure>(m, "ReliabilityFigure", "What the reliability diagram(s) of a type show.")
      .field("type", [](const ReliabilityFigure& f) { return std::string(to_string(f.type)); }, "calibration type")
      .field("p", [](const ReliabilityFigure& f) { return f.p; }, "order of the error terms")
      .field("bandwidth", [](const ReliabilityFigure& f) { return f.bandwidth; }, "the curve's h")
      .field("level", [](const ReliabilityFigure& f) { return f.level; }, "probability of the Wilson intervals")
      .field("panels", [](const ReliabilityFigure& f) { return f.panels; }, "one ReliabilityPanel per diagram");

  ResultClass<SimplexCell>(m, "SimplexCell", "One occupied cell of the canonical binned grid.")
      .field("bins", [](const SimplexCell& c) { return c.bins; }, "bin number per class")
      .field("count", [](const SimplexCell& c) { return c.count; }, "samples in the cell")
      .field("mean_prediction", vector_field(&SimplexCell::mean_prediction), "their mean probability vector")
      .field("mean_label", vector_field(&SimplexCell::mean_label), "their label frequencies");

  ResultClass<BinnedResult>(m, "BinnedResult", "A binned calibration error and the bins behind it.")
      .field("type", [](const BinnedResult& r) { return std::string(to_string(r.type)); }, "calibration type")
      .field("binning", [](const BinnedResult& r) { return std::string(to_string(r.binning)); },
             "'equal-width' or 'equal-mass'")
      .field("form", [](const BinnedResult& r) { return std::string(to_string(r.form)); },
             "'per-bin', 'per-sample' or 'debiased'")
      .field("p", [](const BinnedResult& r) { return r.p; }, "order of the norm")
      .field("maximum", [](const BinnedResult& r) { return r.maximum; }, "whether this is the MCE")
      .field("ce_pow_p", [](const BinnedResult& r) { return r.ce_pow_p; },
             "estimate of CE_p^p (the MCE when maximum; can be negative when debiased)")
      .field("ce", [](const BinnedResult& r) { return r.ce; }, "ce_pow_p ** (1 / p) (debiased: of max(., 0))")
      .field("n", [](const BinnedResult& r) { return r.n; }, "samples")
      .field("k", [](const BinnedResult& r) { return r.k; }, "columns of the input")
      .field("edges",
             [](py::object self) {
               py::list out;
               for (const auto& e : self.cast<const BinnedResult&>().edges) out.append(array_over(e, self));
               return out;
             },
             "bin edges per binned coordinate (arrays of B + 1 values)")
      .field("diagrams", [](const BinnedResult& r) { return r.diagrams; },
             "per one-dimensional problem, the occupied ReliabilityBins (empty for canonical)")
      .field("cells", [](const BinnedResult& r) { return r.cells; }, "canonical only: the occupied SimplexCells")
      .field("class_ce_pow_p",
             [](py::object self) -> py::object {
               const BinnedResult& r = self.cast<const BinnedResult&>();
               if (r.type != CalibrationType::marginal) return py::none();
               return array_over(r.class_ce_pow_p, self);
             },
             "marginal only (else None): each class's contribution");

  ResultClass<SimplexFigure>(m, "SimplexFigure", "What the simplex view of three classes shows.")
      .field("p", [](const SimplexFigure& f) { return f.p; }, "order of the error terms")
      .field("bandwidth", [](const SimplexFigure& f) { return f.bandwidth; }, "the Dirichlet kernel's h")
      .field("binned", [](const SimplexFigure& f) { return f.binned; },
             "the canonical BinnedResult on equal-width bins: its cells are the histogram")
      .field("ece_kde", [](const SimplexFigure& f) { return f.ece_kde; },
             "the paper's canonical ECE^KDE CE_p^p at the figure's bandwidth")
      .field("grid", [](const SimplexFigure& f) { return f.grid; }, "segments per side of the density's grid")
      .field("points",
             [](py::object self) {
               const SimplexFigure& f = self.cast<const SimplexFigure&>();
               return py::array_t<double>({py::ssize_t(f.points.size()), py::ssize_t(3)}, f.points.front().data(), self);
             },
             "grid**2 x 3: the centroids of the grid's triangles (ecekde::simplex_grid's order)")
      .field("log_density", vector_field(&SimplexFigure::log_density),
             "log of the kernel density of the predictions at each point, per unit of (f_0, f_1) area");

  ResultClass<MmceResult>(m, "MmceResult", "MMCE and its gradients.")
      .field("mmce_squared", [](const MmceResult& r) { return r.mmce_squared; }, "MMCE^2 (or MMCE_w^2)")
      .field("mmce", [](const MmceResult& r) { return r.mmce; }, "sqrt(max(mmce_squared, 0))")
      .field("n", [](const MmceResult& r) { return r.n; }, "samples")
      .field("k", [](const MmceResult& r) { return r.k; }, "classes")
      .field("correct", [](const MmceResult& r) { return r.correct; }, "samples whose argmax equals the label")
      .field("gradient",
             [](py::object self) -> py::object {
               const MmceResult& r = self.cast<const MmceResult&>();
               if (r.gradient.empty()) return py::none();
               return array_over(r.gradient, {py::ssize_t(r.n), py::ssize_t(r.k)}, self);
             },
             "d mmce / d probs (n x K), None when not computed")
      .field("gradient_squared",
             [](py::object self) -> py::object {
               const MmceResult& r = self.cast<const MmceResult&>();
               if (r.gradient_squared.empty()) return py::none();
               return array_over(r.gradient_squared, {py::ssize_t(r.n), py::ssize_t(r.k)}, self);
             },
             "d mmce_squared / d probs (n x K), None when not computed");

  ResultClass<TemperatureFit>(m, "TemperatureFit", "A fitted temperature.")
      .field("temperature", [](const TemperatureFit& f) { return f.temperature; }, "the fitted T")
      .field("nll", [](const TemperatureFit& f) { return f.nll; }, "mean NLL at T")
      .field("nll_at_one", [](const TemperatureFit& f) { return f.nll_at_one; }, "mean NLL at T = 1")
      .field("iterations", [](const TemperatureFit& f) { return f.iterations; }, "NLL evaluations")
      .field("at_bound", [](const TemperatureFit& f) { return f.at_bound; },
             "the minimum lies at (or beyond) an end of the search interval");
}

void register_synthetic(py::module_& m) {
  ResultClass<SyntheticData>(m, "SyntheticData", "Samples of the synthetic model with known calibration error.")
      .field("n", [](const SyntheticData& d) { return d.n; }, "samples")
      .field("k", [](const SyntheticData& d) { return d.k; }, "classes")
      .field("probs",
             [](py::object self) {
               const SyntheticData& d = self.cast<const SyntheticData&>();
               return array_over(d.probs, {py::ssize_t(d.n), py::ssize_t(d.k)}, self);
             },
             "n x K predictions f")
      .field("calibrated",
             [](py::object self) {
               const SyntheticData& d = self.cast<const SyntheticData&>();
               return array_over(d.calibrated, {py::ssize_t(d.n), py::ssize_t(d.k)}, self);
             },
             "n x K: p1 = E[y | f]")
      .field("labels", vector_field(&SyntheticData::labels), "n labels y in [0, K) (int64)");

  ResultClass<TruthValue>(m, "TruthValue", "A computed true calibration error and how far it may be off.")
      .field("value", [](const TruthValue& t) { return t.value; }, "the truth")
      .field("standard_error", [](const TruthValue& t) { return t.standard_error; }, "Monte Carlo standard error")
      .field("quadrature_error", [](const TruthValue& t) { return t.quadrature_error; },
             "estimated error of the 1-D quadrature");

  ResultClass<GroundTruth>(m, "GroundTruth", "The true calibration errors of a synthetic model.")
      .field("p", [](const GroundTruth& g) { return g.p; }, "order of the norm")
      .field("canonical", [](const GroundTruth& g) -> const TruthValue& { return g.canonical; }, "canonical CE_p^p")
      .field("marginal", [](const GroundTruth& g) -> const TruthValue& { return g.marginal; }, "marginal CE_p^p")
      .field("top_label", [](const GroundTruth& g) -> const TruthValue& { return g.top_label; },
             "top-label CE_p^p");
}

}  // namespace

void register_results(py::module_& m) {
  register_kde_results(m);
  register_metric_results(m);
  register_synthetic(m);
}

}  // namespace ecekde::python
