// estimate() for ranks that each pass only their own rows (ExecutionOptions::own_rows; ring.hpp).
#pragma once

#include <optional>

#include "core/estimate_steps.hpp"
#include "core/ring.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

/// What every own_rows entry point starts from: the ranks' layout, and this rank's rows read and checked
/// (in.pred, rows named by their index in the whole input) with the plan for its own sweeps (no
/// communicator: the ring passes blocks itself). Throws, on every rank, for options the ring does not
/// support, ranks that disagree, and bad rows on any rank.
struct RingInput {
  RingLayout at;
  Prepared in;
};
RingInput ring_input(ProbsView probs, LabelsView labels, const EstimateOptions& options);

/// Top-label, binary and marginal with own rows: their one-dimensional problems over every rank's rows, as
/// the replicated design takes them. Top-label and binary are gathered on every rank (n rows of 4 values:
/// O(n), not n K); marginal's classes are each owned by one rank over every row (in.plan.owned_problems:
/// n K / R values per rank). Computed from `in`, they give bitwise one process's results. With `draws`,
/// also each problem row's uniforms that draw its positive class in a relabelled copy of the calibration
/// test: lower[q][r] <= u < upper[q][r] for problem q, input row r (marginal: for this rank's classes).
struct OneDimensionalRing {
  Prepared in;
  std::vector<std::vector<double>> lower, upper;
};
OneDimensionalRing one_dimensional_ring(const RingInput& ring, const EstimateOptions& options, bool draws);

/// The mean over all ranks' rows of the paper's row error at bandwidth h (the canonical problem lp of this
/// rank's rows), in the plan's precision.
double ring_mean_error(const RingLayout& at, const LabelledPoints& lp, double h, double p, const SweepPlan& plan);

/// The paper's canonical bandwidth on the ring (problems: the canonical one, of this rank's rows):
/// options.bandwidth, or the lone search with each criterion value summed over the ranks' rows.
struct RingBandwidth {
  double bandwidth = 0;
  std::optional<BandwidthSelection> selection;
};
RingBandwidth ring_paper_bandwidth(const RingLayout& at, const std::vector<LabelledPoints>& problems,
                                   const EstimateOptions& options, const SweepPlan& plan);

/// The paper's canonical Result on the ring before its value: type, p, n, K and the bandwidth
/// (ring_paper_bandwidth) of this rank's canonical problem, ring.in.problems.
Result ring_paper_result(const RingInput& ring, const EstimateOptions& options);

/// select_bandwidth() from each rank's own rows: canonical on the ring (within 1e-12 of alone's criterion,
/// the same bandwidth), the one-dimensional types on their gathered or owned problems (bitwise).
BandwidthSelection own_rows_bandwidth(ProbsView probs, LabelsView labels, CalibrationType type,
                                      const BandwidthOptions& options, const ExecutionOptions& execution,
                                      bool renormalize);

/// The paper's canonical estimate from each rank's own rows, the same Result on every rank. Throws, on
/// every rank, for the options it does not support, ranks that disagree, and bad rows on any rank.
Result own_rows_estimate(ProbsView probs, LabelsView labels, const EstimateOptions& options);

/// calibration_test_kde() from each rank's own rows (src/stats/calibration_test.cpp): the canonical type
/// on the ring, its rows going round in groups whose sums (copies x classes per row) stay within
/// sums_bytes. The same result on every rank, within 1e-12 relative of one process's, not bitwise.
CalibrationTestResult own_rows_calibration_test(ProbsView probs, LabelsView labels, const EstimateOptions& options,
                                                const CalibrationTestOptions& test,
                                                std::size_t sums_bytes = kRingSumsBytes);

/// bootstrap_kde() from each rank's own rows (src/stats/bootstrap.cpp): the canonical type on the ring, its
/// rows going round in groups whose sums (replicates x classes per row) stay within sums_bytes. The same
/// result on every rank, within 1e-12 relative of one process's, not bitwise.
KdeBootstrap own_rows_bootstrap(ProbsView probs, LabelsView labels, const EstimateOptions& options,
                                const BootstrapOptions& bootstrap, std::size_t sums_bytes = kRingSumsBytes);

}  // namespace ecekde::detail
