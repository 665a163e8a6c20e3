// The canonical binned estimate from each rank's own rows (ExecutionOptions::own_rows): the report's
// "canonical, Doane bins, per-sample" row under `mpirun ... report --own-rows`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/inputs.hpp"
#include "core/ring.hpp"
#include "ecekde/binned.hpp"
#include "metrics/histogram.hpp"

namespace ecekde::detail {

/// The per-sample canonical binned estimate of every rank's rows, each rank holding its own (`own`, checked,
/// at `at`): O(n K / R) per rank, plus O(n) per call for the cells. Each coordinate's Doane bin count is
/// formed from moments that the ranks sum (the same count as alone unless Doane's formula lands within
/// rounding of a whole number). Every rank then finds its own rows' bins and their CellFingerprint, and
/// the n fingerprints and labels are gathered on every rank. There each cell's size and label counts
/// (whole numbers, so exact in any order) give its mean labels. Each rank forms its own rows' terms,
/// which are gathered and summed in the order a single process sums them. So the values are
/// bitwise alone's, given the same bin counts and no fingerprint collision (n^2 / 2^129). Equal-width bins and the per-sample form only, the
/// report's canonical row. result() holds no cells, only their number (BinnedResult::occupied): the
/// cells' mean predictions are O(n K). Every call is collective: every rank makes the same calls.
class RingCanonicalBinned {
 public:
  RingCanonicalBinned(const RingLayout& at, const CheckedPredictions& own, const BinnedOptions& options, int threads);

  const BinnedResult& result() const { return result_; }
  /// ce_pow_p of bootstrap resample `replicate` (bootstrap_indices(n, seed, replicate)), as
  /// BinnedStatistic::resampled() computes it.
  double resampled(std::uint64_t seed, std::size_t replicate) const;
  /// ce_pow_p with the labels of calibration_test()'s relabelled copy `replicate`, on the data's cells.
  double relabelled(std::uint64_t seed, std::size_t replicate) const;
  /// ce_pow_p with the data's own labels on the data's cells (the test's statistic).
  double relabelled_as_given() const;

 private:
  // The value of the samples `rows` (whole-input indices in the order drawn; empty: every row once) whose
  // cells are fingerprints[row] and labels labels[row].
  double value(const std::vector<std::size_t>& rows, const std::vector<CellFingerprint>& fingerprints,
               const std::vector<std::int32_t>& labels) const;
  // The edges of the samples `rows` (as value()): the options' bins, or each coordinate's Doane count.
  std::vector<std::vector<double>> edges_of(const std::vector<std::size_t>& rows) const;
  // Every row's fingerprint under `edges`, each computed by its rank.
  std::vector<CellFingerprint> fingerprints(const std::vector<std::vector<double>>& edges) const;
  // Every row's label, given this rank's.
  std::vector<std::int32_t> gathered_labels(const std::vector<std::int32_t>& own) const;

  RingLayout at_;
  const CheckedPredictions* own_;
  BinnedOptions options_;
  int threads_;
  std::vector<double> running_;                   // own rows' running sums (label_draws.hpp)
  std::vector<std::int32_t> labels_;              // every row's label
  std::vector<CellFingerprint> data_cells_;       // every row's fingerprint on the data's edges
  BinnedResult result_;
};

}  // namespace ecekde::detail
