// The score part of the canonical sweep against the machine's DGEMM, on the same shapes, in one run
// (issue "the engine at the limit", item 1). Both compute every score sum_k log x_jk x_ik of n points
// against n points of dimension K, with 1 and 2 threads:
//   BM_SweepScores   the library's sweep (its tiles, threads and dot kernels) with a reducer that only
//                    reads each tile, so that the time is the scores';
//   BM_OpenBlasDgemm OpenBLAS (Debian's libopenblas-dev) in panels of 512 rows (M = 512, N = n, K), its
//                    best shape for this product; built only where OpenBLAS is found.
// The counter GFLOPS counts 2 n^2 K per iteration. Run: build/bench/ecekde_bench_scores
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "core/kernels.hpp"
#include "core/sweep.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/random.hpp"

#ifdef ECEKDE_BENCH_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

namespace {

// n points of a softmax of N(0, 2^2) logits in K classes, prepared for the kernel.
const ecekde::detail::KernelPoints& points(std::size_t n, std::size_t k) {
  static std::size_t cached_n = 0, cached_k = 0;
  static ecekde::detail::KernelPoints pts;
  if (n != cached_n || k != cached_k) {
    ecekde::Rng rng(n * 7 + k);
    std::vector<double> x(n * k);
    for (std::size_t r = 0; r < n; ++r) {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) s += (x[r * k + c] = std::exp(2 * rng.normal()));
      for (std::size_t c = 0; c < k; ++c) x[r * k + c] /= s;
    }
    pts = ecekde::detail::KernelPoints::from_rows(x.data(), n, k);
    cached_n = n;
    cached_k = k;
  }
  return pts;
}

void count_flops(benchmark::State& state, std::size_t n, std::size_t k) {
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(k);
  state.counters["GFLOPS"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

// Reads one score per row of each tile (so that nothing is optimised away) and nothing else.
struct ReadScores {
  struct Scratch {
    double seen = 0;
  };
  Scratch scratch(std::size_t, std::size_t) const { return {}; }
  void begin(Scratch&, std::size_t, std::size_t) const {}
  void tile(Scratch& s, std::size_t, std::size_t rows, std::size_t, std::size_t, const double* dots,
            std::size_t ld) const {
    for (std::size_t q = 0; q < rows; ++q) s.seen += dots[q * ld];
  }
  void end(Scratch& s, std::size_t, std::size_t) const { benchmark::DoNotOptimize(s.seen); }
};

void BM_SweepScores(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0)), k = static_cast<std::size_t>(state.range(1));
  const ecekde::detail::KernelPoints& x = points(n, k);
  const auto plan = ecekde::detail::SweepPlan::from({.threads = static_cast<int>(state.range(2))});
  for (auto _ : state) ecekde::detail::sweep(x, plan, ReadScores{});
  count_flops(state, n, k);
}

#ifdef ECEKDE_BENCH_OPENBLAS
void BM_OpenBlasDgemm(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0)), k = static_cast<std::size_t>(state.range(1));
  const ecekde::detail::KernelPoints& x = points(n, k);
  constexpr std::size_t kPanel = 512;
  std::vector<double> c(kPanel * n);
  openblas_set_num_threads(static_cast<int>(state.range(2)));
  for (auto _ : state)
    for (std::size_t r0 = 0; r0 < n; r0 += kPanel) {
      const std::size_t m = std::min(kPanel, n - r0);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), 1.0, x.log_x.data() + r0 * k, static_cast<int>(k), x.x_t.data(),
                  static_cast<int>(n), 0.0, c.data(), static_cast<int>(n));
      benchmark::DoNotOptimize(c.data());
    }
  count_flops(state, n, k);
}
#endif

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgsProduct({{8000}, {10, 100, 1000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_SweepScores)->Apply(shapes);
#ifdef ECEKDE_BENCH_OPENBLAS
BENCHMARK(BM_OpenBlasDgemm)->Apply(shapes);
#endif

BENCHMARK_MAIN();
