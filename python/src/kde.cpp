// ECE^KDE: estimate, bandwidth selection, gradient, bootstrap intervals and the calibration test, and the
// generic bootstrap / consistency-resampling test over a Python statistic.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "arrays.hpp"
#include "communicator.hpp"
#include "docstrings.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/kernel_regression.hpp"
#include "ecekde/options.hpp"
#include "module.hpp"
#include "option_kwargs.hpp"
#include "results.hpp"
#include "watch.hpp"

namespace ecekde::python {

namespace {

namespace uses = options::uses;

constexpr std::string_view kProbsDoc =
    "n x K predicted probabilities (float32 or float64, any memory order; read in place), or a 1-D array of "
    "n values P(y = 1)";
constexpr std::string_view kLabelsDoc = "n class labels in [0, K) (int32 or int64; 0/1 for one column)";

// The ECE^KDE functions and the option tables each reads: the estimate options read by `used_by`, plus
// the bootstrap's or the test's own.
struct KdeFunction {
  const char* name;
  unsigned used_by;
  bool bootstrap = false, test = false;
};
constexpr KdeFunction kEstimate{"estimate", uses::estimate};
constexpr KdeFunction kGradient{"estimate_with_gradient", uses::paper_entries};
constexpr KdeFunction kKernelRegression{"kernel_regression", uses::paper_entries};
constexpr KdeFunction kBootstrap{"bootstrap_kde", uses::paper_entries, true, false};
constexpr KdeFunction kTest{"calibration_test_kde", uses::paper_entries, false, true};
constexpr KdeFunction kSelectBandwidth{"select_bandwidth", uses::select_bandwidth};
constexpr KdeFunction kKdeFunctions[] = {kEstimate, kGradient, kKernelRegression, kBootstrap, kTest, kSelectBandwidth};

// Every option a function takes, from the tables.
struct KdeCall {
  EstimateOptions estimate;
  BootstrapOptions bootstrap;
  CalibrationTestOptions test;
};

// The options f takes from `left` (they are removed as they are taken); the computation will report to
// `control` (watch.hpp).
KdeCall options_of(const KdeFunction& f, py::dict& left, RunControl& control) {
  KdeCall call;
  call.estimate.execution.control = &control;
  take_options(options::estimate_options(), f.used_by, call.estimate, left);
  if (f.bootstrap) take_options(options::bootstrap_options(), uses::all, call.bootstrap, left);
  if (f.test) take_options(options::calibration_test_options(), uses::all, call.test, left);
  for (const auto item : left) {  // an estimate option that f does not read: the library's words
    const std::string name = item.first.cast<std::string>();
    if (options::find(options::estimate_options(), name))
      throw py::type_error(options::unread_option_message(f.name, name));
  }
  refuse_unknown(f.name, left);
  return call;
}

// One call of a KDE function: its options from the keywords, and the progress display and control of
// its watched run (watch.hpp), to which the options' execution reports.
class WatchedCall {
 public:
  WatchedCall(const KdeFunction& f, const py::kwargs& kwargs) : name_(std::string("ecekde.") + f.name) {
    py::dict left(kwargs);  // a copy: keywords are removed as they are taken
    progress_ = take_progress(left);
    communicator_ = take_communicator(left);
    call_ = options_of(f, left, control_);
    call_.estimate.execution.communicator = communicator_.get();
  }
  const KdeCall& call() const { return call_; }

  /// compute() on a worker thread, interruptible, with progress.
  template <class Compute>
  auto run(Compute&& compute) {
    return run_watched(control_, progress_, name_, std::forward<Compute>(compute));
  }

 private:
  std::string name_;
  RunControl control_;
  py::object progress_;
  std::unique_ptr<PyCommunicator> communicator_;
  KdeCall call_;
};

// "summary", the arguments (probs, labels, `before`, then the options of f) and what it returns.
std::string kde_doc(const KdeFunction& f, std::string_view summary, std::vector<ArgDoc> before,
                    std::string_view returns) {
  std::vector<ArgDoc> docs{ArgDoc("probs", kProbsDoc), ArgDoc("labels", kLabelsDoc)};
  docs.insert(docs.end(), before.begin(), before.end());
  add_option_docs(docs, options::estimate_options(), f.used_by);
  if (f.bootstrap) add_option_docs(docs, options::bootstrap_options(), uses::all);
  if (f.test) add_option_docs(docs, options::calibration_test_options(), uses::all);
  docs.push_back(ArgDoc("progress", kProgressDoc));
  docs.push_back(ArgDoc("communicator", kCommunicatorDoc));
  return docstring(summary, docs, returns);
}

// Defines f(probs, labels, **options): the options are taken from the keywords by f's tables, then
// run(probs, labels, call) computes, watched (without the GIL, interruptible, with progress).
template <class Run>
void def_kde(py::module_& m, const KdeFunction& f, std::string_view summary, std::string_view returns, Run run) {
  m.def(
      f.name,
      [f, run](py::object probs, py::object labels, py::kwargs kwargs) {
        WatchedCall watched(f, kwargs);
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        return watched.run([&] { return run(probs_in, labels_in, watched.call()); });
      },
      kde_doc(f, summary, {}, returns).c_str(), py::arg("probs"), py::arg("labels"));
}

// A NumPy copy of labels the core made (the caller's own labels are passed as they are).
py::object labels_object(LabelsView labels, const LabelsInput& original) {
  if (labels.data() == original.view.data()) return original.array;
  py::array_t<std::int64_t> out(static_cast<py::ssize_t>(labels.size()));
  for (std::size_t i = 0; i < labels.size(); ++i) out.mutable_at(static_cast<py::ssize_t>(i)) = labels[i];
  return out;
}

// The help text of option `name` of `table`.
template <class Options>
std::string_view help_of(const std::vector<options::Option<Options>>& table, std::string_view name) {
  return options::find(table, name)->help;
}

}  // namespace

void register_kde(py::module_& m) {
  // Each function takes probs and labels (and its own arguments), then its options as keywords; the
  // package (python/ecekde/__init__.py) gives them a signature from _options().
  def_kde(m, kEstimate,
          "The L_p calibration error of `probs` against `labels` by the chosen estimator, the cross-fit estimator "
          "unless told otherwise (ecekde::estimate; the numbers of `ecekde estimate --json`).",
          "Result", [](const ProbsInput& probs, const LabelsInput& labels, const KdeCall& call) {
            return estimate(probs.view, labels.view, call.estimate);
          });
  def_kde(m, kGradient,
          "The paper's estimate and its analytic gradient with respect to every entry of `probs` (the bandwidth "
          "held constant; ecekde::estimate_with_gradient).",
          "GradientResult (gradients shaped like probs)",
          [](const ProbsInput& probs, const LabelsInput& labels, const KdeCall& call) {
            Gradient g;
            g.shape.assign(probs.array.shape(), probs.array.shape() + probs.array.ndim());  // no Python call
            g.value = estimate_with_gradient(probs.view, labels.view, call.estimate);
            return g;
          });
  def_kde(m, kBootstrap,
          "The paper's ECE^KDE with percentile bootstrap intervals for CE_p^p and CE_p, all replicates in one "
          "sweep; the bandwidth is fixed across replicates (ecekde::bootstrap_kde).",
          "KdeBootstrap", [](const ProbsInput& probs, const LabelsInput& labels, const KdeCall& call) {
            return bootstrap_kde(probs.view, labels.view, call.estimate, call.bootstrap);
          });
  def_kde(m, kTest,
          "A test of 'the predictions are calibrated' by consistency resampling with the paper's ECE^KDE (CE_p^p "
          "of `type`) as the statistic; all relabelled copies share one sweep (ecekde::calibration_test_kde).",
          "CalibrationTestResult", [](const ProbsInput& probs, const LabelsInput& labels, const KdeCall& call) {
            return calibration_test_kde(probs.view, labels.view, call.estimate, call.test);
          });

  m.def(
      kKernelRegression.name,
      [](py::object probs, py::object labels, py::object queries, py::kwargs kwargs) {
        WatchedCall watched(kKernelRegression, kwargs);
        const ProbsInput probs_in = probs_input(probs);
        const LabelsInput labels_in = labels_input(labels);
        const ProbsInput queries_in = probs_input(queries, "queries");
        return watched.run([&] {
          return kernel_regression(probs_in.view, labels_in.view, queries_in.view, watched.call().estimate);
        });
      },
      kde_doc(kKernelRegression,
              "The kernel estimates behind ECE^KDE read at query points, using every sample: the log density "
              "of the predictions and the estimate of E[y | f = x] (ecekde::kernel_regression). canonical: "
              "queries are Q x K points on the simplex; marginal, top-label, binary: Q scores in [0, 1] (shape "
              "(Q,) or (Q, 1)), and column c of the result belongs to class c (marginal), to the top label's "
              "correctness (top-label: the smooth reliability curve) or to y = 1 (binary).",
              {ArgDoc("queries", "where to read the estimates (float32/float64)")}, "KernelRegression")
          .c_str(),
      py::arg("probs"), py::arg("labels"), py::arg("queries"));

  m.def(
      kSelectBandwidth.name,
      [](py::object probs, py::object labels, py::kwargs kwargs) {
        WatchedCall watched(kSelectBandwidth, kwargs);
        const EstimateOptions& o = watched.call().estimate;
        const ProbsInput probs_in = probs_input(probs);
        const std::optional<LabelsInput> labels_in =
            labels.is_none() ? std::nullopt : std::optional<LabelsInput>(labels_input(labels));
        return watched.run([&] {
          if (labels_in)
            return select_bandwidth(probs_in.view, labels_in->view, o.type, o.bandwidth_selection, o.execution,
                                    o.renormalize);
          return select_bandwidth(probs_in.view, o.type, o.bandwidth_selection, o.execution, o.renormalize);
        });
      },
      kde_doc(kSelectBandwidth,
              "The automatic bandwidth of the paper's estimator for `type` on `probs` "
              "(ecekde::select_bandwidth).",
              {ArgDoc("labels", "None, or the labels: only the loo-regression criterion needs them")},
              "BandwidthSelection")
          .c_str(),
      py::arg("probs"), py::arg("labels") = py::none());

  for (const KdeFunction& f : kKdeFunctions) {
    std::vector<std::string> positional{"probs", "labels"};
    if (f.name == std::string_view(kKernelRegression.name)) positional.push_back("queries");
    keyword_function(
        f.name, positional,
        [f](py::list& out) {
          append_option_table(out, options::estimate_options(), f.used_by);
          if (f.bootstrap) append_option_table(out, options::bootstrap_options(), uses::all);
          if (f.test) append_option_table(out, options::calibration_test_options(), uses::all);
        },
        true);
  }

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
        RunControl control;
        return run_watched(control, py::bool_(false), "ecekde.bootstrap",
                           [&] { return bootstrap(n, call, bo, {.threads = threads, .control = &control}); });
      },
      docstring("Percentile bootstrap of any statistic: statistic(rows) evaluates it on the resample given by n "
                "row indices (an int64 array, drawn with replacement); the estimate is statistic(arange(n)) "
                "(ecekde::bootstrap). Replicates use the same streams as bootstrap_kde.",
                {ArgDoc("n", "number of samples"), ArgDoc("statistic", "callable(rows) -> float"),
                 ArgDoc("replicates", help_of(options::bootstrap_options(), "replicates")),
                 ArgDoc("level", help_of(options::bootstrap_options(), "level")),
                 ArgDoc("seed", help_of(options::bootstrap_options(), "seed")),
                 ArgDoc("threads", help_of(options::estimate_options(), "threads"),
                        "a Python statistic holds the GIL, so more threads rarely help")},
                "Interval")
          .c_str(),
      py::arg("n"), py::arg("statistic"), py::kw_only(), py::arg("replicates") = BootstrapOptions{}.replicates,
      py::arg("level") = BootstrapOptions{}.level, py::arg("seed") = BootstrapOptions{}.seed, py::arg("threads") = 1);

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
        RunControl control;
        return run_watched(control, py::bool_(false), "ecekde.calibration_test", [&] {
          return calibration_test(probs_in.view, labels_in.view, call, {.replicates = replicates, .seed = seed},
                                  {.threads = threads, .control = &control});
        });
      },
      docstring("A consistency-resampling calibration test with any statistic(probs, labels) -> float, e.g. "
                "a binned ECE: relabelled copies draw label i from row i of probs (ecekde::calibration_test).",
                {ArgDoc("probs", kProbsDoc), ArgDoc("labels", kLabelsDoc),
                 ArgDoc("statistic", "callable(probs, labels) -> float"),
                 ArgDoc("replicates", help_of(options::calibration_test_options(), "replicates")),
                 ArgDoc("seed", help_of(options::calibration_test_options(), "seed")),
                 ArgDoc("threads", help_of(options::estimate_options(), "threads"),
                        "a Python statistic holds the GIL, so more threads rarely help")},
                "CalibrationTestResult")
          .c_str(),
      py::arg("probs"), py::arg("labels"), py::arg("statistic"), py::kw_only(),
      py::arg("replicates") = CalibrationTestOptions{}.replicates, py::arg("seed") = CalibrationTestOptions{}.seed,
      py::arg("threads") = 1);

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
