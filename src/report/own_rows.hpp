// The report from each rank's own rows (Settings::own_rows, `mpirun ... ecekde report --own-rows`): what its
// binned estimates, MMCE and summary need, gathered or owned, so that no rank holds more than O(n K / R)
// of the input plus O(n) per row-wise value. The ECE^KDE rows take own rows themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/ring_estimate.hpp"
#include "ecekde/report.hpp"

namespace ecekde::report::detail {

/// The input restricted to `classes` (rows with other labels dropped) and renormalised; rows are named in
/// messages by first_row + their index.
PreparedInput restrict_and_renormalize(ProbsView probs, LabelsView labels, const std::vector<std::int64_t>& classes,
                                       std::size_t first_row = 0);

/// Values per row behind the summary: correct, confidence, -log f_y (f_y at least DBL_MIN), Brier score.
inline constexpr std::size_t kSummaryTerms = 4;
/// A row's summary terms (f: its k probabilities; one column is P(y = 1)) into out[0..kSummaryTerms).
void summary_terms(const double* f, std::size_t k, std::int64_t y, double* out);
/// The summary of n rows from their terms (n x kSummaryTerms), added up in row order.
Summary summary_of_terms(const std::vector<double>& terms, std::size_t n, std::size_t k);

/// A statistic's percentile bootstrap interval and its calibration test.
struct Resampled {
  Interval interval;
  CalibrationTestResult test;
};

/// prepare() of each rank's own rows: checked as the ring checks them (rows named by their index in the
/// whole input; a failure on any rank stops every rank with its message), then restricted and renormalised
/// row by row.
std::optional<PreparedInput> prepare_own_rows(ProbsView probs, LabelsView labels, const Settings& settings);

/// The report's row-wise parts from each rank's own (prepared) rows. Every call is collective. Each value
/// is bitwise what the report computes alone, except where a Doane bin count of the canonical binned
/// estimate lands within rounding of a whole number (ecekde::detail::RingCanonicalBinned).
class OwnRows {
 public:
  OwnRows(ProbsView probs, LabelsView labels, const Settings& settings);
  std::size_t n() const { return ring_.at.n; }
  Summary summary() const;
  /// A binned estimate, with its interval and test when settings.replicates > 0: top-label and binary from
  /// every row's score, hit and draw bounds gathered (O(n)); marginal from the classes this rank owns over
  /// every row (O(n K / R)), their values added in class order; canonical by RingCanonicalBinned.
  std::pair<BinnedResult, std::optional<Resampled>> binned(const BinnedOptions& options) const;
  /// MMCE (no gradient) from the gathered top-label rows.
  std::pair<MmceResult, std::optional<Resampled>> mmce(const MmceOptions& options) const;

 private:
  // A one-dimensional problem's rows in input order: score, hit, and the uniforms that draw the hit.
  struct Gathered {
    std::vector<double> score, lower, upper;
    std::vector<std::uint8_t> hit;
  };
  const Gathered& gathered(CalibrationType type) const;
  std::pair<BinnedResult, std::optional<Resampled>> marginal(const BinnedOptions& options) const;
  template <class Statistic>
  Resampled resample(const Statistic& statistic, const Gathered& rows) const;

  Settings settings_;
  ExecutionOptions execution_;  // the ranks' communicator, without own rows: for work on gathered rows
  ecekde::detail::RingInput ring_;
  mutable std::map<CalibrationType, Gathered> gathered_;
};

}  // namespace ecekde::report::detail
