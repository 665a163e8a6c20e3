// The parts of bootstrap() and calibration_test() that other ways of computing a statistic reuse (the
// report's binned estimates and MMCE from each rank's own rows, src/report/own_rows.cpp), so that their
// intervals and p-values are formed exactly as those functions form them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"

namespace ecekde::detail {

/// Throws Error unless B >= 2 and 0 < level < 1.
void check_bootstrap(const BootstrapOptions& options);

/// The percentile interval of `replicates` (quantile_sorted, type 7) at `level`.
Interval make_interval(double estimate, std::vector<double> replicates, double level);

/// (1 + #{null >= statistic}) / (B + 1).
double p_value(double statistic, const std::vector<double>& null_values);

/// calibration_test() of statistic() on the data and copy(b) on relabelled copy b: the copies split
/// across the ranks of execution.communicator (each rank holding what they need), on execution.threads
/// threads, so copy() must be thread-safe. n and k are checked to agree across the ranks.
CalibrationTestResult test_of_copies(const std::function<double()>& statistic, const CalibrationTestOptions& test,
                                     const ExecutionOptions& execution, std::size_t n, std::size_t k,
                                     const std::function<double(std::size_t)>& copy);

/// The n uniforms that relabelled copy `replicate` of calibration_test() draws, one per row in order.
std::vector<double> copy_uniforms(std::size_t n, std::uint64_t seed, std::size_t replicate);

/// A copy's hits from its uniforms: row r's label is its positive class exactly when uniforms[r] lies in
/// [lower[r], upper[r]) (uniforms_drawing), so these are the hits of calibration_test()'s copy.
std::vector<std::uint8_t> hits_of(std::span<const double> uniforms, std::span<const double> lower,
                                  std::span<const double> upper);

}  // namespace ecekde::detail
