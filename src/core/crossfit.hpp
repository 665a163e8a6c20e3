// The cross-fit estimator (Estimator::crossfit, the default): an estimate of CE_p^p that is accurate at
// practical n. How it works: docs/estimator.md; the evidence: docs/validation.md; how it came about:
// docs/history.md, Section 7.
#pragma once

#include <vector>

#include "core/estimate_steps.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

struct RingLayout;

/// The cross-fit estimate of options.type on prepared input, with its standard error and interval. With
/// `ring` (own_rows: canonical only), `in` holds this rank's rows, and the estimate is over all ranks'.
Result crossfit_estimate(const Prepared& in, const EstimateOptions& options, const RingLayout* ring = nullptr);

/// The cross-fitted pilots of every kernel problem of `in`, in input row order (n x K values for canonical,
/// n for one-dimensional problems): the part of the estimate that is not a sweep, for the oracle test.
/// Owned problems (SweepPlan::owned_problems): the other ranks' problems' are empty.
struct CrossfitPilots {
  std::vector<std::vector<double>> held_out;  // per problem: each row's pilot, fitted without its fold
  std::vector<std::vector<double>> models;    // per problem: each fold's model at every row, fold after fold
  std::vector<std::size_t> fold_of;           // each input row's fold
};
CrossfitPilots crossfit_pilots(const Prepared& in, const EstimateOptions& options);

/// Each input row's crossfit fold (of `folds`), from a hash of the row's probabilities (each rounded to
/// float, so that float32 and float64 copies of a prediction agree) and, among rows with the same
/// prediction, their order: the first row of a prediction takes its hash's fold and the later ones the
/// next folds in turn. Rows with distinct predictions keep their folds whatever the order of the rows.
/// Tied rows are dealt out rather than sharing a fold: a classifier with a few distinct outputs had each
/// output's rows in one fold, so every pilot was fitted without the cells it was used on, and the
/// estimate read up to 45% low depending on which cells the hash put together (docs/history.md, 7.8).
/// Never by label: that made a row's pilot fitted on its ties of the other label only (a constant
/// calibrated prediction [0.5, 0.5] read CE_1 = 1). With two columns only the last is hashed, so that
/// [1 - p, p] and the one column p share their folds. On a ring (own_rows), `pred` holds this rank's rows
/// and the turns count the earlier ranks' rows (every rank's hashes are gathered: 16 bytes a row).
std::vector<std::size_t> folds_of(const CheckedPredictions& pred, std::size_t folds, const RingLayout* ring = nullptr);

/// The two-sided standard normal quantile z with P(|Z| <= z) = level, for level in (0, 1).
double normal_quantile(double level);

}  // namespace ecekde::detail
