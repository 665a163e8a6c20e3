// ECE^KDE: the L_p calibration error estimators of Popordanoska, Sayer & Blaschko (NeurIPS 2022).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/names.hpp"
#include "ecekde/communicator.hpp"
#include "ecekde/run_control.hpp"

namespace ecekde {

/// Which notion of calibration is estimated.
enum class CalibrationType {
  canonical,  ///< whole probability vector, Dirichlet kernel (Eq. 9 of the paper)
  marginal,   ///< class-wise: sum over classes c of the binary problem (f_c, 1[y = c]), Beta kernel
  top_label,  ///< the binary problem (max_c f_c, 1[argmax_c f_c = y]), Beta kernel
  binary,     ///< one column P(y = 1) with 0/1 labels; both classes counted (2x the one-column value)
};

template <>
struct EnumNames<CalibrationType> {
  static constexpr std::string_view what = "calibration type";
  static constexpr std::pair<CalibrationType, std::string_view> names[] = {
      {CalibrationType::canonical, "canonical"},
      {CalibrationType::marginal, "marginal"},
      {CalibrationType::top_label, "top-label"},
      {CalibrationType::binary, "binary"}};
};

/// How the automatic bandwidth is scored.
enum class BandwidthCriterion {
  /// Leave-one-out log-likelihood of the kernel density: mean_j log((1/(n-1)) sum_{i!=j} k_h(x_j; x_i)).
  /// The kernels are normalised densities, so this is a proper likelihood (the paper's LOO MLE).
  loo_likelihood,
  /// The authors' reference code: the same sum minus log h per point. Not a normalised density; it
  /// favours smaller h. Offered so that the reference code's choice can be reproduced.
  reference,
  /// Not the paper's: minus the mean leave-one-out Brier score of the kernel regression the estimate is
  /// built on (docs/estimator.md, Bandwidth). Needs the labels.
  loo_regression,
};

template <>
struct EnumNames<BandwidthCriterion> {
  static constexpr std::string_view what = "bandwidth criterion";
  static constexpr std::pair<BandwidthCriterion, std::string_view> names[] = {
      {BandwidthCriterion::loo_likelihood, "loo-likelihood"},
      {BandwidthCriterion::reference, "reference"},
      {BandwidthCriterion::loo_regression, "loo-regression"}};
};

/// The arithmetic of the pairwise sweeps.
enum class Precision {
  /// Double throughout (the default).
  double_,
  /// Dot products, scores and exponentials in float, per-tile sums accumulated in double: about twice the
  /// pairs per second at K = 10. Runs the sweeps at a given bandwidth: the paper's estimate (plug-in and
  /// debiased), kernel_regression() and the crossfit corrections (at every candidate bandwidth of its
  /// grid). The paper's bandwidth selection, gradients, bootstrap and calibration-test replicates stay
  /// double, so the paper's estimator chooses the same bandwidth in both. The one-dimensional types use
  /// the score tree, in double, unless ExecutionOptions::full_sweep. Accuracy: docs/estimator.md, Numerical rules.
  single,
};

template <>
struct EnumNames<Precision> {
  static constexpr std::string_view what = "precision";
  static constexpr std::pair<Precision, std::string_view> names[] = {{Precision::double_, "double"},
                                                                     {Precision::single, "float"}};
};

/// How the computation is run. None of these change the result beyond rounding (docs/estimator.md, Numerical rules).
struct ExecutionOptions {
  int threads = 0;             ///< worker threads; 0 = every hardware thread
  std::size_t block_size = 0;  ///< rows/centres per block of the pairwise sweep; 0 = automatic
  std::string isa = {};        ///< force a kernel variant ("avx512", "avx2", "baseline"); "" = best
  /// Sum every pair of the one-dimensional types' kernels instead of using the score tree's expansions
  /// (near-linear time, within 3e-16 of each row's sum; the crossfit corrections interpolate those within
  /// 1e-12 of each kernel average's largest payload; docs/design.md, Performance). For checking.
  bool full_sweep = false;
  /// Double, or float for the sweeps at a given bandwidth (Precision).
  Precision precision = Precision::double_;
  /// Progress and cancellation (ecekde/run_control.hpp); null = neither. Not owned; must outlive the call.
  RunControl* control = nullptr;
  /// The processes to split the sweeps across (ecekde/communicator.hpp); null = this process alone. Not
  /// owned; must outlive the call.
  Communicator* communicator = nullptr;
  /// Each process passes only its own rows, consecutive slices of the input in rank order (rank 0 the
  /// first rows), and blocks of centres travel from rank to rank (a ring), so that no process holds more
  /// than its share of the input: O(n K / R) memory, results within rounding of one process's (1e-12
  /// relative in double; in float, within float's rounding of the lone float result), not bitwise.
  /// estimate() only. Canonical: the crossfit estimator or the paper's in its plug-in form with a likelihood
  /// criterion. Marginal (each rank owns a share of the classes), top-label and binary (their n scores
  /// gathered) are bitwise the lone result.
  /// docs/distributed.md.
  bool own_rows = false;
};

/// Automatic bandwidth selection.
struct BandwidthOptions {
  BandwidthCriterion criterion = BandwidthCriterion::loo_likelihood;
  /// Candidate bandwidths; empty = the paper's grid 10^linspace(-5, -1, 15) U {0.2, 0.4, 0.6, 0.8, 1}.
  std::vector<double> grid;
  /// Refine around the best grid point by a search in log h (bounded by its grid neighbours).
  bool refine = true;
  /// Evaluate the criterion's mean over at most this many rows: with more samples, a random subset of
  /// rows (fixed seed, the same for every candidate h) is used, each still scored against all other
  /// samples. An unbiased estimate of the full mean that keeps selection fast at large n; 0 = all rows.
  std::size_t max_rows = 20000;
};

/// How estimate() forms each row's error from the kernel estimate r_j of E[y | f_j].
enum class KdeForm {
  /// ||r_j - f_j||_p^p, averaged over the rows: the paper's Eq. 9 (the default).
  plug_in,
  /// Not the paper's; p = 2 and estimator paper only: the label noise's pairs left out of the square
  /// (docs/estimator.md, Bandwidth). Can be negative (ce is then 0); rows resting on one neighbour are left out
  /// (Result::excluded_rows). Only estimate() offers it.
  debiased,
};

template <>
struct EnumNames<KdeForm> {
  static constexpr std::string_view what = "estimate form";
  static constexpr std::pair<KdeForm, std::string_view> names[] = {{KdeForm::plug_in, "plug-in"},
                                                                   {KdeForm::debiased, "debiased"}};
};

/// Which estimator estimate() computes. Only estimate() reads it (and level and folds):
/// estimate_with_gradient(), bootstrap_kde(), calibration_test_kde() and kernel_regression() compute the
/// paper's estimator, record estimator paper in their results and refuse level or folds away from their
/// defaults (options::refuse_unread_options); estimator may stay at its default or name paper (a default
/// cannot be told from a value set to it). select_bandwidth() takes no EstimateOptions.
enum class Estimator {
  /// The default: label noise not counted as miscalibration; with a standard error, interval and warnings
  /// (docs/estimator.md). Its bandwidth is chosen by the leave-one-out Brier score; `form` must be
  /// plug-in.
  crossfit,
  /// The paper's ECE^KDE (Eq. 9) with the bandwidth rule of `bandwidth_selection`, exactly as published.
  paper,
};

template <>
struct EnumNames<Estimator> {
  static constexpr std::string_view what = "estimator";
  static constexpr std::pair<Estimator, std::string_view> names[] = {{Estimator::crossfit, "crossfit"},
                                                                     {Estimator::paper, "paper"}};
};

/// Options of estimate().
struct EstimateOptions {
  Estimator estimator = Estimator::crossfit;
  CalibrationType type = CalibrationType::canonical;
  double p = 1.0;                    ///< order of the norm, any real p >= 1
  std::optional<double> bandwidth;   ///< fixed h > 0; empty = automatic (LOO likelihood)
  BandwidthOptions bandwidth_selection;
  bool renormalize = false;          ///< divide each row by its sum instead of rejecting it
  ExecutionOptions execution;
  KdeForm form = KdeForm::plug_in;   ///< how each row's error is formed (plug_in: the paper's)
  double level = 0.95;               ///< crossfit: probability of the interval around the estimate
  std::size_t folds = 5;             ///< crossfit: folds of the cross-fitted pilot (>= 2)
  /// crossfit, canonical: the estimate's row mean over at most this many rows, a uniform random subset
  /// (fixed seed) when fewer than n; each still corrected against all n samples (an incomplete U-statistic:
  /// the standard error adds the subsampling's term). 0 = automatic: every row unless rows x n x (K + 32)
  /// would exceed 10^12 (docs/estimator.md, Large n); the one-dimensional types always use every row.
  std::size_t mean_rows = 0;
};

/// A confidence interval of an estimate.
struct Bounds {
  double level = 0, lower = 0, upper = 0;
};

/// The outcome of an automatic bandwidth selection.
struct BandwidthSelection {
  BandwidthCriterion criterion = BandwidthCriterion::loo_likelihood;
  std::vector<double> grid;            ///< candidates, increasing
  std::vector<double> score;           ///< criterion per grid point (mean per sample, docs/estimator.md)
  std::vector<double> refined_grid;    ///< bandwidths evaluated by the refinement, in order
  std::vector<double> refined_score;   ///< their criterion values
  double bandwidth = 0;                ///< the chosen h
  double best_score = 0;               ///< the criterion at the chosen h
  std::size_t rows = 0;                ///< rows the criterion was averaged over (n, or max_rows)
  /// crossfit at p = 2: the criterion's own best grid point where CE_2^2 took a narrower one (`bandwidth`:
  /// the narrowest whose median row has 100 effective neighbours, its correction kept whole, taken where it
  /// reads significantly more; docs/estimator.md); 0 where the estimate took the criterion's
  double criterion_choice = 0;
};

/// One calibration error estimate.
struct Result {
  Estimator estimator = Estimator::paper;  ///< which estimator produced the numbers
  CalibrationType type = CalibrationType::canonical;
  double p = 1;
  double ce_pow_p = 0;    ///< CE_p^p: the value the authors' reference code returns
  double ce = 0;          ///< CE_p = (CE_p^p)^(1/p)
  double bandwidth = 0;   ///< the h used
  std::size_t n = 0;      ///< samples
  std::size_t k = 0;      ///< classes (columns of the input; 1 for one-column binary input)
  std::optional<BandwidthSelection> selection;  ///< present when h was chosen automatically
  std::vector<double> class_ce_pow_p;           ///< marginal only: each class's contribution to ce_pow_p
  std::size_t excluded_rows = 0;  ///< KdeForm::debiased: rows left out of the mean (summed over problems)
  /// crossfit: the standard error of ce_pow_p (from the estimate's influence terms) and the intervals of
  /// ce_pow_p and ce (normal, at options.level, clamped at 0); empty for the paper's estimator, whose
  /// intervals come from bootstrap_kde().
  double standard_error = 0;
  std::optional<Bounds> ce_pow_p_interval, ce_interval;
  /// crossfit: the rows its row mean averaged over: n, or fewer (a random subset, EstimateOptions::mean_rows;
  /// standard_error then includes the subsampling); 0 for the paper's estimator.
  std::size_t averaged_rows = 0;
  /// crossfit: the pilot recalibration map it kept: "structured", "full-matrix", "top-class-biases",
  /// "class-biases" or "trees" (canonical: the second adds a K x K matrix on log f, tried at K <= 16, the
  /// third a bias per class where it is the top class, tried at K <= 128, the fourth per-class biases, which
  /// the structured map has only up to K = 64, tried at 64 < K <= 128, the last boosted trees on log f added
  /// to the one kept before them, tried at K <= 20 and n <= 200,000), "beta" (the one-dimensional types),
  /// "beta-step" (the same with a jump at a threshold found in each fold; one problem, or marginal at
  /// K <= 128), "pooled-beta" (marginal: one Beta map fitted on every class's rows) or "pooled-intercepts"
  /// (marginal, K <= 128: that map plus an intercept per class); the one whose held-out log-loss (summed
  /// over marginal's classes) is the lowest is kept; empty for the paper's estimator.
  std::string pilot;
  /// Why the figure should not be trusted, in words (too few samples for K, a class seen a few times,
  /// kernel weights resting on few neighbours); empty when nothing is known to be wrong.
  std::vector<std::string> warnings;
};

/// Throws Error naming the first option out of range (p, bandwidth, level, folds, form for p and the
/// estimator): the checks every entry point applies first, for callers that validate before a long run.
void check_options(const EstimateOptions& options);

/// Estimates the L_p calibration error of the predictions `probs` (n x K) against `labels` (n), by
/// options.estimator (the cross-fit estimator unless told otherwise).
/// Throws Error with a one-line message on bad input.
Result estimate(ProbsView probs, LabelsView labels, const EstimateOptions& options = {});

/// Chooses the bandwidth for `type` on `probs` by the criterion in `options` (labels are not used, so
/// the loo-regression criterion, which needs them, throws Error here).
BandwidthSelection select_bandwidth(ProbsView probs, CalibrationType type,
                                    const BandwidthOptions& options = {},
                                    const ExecutionOptions& execution = {}, bool renormalize = false);

/// The same with the labels, for every criterion (the likelihood criteria ignore them).
BandwidthSelection select_bandwidth(ProbsView probs, LabelsView labels, CalibrationType type,
                                    const BandwidthOptions& options = {},
                                    const ExecutionOptions& execution = {}, bool renormalize = false);

/// The paper's candidate grid: 10^linspace(-5, -1, 15) followed by 0.2, 0.4, 0.6, 0.8, 1.0.
std::vector<double> default_bandwidth_grid();

}  // namespace ecekde
