// The cross-fit estimator (Estimator::crossfit, the default): an estimate of CE_p^p that is accurate at
// practical n. How it works and how it was validated: docs/validation.md, Section 7.
#pragma once

#include <vector>

#include "core/estimate_steps.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

struct RingLayout;

/// The cross-fit estimate of options.type on prepared input, with its standard error and interval. With
/// `ring` (own_rows: canonical only), `in` holds this rank's rows, and the estimate is over all ranks'.
Result crossfit_estimate(const Prepared& in, const EstimateOptions& options, const RingLayout* ring = nullptr);

/// The cross-fitted pilot of every kernel problem of `in`, in input row order (n x K for canonical, n
/// values for one-dimensional problems): the part of the estimate that is not a sweep, for the oracle test.
std::vector<std::vector<double>> crossfit_pilots(const Prepared& in, const EstimateOptions& options);

/// The two-sided standard normal quantile z with P(|Z| <= z) = level, for level in (0, 1).
double normal_quantile(double level);

}  // namespace ecekde::detail
