// The cross-fit estimator (Estimator::crossfit, the default): an estimate of CE_p^p that is accurate at
// practical n. How it works and how it was validated: docs/validation.md, Section 7.
#pragma once

#include "core/estimators.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

/// The cross-fit estimate of options.type on prepared input, with its standard error and interval.
Result crossfit_estimate(const Prepared& in, const EstimateOptions& options);

/// The two-sided standard normal quantile z with P(|Z| <= z) = level, for level in (0, 1).
double normal_quantile(double level);

}  // namespace ecekde::detail
