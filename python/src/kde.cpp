// ECE^KDE: estimate, bandwidth selection, gradient, bootstrap intervals and the calibration test, and the
// generic bootstrap / consistency-resampling test over a Python statistic.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "arrays.hpp"
#include "docstrings.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/kernel_regression.hpp"
#include "module.hpp"
#include "results.hpp"

namespace ecekde::python {

namespace {

namespace param = parameters;

EstimateOptions estimate_options(std::string_view type, double p, std::optional<double> bandwidth,
                                 std::string_view criterion, std::optional<std::vector<double>> grid, bool refine,
                                 std::size_t max_rows, std::string_view form, bool renormalize, int threads,
                                 std::size_t block_size, std::string isa) {
  EstimateOptions o;
  o.type = parse_calibration_type(type);
  o.p = p;
  o.bandwidth = bandwidth;
  o.bandwidth_selection.criterion = parse_bandwidth_criterion(criterion);
  if (grid) o.bandwidth_selection.grid = std::move(*grid);
  o.bandwidth_selection.refine = refine;
  o.bandwidth_selection.max_rows = max_rows;
  o.form = parse_kde_form(form);
  o.renormalize = renormalize;
  o.execution = {.threads = threads, .block_size = block_size, .isa = std::move(isa)};
  return o;
}

constexpr std::string_view kProbsDoc =
    "n x K predicted probabilities (float32 or float64, any memory order; read in place), or a 1-D array of "
    "n values P(y = 1)";
constexpr std::string_view kLabelsDoc = "n class labels in [0, K) (int32 or int64; 0/1 for one column)";

// The documentation of probs, labels and the estimate options, shared by every ECE^KDE function, then `extra`.
std::vector<ArgDoc> kde_arg_docs(std::initializer_list<ArgDoc> extra = {}) {
  std::vector<ArgDoc> docs{ArgDoc("probs", kProbsDoc),
                           ArgDoc("labels", kLabelsDoc),
                           ArgDoc(param::type),
                           ArgDoc(param::p),
                           ArgDoc(param::bandwidth, "None = automatic"),
                           ArgDoc(param::criterion),
                           ArgDoc(param::grid, "None = the paper's grid"),
                           ArgDoc(param::refine),
                           ArgDoc(param::max_rows),
                           ArgDoc(param::kde_form),
                           ArgDoc(param::renormalize),
                           ArgDoc(param::threads),
                           ArgDoc(param::block_size),
                           ArgDoc(param::isa, "'' = the best")};
  docs.insert(docs.end(), extra);
  return docs;
}

// Defines `name`(probs, labels, *, <estimate options>, <extra keyword arguments>) calling
// run(probs, labels, options, extra...). The estimate options' defaults are those of EstimateOptions{}.
template <class... Extra, class Run, class... ExtraArgs>
void def_kde(py::module_& m, const char* name, const std::string& doc, Run run, ExtraArgs&&... extra_args) {
  const EstimateOptions d{};
  m.def(
      name,
      [run](py::object probs, py::object labels, std::string_view type, double p, std::optional<double> bandwidth,
            std::string_view criterion, std::optional<std::vector<double>> grid, bool refine, std::size_t max_rows,
            std::string_view form, bool renormalize, int threads, std::size_t block_size, std::string isa,
            Extra... extra) {
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        const EstimateOptions o = estimate_options(type, p, bandwidth, criterion, std::move(grid), refine, max_rows,
                                                   form, renormalize, threads, block_size, std::move(isa));
        return run(probs_in, labels_in, o, extra...);
      },
      doc.c_str(), py::arg("probs"), py::arg("labels"), py::kw_only(),
      arg(param::type) = std::string(to_string(d.type)), arg(param::p) = d.p,
      arg(param::bandwidth) = d.bandwidth,
      arg(param::criterion) = std::string(to_string(d.bandwidth_selection.criterion)),
      arg(param::grid) = py::none(),  // None: EstimateOptions{}'s empty grid, i.e. the paper's
      arg(param::refine) = d.bandwidth_selection.refine, arg(param::max_rows) = d.bandwidth_selection.max_rows,
      arg(param::kde_form) = std::string(to_string(d.form)), arg(param::renormalize) = d.renormalize, arg(param::threads) = d.execution.threads,
      arg(param::block_size) = d.execution.block_size, arg(param::isa) = d.execution.isa,
      std::forward<ExtraArgs>(extra_args)...);
}

BootstrapOptions bootstrap_options(std::size_t replicates, double level, std::uint64_t seed,
                                   std::string_view copies) {
  return {.replicates = replicates, .level = level, .seed = seed, .copies = parse_bootstrap_copies(copies)};
}

// A NumPy copy of labels the core made (the caller's own labels are passed as they are).
py::object labels_object(LabelsView labels, const LabelsInput& original) {
  if (labels.data() == original.view.data()) return original.array;
  py::array_t<std::int64_t> out(static_cast<py::ssize_t>(labels.size()));
  for (std::size_t i = 0; i < labels.size(); ++i) out.mutable_at(static_cast<py::ssize_t>(i)) = labels[i];
  return out;
}

}  // namespace

void register_kde(py::module_& m) {
  def_kde<std::string_view, double>(m, "estimate",
          docstring("The L_p calibration error of `probs` against `labels` by the chosen estimator, the "
                    "cross-fit estimator unless told otherwise (ecekde::estimate; the numbers of "
                    "`ecekde estimate --json`).",
                    kde_arg_docs({ArgDoc(param::estimator), ArgDoc(param::estimate_level)}),
                    "Result"),
          [](const ProbsInput& probs, const LabelsInput& labels, EstimateOptions o, std::string_view estimator,
             double level) {
            o.estimator = parse_estimator(estimator);
            o.level = level;
            py::gil_scoped_release nogil;
            return estimate(probs.view, labels.view, o);
          },
          arg(param::estimator) = std::string(to_string(EstimateOptions{}.estimator)),
          arg(param::estimate_level) = EstimateOptions{}.level);

  def_kde(m, "estimate_with_gradient",
          docstring("estimate() and its analytic gradient with respect to every entry of `probs` (the bandwidth "
                    "held constant; ecekde::estimate_with_gradient).",
                    kde_arg_docs(),
                    "GradientResult (gradients shaped like probs)"),
          [](const ProbsInput& probs, const LabelsInput& labels, const EstimateOptions& o) {
            Gradient g;
            g.shape.assign(probs.array.shape(), probs.array.shape() + probs.array.ndim());
            py::gil_scoped_release nogil;
            g.value = estimate_with_gradient(probs.view, labels.view, o);
            return g;
          });

  def_kde<py::object>(
      m, "kernel_regression",
      docstring("The kernel estimates behind ECE^KDE read at query points, using every sample: the log density "
                "of the predictions and the estimate of E[y | f = x] (ecekde::kernel_regression). canonical: "
                "queries are Q x K points on the simplex; marginal, top-label, binary: Q scores in [0, 1] (shape "
                "(Q,) or (Q, 1)), and column c of the result belongs to class c (marginal), to the top label's "
                "correctness (top-label: the smooth reliability curve) or to y = 1 (binary).",
                kde_arg_docs({ArgDoc("queries", "where to read the estimates (float32/float64)")}),
                "KernelRegression"),
      [](const ProbsInput& probs, const LabelsInput& labels, const EstimateOptions& o, py::object queries) {
        const ProbsInput queries_in = probs_input(queries, "queries");
        py::gil_scoped_release nogil;
        return kernel_regression(probs.view, labels.view, queries_in.view, o);
      },
      py::arg("queries"));

  const BootstrapOptions b{};
  def_kde<std::size_t, double, std::uint64_t, std::string_view>(
      m, "bootstrap_kde",
      docstring("ECE^KDE with percentile bootstrap intervals for CE_p^p and CE_p, all replicates in one sweep; "
                "the bandwidth is fixed across replicates (ecekde::bootstrap_kde).",
                kde_arg_docs({ArgDoc(param::bootstrap_replicates), ArgDoc(param::level),
                              ArgDoc(param::bootstrap_seed), ArgDoc(param::copies)}),
                "KdeBootstrap"),
      [](const ProbsInput& probs, const LabelsInput& labels, const EstimateOptions& o, std::size_t replicates,
         double level, std::uint64_t seed, std::string_view copies) {
        const BootstrapOptions bo = bootstrap_options(replicates, level, seed, copies);
        py::gil_scoped_release nogil;
        return bootstrap_kde(probs.view, labels.view, o, bo);
      },
      arg(param::bootstrap_replicates) = b.replicates, arg(param::level) = b.level,
      arg(param::bootstrap_seed) = b.seed, arg(param::copies) = std::string(to_string(b.copies)));

  const CalibrationTestOptions t{};
  def_kde<std::size_t, std::uint64_t>(
      m, "calibration_test_kde",
      docstring("A test of 'the predictions are calibrated' by consistency resampling with ECE^KDE (CE_p^p of "
                "`type`) as the statistic; all relabelled copies share one sweep (ecekde::calibration_test_kde).",
                kde_arg_docs({ArgDoc(param::test_replicates), ArgDoc(param::test_seed)}),
                "CalibrationTestResult"),
      [](const ProbsInput& probs, const LabelsInput& labels, const EstimateOptions& o, std::size_t replicates,
         std::uint64_t seed) {
        py::gil_scoped_release nogil;
        return calibration_test_kde(probs.view, labels.view, o, {.replicates = replicates, .seed = seed});
      },
      arg(param::test_replicates) = t.replicates, arg(param::test_seed) = t.seed);

  const EstimateOptions d{};
  m.def(
      "select_bandwidth",
      [](py::object probs, py::object labels, std::string_view type, std::string_view criterion,
         std::optional<std::vector<double>> grid, bool refine, std::size_t max_rows, bool renormalize, int threads,
         std::size_t block_size, std::string isa) {
        const ProbsInput probs_in = probs_input(probs);
        const std::optional<LabelsInput> labels_in =
            labels.is_none() ? std::nullopt : std::optional<LabelsInput>(labels_input(labels));
        const EstimateOptions o =
            estimate_options(type, 1, std::nullopt, criterion, std::move(grid), refine, max_rows,
                             to_string(EstimateOptions{}.form), renormalize, threads, block_size, std::move(isa));
        py::gil_scoped_release nogil;
        if (labels_in)
          return select_bandwidth(probs_in.view, labels_in->view, o.type, o.bandwidth_selection, o.execution,
                                  o.renormalize);
        return select_bandwidth(probs_in.view, o.type, o.bandwidth_selection, o.execution, o.renormalize);
      },
      docstring("The automatic bandwidth for `type` on `probs`, as estimate() chooses it "
                "(ecekde::select_bandwidth).",
                {ArgDoc("probs", kProbsDoc),
                 ArgDoc("labels", "None, or the labels: only the loo-regression criterion needs them"),
                 ArgDoc(param::type), ArgDoc(param::criterion),
                 ArgDoc(param::grid, "None = the paper's grid"), ArgDoc(param::refine), ArgDoc(param::max_rows),
                 ArgDoc(param::renormalize),
                 ArgDoc(param::threads), ArgDoc(param::block_size), ArgDoc(param::isa, "'' = the best")},
                "BandwidthSelection")
          .c_str(),
      py::arg("probs"), py::arg("labels") = py::none(), py::kw_only(),
      arg(param::type) = std::string(to_string(d.type)),
      arg(param::criterion) = std::string(to_string(d.bandwidth_selection.criterion)),
      arg(param::grid) = py::none(), arg(param::refine) = d.bandwidth_selection.refine,
      arg(param::max_rows) = d.bandwidth_selection.max_rows, arg(param::renormalize) = d.renormalize,
      arg(param::threads) = d.execution.threads, arg(param::block_size) = d.execution.block_size,
      arg(param::isa) = d.execution.isa);

  m.def(
      "_estimate_defaults",
      [] {
        const EstimateOptions d{};
        return py::dict(py::arg("type") = std::string(to_string(d.type)), py::arg("p") = d.p,
                        py::arg("bandwidth") = d.bandwidth,
                        py::arg("criterion") = std::string(to_string(d.bandwidth_selection.criterion)),
                        py::arg("grid") = py::none(), py::arg("refine") = d.bandwidth_selection.refine,
                        py::arg("max_rows") = d.bandwidth_selection.max_rows,
                        py::arg("form") = std::string(to_string(d.form)),
                        py::arg("renormalize") = d.renormalize, py::arg("threads") = d.execution.threads,
                        py::arg("block_size") = d.execution.block_size, py::arg("isa") = d.execution.isa);
      },
      "The defaults of the estimate options (EstimateOptions{}), for the package's Python functions.");

  m.def(
      "_estimate_parameters",
      [] {
        py::dict help;
        for (const ArgDoc& a : kde_arg_docs())
          if (a.name != "probs" && a.name != "labels") help[py::str(std::string(a.name))] = std::string(a.help);
        return help;
      },
      "The estimate options' help texts from the shared parameter table (what the CLI's --help shows).");

  m.def("default_bandwidth_grid", [] { return array_from(default_bandwidth_grid(), {20}); },
        "The paper's candidate bandwidths: 10^linspace(-5, -1, 15) followed by 0.2, 0.4, 0.6, 0.8, 1.0.");

  m.def(
      "bootstrap",
      [](std::size_t n, py::function statistic, std::size_t replicates, double level, std::uint64_t seed,
         int threads) {
        auto call = [&statistic](std::span<const std::size_t> rows) {
          py::gil_scoped_acquire gil;
          py::array_t<std::int64_t> idx(static_cast<py::ssize_t>(rows.size()));
          for (std::size_t i = 0; i < rows.size(); ++i)
            idx.mutable_at(static_cast<py::ssize_t>(i)) = static_cast<std::int64_t>(rows[i]);
          return statistic(idx).cast<double>();
        };
        const BootstrapOptions bo{.replicates = replicates, .level = level, .seed = seed};
        py::gil_scoped_release nogil;
        return bootstrap(n, call, bo, threads);
      },
      docstring("Percentile bootstrap of any statistic: statistic(rows) evaluates it on the resample given by n "
                "row indices (an int64 array, drawn with replacement); the estimate is statistic(arange(n)) "
                "(ecekde::bootstrap). Replicates use the same streams as bootstrap_kde.",
                {ArgDoc("n", "number of samples"), ArgDoc("statistic", "callable(rows) -> float"),
                 ArgDoc(param::bootstrap_replicates), ArgDoc(param::level), ArgDoc(param::bootstrap_seed),
                 ArgDoc(param::threads, "a Python statistic holds the GIL, so more threads rarely help")},
                "Interval")
          .c_str(),
      py::arg("n"), py::arg("statistic"), py::kw_only(), arg(param::bootstrap_replicates) = b.replicates,
      arg(param::level) = b.level, arg(param::bootstrap_seed) = b.seed, arg(param::threads) = 1);

  m.def(
      "calibration_test",
      [](py::object probs, py::object labels, py::function statistic, std::size_t replicates, std::uint64_t seed,
         int threads) {
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        auto call = [&](ProbsView, LabelsView y) {
          py::gil_scoped_acquire gil;
          return statistic(probs_in.array, labels_object(y, labels_in)).cast<double>();
        };
        py::gil_scoped_release nogil;
        return calibration_test(probs_in.view, labels_in.view, call, {.replicates = replicates, .seed = seed}, threads);
      },
      docstring("A consistency-resampling calibration test with any statistic(probs, labels) -> float, e.g. "
                "a binned ECE: relabelled copies draw label i from row i of probs (ecekde::calibration_test).",
                {ArgDoc("probs", kProbsDoc), ArgDoc("labels", kLabelsDoc),
                 ArgDoc("statistic", "callable(probs, labels) -> float"), ArgDoc(param::test_replicates),
                 ArgDoc(param::test_seed),
                 ArgDoc(param::threads, "a Python statistic holds the GIL, so more threads rarely help")},
                "CalibrationTestResult")
          .c_str(),
      py::arg("probs"), py::arg("labels"), py::arg("statistic"), py::kw_only(),
      arg(param::test_replicates) = t.replicates, arg(param::test_seed) = t.seed, arg(param::threads) = 1);

  m.def(
      "bootstrap_indices",
      [](std::size_t n, std::uint64_t seed, std::size_t replicate) {
        const std::vector<std::size_t> rows = bootstrap_indices(n, seed, replicate);
        return array_from(std::vector<std::int64_t>(rows.begin(), rows.end()), {py::ssize_t(n)});
      },
      "The rows of bootstrap resample `replicate` (what bootstrap_kde and bootstrap use).", py::arg("n"),
      py::arg("seed"), py::arg("replicate"));

  m.def(
      "consistency_labels",
      [](py::object probs, std::uint64_t seed, std::size_t replicate) {
        const ProbsInput probs_in = probs_input(probs);
        std::vector<std::int64_t> y;
        {
          py::gil_scoped_release nogil;
          y = consistency_labels(probs_in.view, seed, replicate);
        }
        const auto n = static_cast<py::ssize_t>(y.size());
        return array_from(std::move(y), {n});
      },
      "The labels of relabelled copy `replicate` of the calibration tests: label i ~ Categorical(probs row i) "
      "(one column: Bernoulli).",
      py::arg("probs"), py::arg("seed"), py::arg("replicate"));
}

}  // namespace ecekde::python
