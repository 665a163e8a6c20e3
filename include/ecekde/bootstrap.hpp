// Bootstrap confidence intervals: for ECE^KDE in one sweep (every replicate's resampling multiplicities
// ride along as payload), and for any other estimator by resampling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde {

/// How the leave-one-out sums treat copies of the same sample inside one bootstrap resample.
enum class BootstrapCopies {
  /// A row leaves out itself and every copy of itself: copies behave as one sample with a weight.
  /// The default: a copy sits at distance zero, so at small h it would decide its own ratio.
  leave_copies_out,
  /// A row leaves out only itself; the other copies count as neighbours. Equal to plain
  /// "resample, then estimate" (with the same bandwidth).
  plain,
};

template <>
struct EnumNames<BootstrapCopies> {
  static constexpr std::string_view what = "bootstrap copies convention";
  static constexpr std::pair<BootstrapCopies, std::string_view> names[] = {
      {BootstrapCopies::leave_copies_out, "leave-copies-out"}, {BootstrapCopies::plain, "plain"}};
};

struct BootstrapOptions {
  std::size_t replicates = 100;  ///< B
  double level = 0.95;           ///< central interval probability
  std::uint64_t seed = 0;        ///< replicate b resamples with Rng::stream(seed, b)
  BootstrapCopies copies = BootstrapCopies::leave_copies_out;
};

/// A percentile bootstrap interval.
struct Interval {
  double estimate = 0;                ///< the statistic on the data itself
  double lower = 0, upper = 0;        ///< percentile interval (quantiles of the replicates, type 7)
  double level = 0.95;
  std::vector<double> replicates;     ///< the statistic on each resample, in replicate order
};

/// ECE^KDE with intervals for CE_p^p and CE_p (the latter is the former's interval mapped by the
/// increasing x^(1/p); its replicates are the former's mapped the same way).
/// The bandwidth is fixed across replicates: the explicit one, or the one chosen on the full data.
struct KdeBootstrap {
  Result result;
  Interval ce_pow_p;
  Interval ce;
};

KdeBootstrap bootstrap_kde(ProbsView probs, LabelsView labels, const EstimateOptions& options = {},
                           const BootstrapOptions& bootstrap = {});

/// Percentile bootstrap of any statistic: statistic(indices) evaluates it on the resample given by
/// n row indices (drawn with replacement); replicates run in parallel on execution.threads threads, so the
/// statistic must be thread-safe. estimate = statistic(0, 1, ..., n-1).
Interval bootstrap(std::size_t n, const std::function<double(std::span<const std::size_t>)>& statistic,
                   const BootstrapOptions& options = {}, const ExecutionOptions& execution = {});

/// The same for a statistic of (probs, labels), the shape calibration_test() takes: replicate b evaluates it
/// on the rows of bootstrap resample b, copied in the input's float type (so that estimators apply the same
/// checks as to the input).
Interval bootstrap(ProbsView probs, LabelsView labels, const std::function<double(ProbsView, LabelsView)>& statistic,
                   const BootstrapOptions& options = {}, const ExecutionOptions& execution = {});

/// The rows of bootstrap resample `replicate` (what both functions above use).
std::vector<std::size_t> bootstrap_indices(std::size_t n, std::uint64_t seed, std::size_t replicate);

/// Quantile of sorted values with linear interpolation between order statistics (Hyndman & Fan type 7,
/// NumPy's default).
double quantile_sorted(std::span<const double> sorted, double q);

}  // namespace ecekde
