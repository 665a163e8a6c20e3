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

/// Each input row's crossfit fold (of `folds`), from a hash of the row's probabilities alone: the
/// assignment does not depend on the order of the rows (permuting samples permutes the folds with them),
/// and rows with the same prediction share a fold whatever their labels. Hashing the label too made the
/// fold, among tied rows, a function of the label: a row's pilot was then fitted on its ties of the other
/// label only, biased against its own (a constant calibrated prediction [0.5, 0.5] read CE_1 = 1, the
/// largest possible). With two columns only the last is hashed, so that [1 - p, p] and the one column p
/// share their folds.
std::vector<std::size_t> folds_of(const CheckedPredictions& pred, std::size_t folds);

/// The two-sided standard normal quantile z with P(|Z| <= z) = level, for level in (0, 1).
double normal_quantile(double level);

}  // namespace ecekde::detail
