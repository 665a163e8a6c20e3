// Internal entry points of the estimators, shared by the gradient, bootstrap and test modules.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/problems.hpp"
#include "core/sweep.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

/// The error term of row j given its class sums N_j: sum_c |N_jc / D_j - x_jc|^p (canonical), or
/// |N_j1 / D_j - s_j|^p for one-dimensional problems, with D_j = sum_c N_jc.
double row_error(const LabelledPoints& lp, std::size_t j, const double* sums, double p);

/// mean_j of row_error at bandwidth h: one problem's CE_p^p (before the type's weight).
double mean_error(const LabelledPoints& lp, double h, double p, const SweepPlan& plan);

/// The bandwidth criterion at each of `bandwidths`, summed over the problems (see BandwidthCriterion).
std::vector<double> bandwidth_scores(const std::vector<LabelledPoints>& problems,
                                     std::span<const double> bandwidths, BandwidthCriterion criterion,
                                     const SweepPlan& plan);

/// Grid search plus golden-section refinement.
BandwidthSelection choose_bandwidth(const std::vector<LabelledPoints>& problems,
                                    const BandwidthOptions& options, const SweepPlan& plan);

}  // namespace ecekde::detail
