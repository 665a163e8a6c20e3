// The steps every ECE^KDE entry point shares (check, prepare, bandwidth, the row errors, the root), implemented
// in estimate.cpp and used by the gradient, crossfit, bootstrap and test modules.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "core/problems.hpp"
#include "core/score_tree.hpp"
#include "core/sweep.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

/// The error term of row j given its class sums N_j: sum_c |N_jc / D_j - x_jc|^p (canonical), or
/// |N_j1 / D_j - s_j|^p for one-dimensional problems, with D_j = sum_c N_jc.
double row_error(const LabelledPoints& lp, std::size_t j, const double* sums, double p);

/// mean_j of row_error at bandwidth h: one problem's CE_p^p (before the type's weight).
double mean_error(const LabelledPoints& lp, double h, double p, const SweepPlan& plan);

/// The input rows the bandwidth criterion is averaged over: all n, or a uniform random subset of
/// max_rows of them (fixed seed), in increasing order.
std::vector<std::size_t> criterion_rows(std::size_t n, std::size_t max_rows);

/// The (label-sorted) positions of the input rows `rows` in a problem.
std::vector<std::size_t> positions_of(const LabelledPoints& lp, std::span<const std::size_t> rows);

/// The input rows `rows` of a problem as evaluation points of a sweep against all its centres, with each
/// one's own (label-sorted) centre position, the pair to leave out.
struct RowSubset {
  KernelPoints points;
  std::vector<std::size_t> self;
};
RowSubset row_subset(const LabelledPoints& lp, std::span<const std::size_t> rows);

/// The bandwidth criterion at each of `bandwidths`, averaged over the input rows `rows` (each scored
/// against all other samples) and summed over the problems (see BandwidthCriterion). `skeletons` (one per
/// problem), where given, keeps each problem's score tree between calls (ScoreTree::Skeleton): formed at
/// the first, read at the others.
std::vector<double> bandwidth_scores(const std::vector<LabelledPoints>& problems,
                                     std::span<const double> bandwidths, BandwidthCriterion criterion,
                                     std::span<const std::size_t> rows, const SweepPlan& plan,
                                     std::vector<ScoreTree::Skeleton>* skeletons = nullptr);

/// Grid search plus golden-section refinement, over the criterion rows of n samples.
BandwidthSelection choose_bandwidth(const std::vector<LabelledPoints>& problems,
                                    const BandwidthOptions& options, const SweepPlan& plan, std::size_t n);

/// The criterion at each of `bandwidths` (bandwidth_scores, or a ring run's sums over the ranks).
using BandwidthScorer = std::function<std::vector<double>(std::span<const double> bandwidths)>;

/// choose_bandwidth()'s search with the criterion `scores_at`, averaged over `rows` input rows; `problems`
/// only size the work for progress and pick the search's lookahead.
BandwidthSelection search_bandwidth(const std::vector<LabelledPoints>& problems, const BandwidthOptions& options,
                                    std::size_t rows, const SweepPlan& plan, const BandwidthScorer& scores_at);

/// Validated input, its kernel problems and the sweep plan.
struct Prepared {
  SweepPlan plan;
  CheckedPredictions pred;  // own rows' one-dimensional types: only n and k (the problems were gathered)
  std::vector<LabelledPoints> problems;
  std::vector<std::size_t> folds;  // the crossfit fold of each input row when given (gathered); else from pred
};

/// The smallest bandwidth at which the float path is tested to agree with double (1e-5 relative plus 1e-6
/// absolute); below
/// it an estimate in float carries a warning (the dot products' rounding grows as 1/h in the scores).
inline constexpr double kFloatTestedBandwidth = 0.002;

/// Adds that warning to `r` when it applies (precision float, h below it, a problem that is swept).
void warn_of_float_rounding(const Prepared& in, Result& r);

/// Kernel evaluations of `sweeps_per_pair` leave-one-out sweeps over every problem of `in` (each sweep's
/// work_per_pair() summed), for an entry point to plan the sweeps that follow its bandwidth. With
/// `expandable`, the sweeps' reducers can use the score tree for one-dimensional problems (row_work).
inline double leave_one_out_work(const Prepared& in, double sweeps_per_pair, bool expandable = false) {
  double pairs = 0;
  for (const auto& lp : in.problems) {
    const std::size_t n = lp.points.n;
    pairs += static_cast<double>(n) * (expandable ? row_work(in.plan, lp.points.dim, n) : static_cast<double>(n));
  }
  return pairs * sweeps_per_pair;
}

/// Validates and prepares; without labels (bandwidth selection only) every label is 0.
Prepared prepare(ProbsView probs, LabelsView labels, CalibrationType type, bool renormalize,
                 const ExecutionOptions& execution, bool use_labels);

/// estimate() of prepared input: options.estimator's estimate, with its warnings.
Result estimate_prepared(const Prepared& in, const EstimateOptions& options);

/// The checks of the paper's entry points beyond check_options(): `function` (e.g. "bootstrap_kde")
/// refuses the options it does not read (options::refuse_unread_options) and every form but plug-in.
void check_paper_entry(const EstimateOptions& options, std::string_view function);

/// Throws Error on every rank of a split run unless every rank passes the same options (the input itself
/// is compared by prepare()): ranks that disagree would take different paths through the sweeps.
void check_same_options(const EstimateOptions& options, const Prepared& in);
/// The same for a run of n rows of K columns over the ranks of `comm` (null: alone, nothing to check).
void check_same_options(const EstimateOptions& options, std::size_t n, std::size_t k, Communicator* comm);

/// A Result with type, p, n, k and the bandwidth (explicit, or chosen now) filled in: with check_options()
/// and prepare() before it, the start every entry point shares (the crossfit estimator checks the
/// options itself).
Result start_result(const EstimateOptions& options, const Prepared& in);

/// CE_p from CE_p^p: max(CE_p^p, 0)^(1/p). The one root of every entry point (estimate, crossfit, gradient,
/// bootstrap): a CE_p^p below 0 (the debiased form, an interval bound) reads as CE_p = 0, never NaN.
double root_of(double ce_pow_p, double p);

}  // namespace ecekde::detail
