#include "core/sweep.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/messages.hpp"
#include "core/numeric.hpp"
#include "core/parallel.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

KernelPoints KernelPoints::from_rows(const double* x, std::size_t n, std::size_t dim) {
  KernelPoints p;
  p.n = n;
  p.dim = dim;
  p.log_x.resize(n * dim);
  p.x_t.resize(dim * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < dim; ++k) {
      const double v = x[i * dim + k];
      p.log_x[i * dim + k] = std::log(std::max(v, kLogFloor));
      p.x_t[k * n + i] = v;
    }
  return p;
}

void KernelPoints::centre_offsets(double h, std::span<double> out, int threads) const {
  ECEKDE_ASSERT(out.size() == n);
  const double inv_h = 1 / h;
  constexpr std::size_t kChunk = 2048;
  parallel_for((n + kChunk - 1) / kChunk, threads, [&](std::size_t chunk, int) {
    // A chunk's centres side by side, a coordinate at a time (x_t's rows are contiguous): their lgamma
    // series are independent chains the core overlaps, where one centre's coordinates in turn waited on
    // each other. Each centre still sums its coordinates in order.
    const std::size_t first = chunk * kChunk, count = std::min(n, first + kChunk) - first;
    std::array<double, kChunk> total{}, log_norm{};
    for (std::size_t k = 0; k < dim; ++k) {
      const double* xk = x_t.data() + k * n + first;
      for (std::size_t r = 0; r < count; ++r) {
        const double alpha = xk[r] * inv_h + 1, excess = alpha - 1;  // exact where read (alpha <= 1 + kNearOne)
        total[r] += alpha;
        log_norm[r] -= excess <= kNearOne ? lgamma_near_one(excess) : std::lgamma(alpha);
      }
    }
    // The points sum to 1 to rounding, so the alphas' total takes few values (1 / h + dim and its
    // neighbours in the last bits, 3 to 50 of them on ImageNet-shaped data), interleaved: their lgamma is
    // kept in a small direct-mapped cache keyed by the total's bits.
    constexpr std::size_t kSlots = 64;
    std::array<double, kSlots> cached_total, cached_lgamma{};
    cached_total.fill(std::numeric_limits<double>::quiet_NaN());
    for (std::size_t r = 0; r < count; ++r) {
      std::uint64_t bits;
      std::memcpy(&bits, &total[r], sizeof bits);
      const std::size_t slot = static_cast<std::size_t>((bits * 0x9e3779b97f4a7c15ULL) >> 58);
      if (!(cached_total[slot] == total[r])) {
        cached_total[slot] = total[r];
        cached_lgamma[slot] = std::lgamma(total[r]);
      }
      out[first + r] = log_norm[r] + cached_lgamma[slot];
    }
  });
}

void refuse_own_rows() {
  fail("own_rows (each rank passing only its own rows) is supported by estimate(), estimate_with_gradient(), "
       "kernel_regression(), select_bandwidth(), bootstrap_kde() and calibration_test_kde() only");
}

SweepPlan SweepPlan::from(const ExecutionOptions& execution) {
  // Every entry point plans its sweeps here; only the ring's (ring_estimate.cpp) take own rows.
  if (execution.own_rows)
    refuse_own_rows();
  SweepPlan plan;
  plan.threads = resolve_threads(execution.threads);
  if (execution.block_size > 0) plan.block = execution.block_size;
  plan.kernels = &tile_kernels_for(execution.isa);
  plan.control = execution.control;
  plan.expansions = !execution.full_sweep;
  plan.single_precision = execution.precision == Precision::single;
  plan.communicator = split_across(execution.communicator);
  return plan;
}

OnlineMax::Step OnlineMax::weights(const TileKernels& kern, const double* dots, double* out,
                                   const double* offset, double inv_h, std::size_t cols,
                                   std::size_t skip) {
  constexpr double neg_inf = -std::numeric_limits<double>::infinity();
  // After a row's first tile its maximum rarely rises (in a few of its tiles, those holding a closer centre
  // than any before): the weights are formed with the maximum so far in the pass that finds the tile's,
  // and formed again where it rose. The same weights either way. The first tile, with no maximum yet, keeps
  // the two passes (formed twice there, a row with one tile, at n <= 512, would pay twice).
  const bool first = m == neg_inf;
  const double tile_max = first ? kern.affine_max(dots, out, offset, inv_h, cols, skip)
                                : kern.affine_exp_max(dots, out, offset, inv_h, m, cols, skip);
  if (tile_max == neg_inf) return {false, 1.0};
  double factor = 1.0;
  if (tile_max > m) {
    factor = std::exp(m - tile_max);  // exp(-inf) = 0 on the first tile
    m = tile_max;
    if (!first) kern.affine_exp(dots, out, offset, inv_h, m, cols);
  }
  if (first) kern.exp_shifted(out, cols, m);
  if (skip < cols) out[skip] = 0;
  return {true, factor};
}

OnlineMax::Step OnlineMax::weights(const TileKernels& kern, const float* dots, float* out,
                                   const SplitOffsets& offset, double inv_h, std::size_t cols, std::size_t skip) {
  const auto scale = static_cast<float>(inv_h);
  const double tile_max = kern.score_max_float(dots, offset.hi, offset.lo, scale, out, cols, skip);
  if (tile_max == -std::numeric_limits<double>::infinity()) return {false, 1.0};
  double factor = 1.0;
  if (tile_max > m) {
    factor = std::exp(m - tile_max);
    m = tile_max;
  }
  kern.exp_shifted_float(out, cols, static_cast<float>(m));  // m is a float
  if (skip < cols) out[skip] = 0;
  return {true, factor};
}

}  // namespace ecekde::detail
