// The calibration report: every estimator of the library on one set of predictions: the default (crossfit)
// estimate with its interval, then the paper's ECE^KDE and the baselines with bootstrap intervals and
// consistency-resampling p-values, with its text and JSON forms. What `ecekde report` prints and
// ecekde.report() returns. Library target ecekde::report (the JSON needs nlohmann-json; not installed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/options.hpp"

namespace ecekde::report {

/// What the report computes (its option table: options()); defaults from the library's option structs.
struct Settings {
  double p = EstimateOptions{}.p;                        ///< order of ECE^KDE and of the binned L_p ECE
  std::size_t replicates = BootstrapOptions{}.replicates;  ///< B of every interval and test; 0 = none
  /// Largest paper_resampling_work() for which the paper's ECE^KDE gets its bootstrap and test.
  double paper_resampling_limit = 1e12;
  /// Largest paper_search_work() for which the paper's bandwidth search averages its criterion over its
  /// usual rows; beyond it, over paper_search_rows() of them.
  double paper_search_limit = 1e9;
  double level = BootstrapOptions{}.level;
  std::uint64_t seed = BootstrapOptions{}.seed;
  std::size_t bins = *BinnedOptions{}.bins;  ///< bins of the top-label (and binary) binned estimates
  std::vector<std::int64_t> classes;  ///< evaluate only these classes (renormalised over them); empty = all
  bool renormalize = false;           ///< divide each row by its sum instead of rejecting it
  int threads = ExecutionOptions{}.threads;
  RunControl* control = nullptr;  ///< progress and cancellation of every computation (not an option)
  Communicator* communicator = nullptr;  ///< ranks to split every computation across (not an option)
  /// Each rank of `communicator` passes only its own rows (ExecutionOptions::own_rows): no rank holds more
  /// than O(n K / R) of the input. The canonical binned result then lists no cells, only their number.
  bool own_rows = false;
};

/// The option table of Settings.
const std::vector<options::Option<Settings>>& options();

/// Accuracy and proper scores of the predictions (one column P(y = 1) is read as [1 - p, p]).
struct Summary {
  std::size_t n = 0, k = 0;
  double accuracy = 0;         ///< fraction with argmax (ties: lowest class) equal to the label
  double mean_confidence = 0;  ///< mean of the largest probability
  double nll = 0;              ///< mean -log f_y, with f_y below DBL_MIN read as DBL_MIN
  double brier = 0;            ///< mean sum_c (f_c - 1[y = c])^2
};

/// A bootstrap interval and a calibration test of one statistic S, the "p-th power" form (CE_p^p, the
/// MCE itself, the debiased CE_2^2, MMCE^2); `root` maps it to the reported value.
struct Uncertainty {
  double lower_pow = 0, upper_pow = 0;  ///< percentile interval of S
  double lower = 0, upper = 0;          ///< the same mapped by the increasing root
  double statistic = 0;                 ///< S on the data (the test's statistic)
  double p_value = 1;
};

struct KdeEntry {
  Result result;
  std::optional<Uncertainty> uncertainty;
  /// The bootstrap and test were not run: their paper_resampling_work(), above the settings' limit.
  std::optional<double> resampling_skipped;
  /// The bandwidth search's full paper_search_work(), above the settings' limit: its criterion was averaged
  /// over fewer rows (result.selection->rows).
  std::optional<double> search_reduced;
};

struct BinnedEntry {
  BinnedOptions options;
  BinnedResult result;
  std::optional<Uncertainty> uncertainty;
};

struct MmceEntry {
  MmceOptions options;
  MmceResult result;
  std::optional<Uncertainty> uncertainty;
};

struct Report {
  Settings settings;
  std::string probs_dtype;          ///< of the input: float32 or float64
  Summary summary;
  std::vector<Result> crossfit;     ///< the default estimator with its own interval, per KDE type
  std::vector<KdeEntry> kde;        ///< the paper's ECE^KDE: canonical, marginal, top-label, binary (as apply)
  std::vector<BinnedEntry> binned;  ///< see binned_plan()
  std::optional<MmceEntry> mmce;    ///< K >= 2
};

/// The sums that the bootstrap and the calibration test of the paper's ECE^KDE form together: for each of
/// the n^2 pairs of each problem, B replicate sums per class of the problem (each a multiply-add or an
/// add). Canonical: n^2 B K; marginal: K problems of 2 classes, 2 n^2 B K; top-label and binary:
/// 2 n^2 B. Deterministic, so that a report has the same content on every machine.
double paper_resampling_work(CalibrationType type, std::size_t n, std::size_t k, std::size_t replicates);

/// The kernel sums per candidate bandwidth of the paper's bandwidth search when its criterion is averaged
/// over `rows` rows, each against all n samples: rows n K for canonical and marginal (K problems of one
/// class), rows n for top-label and binary.
double paper_search_work(CalibrationType type, std::size_t n, std::size_t k, std::size_t rows);

/// The fewest criterion rows paper_search_rows() gives: a likelihood mean over fewer would be noisy.
inline constexpr std::size_t kMinPaperSearchRows = 1000;

/// The rows the report's paper bandwidth search averages its criterion over: its usual min(n, max_rows)
/// (BandwidthOptions) while their paper_search_work() is within settings.paper_search_limit; beyond it,
/// the most rows whose work is within the limit, but at least kMinPaperSearchRows. Depends on n, K and
/// the settings only, so that a report has the same content on every machine.
std::size_t paper_search_rows(CalibrationType type, std::size_t n, std::size_t k, const Settings& settings);

/// The KDE types the report runs for K columns: K = 1: binary; K = 2: all four; K > 2: all but binary.
std::vector<CalibrationType> kde_types(std::size_t k);

/// The binned estimates the report runs for K columns. K >= 2: top-label with `bins` equal-width bins
/// (L_p, MCE), equal-mass bins (L_p, MCE, debiased L2), marginal and canonical with Doane's bins per
/// class (equal width; canonical in the paper's per-sample form); K = 2 adds binary with `bins`
/// equal-width bins. K = 1: the top-label rows for the binary type instead.
std::vector<BinnedOptions> binned_plan(std::size_t k, const Settings& settings);

/// A binned estimate in words: "top-label, 15 equal-width bins, L1", "canonical, Doane bins, per-sample L1".
std::string describe(const BinnedOptions& options);

/// PreparedInput the report owns: the classes of Settings::classes (rows with other labels dropped,
/// probabilities renormalised over the classes kept) and/or rows divided by their sums.
struct PreparedInput {
  std::vector<double> probs;
  std::vector<std::int64_t> labels;
  std::size_t n = 0, k = 0;
  ProbsView probs_view() const { return ProbsView::row_major(probs.data(), n, k); }
  LabelsView labels_view() const { return LabelsView(labels); }
};

/// The predictions the report evaluates: `probs` and `labels` checked as given (row and column numbers in
/// errors refer to the input), then restricted to settings.classes and renormalised as asked. Empty when
/// neither applies (the input is used as it is). Throws Error on bad input.
std::optional<PreparedInput> prepare(ProbsView probs, LabelsView labels, const Settings& settings);

/// Runs `work` as a named stage (a progress display shows the name and the time taken).
using StageRunner = std::function<void(std::string_view stage, const std::function<void()>& work)>;

/// The report: checks and prepares the input (prepare()), then runs every estimator, each as a stage of
/// `run_stage` (default: just runs it). Throws Error on bad input.
Report compute(ProbsView probs, LabelsView labels, const Settings& settings, const StageRunner& run_stage = {});

/// compute() on input that prepare() has already made (`probs`, `labels`: what it returned, or the input).
Report compute_prepared(ProbsView probs, LabelsView labels, const Settings& settings, std::string probs_dtype,
                        const StageRunner& run_stage = {});

/// The summary of the predictions (valid labels required).
Summary summarize(ProbsView probs, LabelsView labels);

/// Where the input came from (file names by role, e.g. {"probs": ...}) and the figures written, for the
/// heading and the JSON document.
struct Provenance {
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  std::vector<std::string> plots;
};

/// The report as aligned tables: what `ecekde report` prints (its heading names the files of `provenance`).
void print_text(std::ostream& out, const Report& report, const Provenance& provenance = {});

/// The same figures as HTML tables (a notebook's view of ecekde.report()).
void print_html(std::ostream& out, const Report& report, const Provenance& provenance = {});

/// The report as one JSON document (every number a full double): what `ecekde report --json` prints and
/// ecekde.report() returns.
nlohmann::ordered_json to_json(const Report& report, const Provenance& provenance = {});

/// One estimate as JSON: estimator, type, p, bandwidth, ce, ce_pow_p, n, k, bandwidth_rule, and
/// bandwidth_selection (automatic bandwidth), class_ce_pow_p (marginal) and the crossfit estimator's
/// standard error, intervals and warnings where they apply (the results of `ecekde estimate --json`).
nlohmann::ordered_json result_json(const Result& r);

/// An option's value as JSON (none: null).
nlohmann::ordered_json value_json(const options::Value& value);

/// How the bandwidth was chosen, in words: "fixed" or "auto".
std::string bandwidth_rule(const Result& r);

}  // namespace ecekde::report
