// The estimators built on the accuracy of the kernel regression r_j (the estimate of E[y | f_j]) rather
// than on the density: the loo-regression bandwidth criterion and the debiased (p = 2) form.
// Public description: BandwidthCriterion::loo_regression and KdeForm::debiased (ecekde/estimate.hpp).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/problems.hpp"
#include "core/sweep.hpp"

namespace ecekde::detail {

/// The loo-regression criterion at each of `bandwidths`: minus the mean over the input rows `rows` of
/// the leave-one-out Brier score (each row scored against all other samples), summed over the problems.
std::vector<double> regression_scores(const std::vector<LabelledPoints>& problems,
                                      std::span<const double> bandwidths, std::span<const std::size_t> rows,
                                      const SweepPlan& plan);

/// One problem's debiased mean error at bandwidth h: the mean over the rows used of the row's U-statistic
/// (KdeForm::debiased), and the number of rows left out (a single effective neighbour).
struct DebiasedMean {
  double value = 0;
  std::size_t excluded_rows = 0;
};
DebiasedMean debiased_mean_error(const LabelledPoints& lp, double h, const SweepPlan& plan);

/// A row is left out of the debiased mean when sum_{i != k} w_i w_k <= kSinglePairShare (sum_i w_i)^2.
/// Above it, rounding in the two differences of O((sum w)^2) sums costs at most ~1e-10 relative.
inline constexpr double kSinglePairShare = 1e-6;

}  // namespace ecekde::detail
