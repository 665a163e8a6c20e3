// The score part of the canonical sweep against the machine's DGEMM, on the same shapes, in one run
// (issue "the engine at the limit", item 1). Both compute every score sum_k log x_jk x_ik of n points
// against n points of dimension K, with 1 and 2 threads:
//   BM_SweepScores   the library's sweep (its tiles, threads and dot kernels) with a reducer that only
//                    reads each tile, so that the time is the scores';
//   BM_OpenBlasDgemm OpenBLAS (Debian's libopenblas-dev) in panels of 512 rows (M = 512, N = n, K), its
//                    best shape for this product; built only where OpenBLAS is found.
// The counter GFLOPS counts 2 n^2 K per iteration.
//
// And where the K = 10 sweep's time goes (item 5's roofline), one thread:
//   BM_ClassSumsSweep  the canonical estimate's sweep itself (ClassSums over n = 8,000 labelled points),
//                      in double and in float (the float path, issue 13 item 4);
//   BM_TileStage       each stage of its tile alone, on one tile of 16 rows x 512 centres that stays in
//                      the cache, repeated: the dot products (K multiply-adds per pair), the affine map
//                      and running maximum, the exp, the per-class sums; and the four in sequence;
//   BM_DotPeak         the dot kernel on an L1-resident 8 x 16 x 64 shape: the FMA rate it can reach.
//   BM_ClassRunSums    the calibration test's kernel (RelabelledClassSums): one tile of 16 rows' weights
//                      against blocks of 128, 256 and 512 centres (16, 32 and 64 KB), B = 100 copies of
//                      K = 10 classes; the weights it reads per second, and (arg copies 0) plain sums of
//                      the same centres in order, the rate at which the tile can be read at all.
// Their "pairs/s" counters add up (1 / sum of 1 / rate) to what bounds the sweep.
// Run: build/bench/ecekde_bench_scores
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "core/kernels.hpp"
#include "core/problems.hpp"
#include "core/reducers.hpp"
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
  std::size_t record_width() const { return 1; }
  void record(const Scratch& s, std::size_t, double* out) const { out[0] = s.seen; }
  void finish(std::size_t, const double* record) const { benchmark::DoNotOptimize(record[0]); }
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

// The canonical estimate's sweep at K = 10: per row, the class sums of exp(s_ji - m_j). Arguments:
// threads, and the precision (0 double, 1 float: ExecutionOptions::precision).
void BM_ClassSumsSweep(benchmark::State& state) {
  const std::size_t n = 8000, k = 10;
  const ecekde::detail::KernelPoints& x = points(n, k);
  std::vector<double> rows(n * k);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t c = 0; c < k; ++c) rows[j * k + c] = x.x(j, c);
  std::vector<std::int32_t> labels(n);
  for (std::size_t j = 0; j < n; ++j) labels[j] = static_cast<std::int32_t>((j * 7) % k);
  const auto lp = ecekde::detail::LabelledPoints::make(rows, k, labels, k, false);
  const double h = 0.05;
  std::vector<double> offsets(n);
  lp.points.centre_offsets(h, offsets, 1);
  const auto precision = state.range(1) ? ecekde::Precision::single : ecekde::Precision::double_;
  const auto plan =
      ecekde::detail::SweepPlan::from({.threads = static_cast<int>(state.range(0)), .precision = precision});
  double seen = 0;
  const auto finish = [&seen](std::size_t, double m, const double* sums) { seen += m + sums[0]; };
  const ecekde::detail::ClassSums reducer(lp, *plan.kernels, offsets, 1 / h, finish);
  for (auto _ : state) ecekde::detail::sweep(lp.points, plan, reducer);
  benchmark::DoNotOptimize(seen);
  state.counters["pairs/s"] = benchmark::Counter(static_cast<double>(n) * static_cast<double>(n - 1) *
                                                     static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}

enum Stage { kDot, kAffineMax, kExp, kClassSums, kAllStages };

// Arguments: the stage, and the precision (0 double, 1 float: the float path's kernels, whose exp writes
// double weights for the class sums).
void BM_TileStage(benchmark::State& state) {
  constexpr std::size_t rows = 16, cols = 512, k = 10;
  const auto stage = static_cast<Stage>(state.range(0));
  const bool single = state.range(1) != 0;
  const ecekde::detail::KernelPoints& x = points(8000, k);
  const ecekde::detail::TileKernels& kern = ecekde::detail::tile_kernels();
  std::vector<double> dots(rows * cols), w(cols), offsets(x.n);  // one row's weights, as in ClassSums
  x.centre_offsets(0.05, offsets, 1);  // a tile meets the first 512 centres
  const std::vector<float> log_x(x.log_x.begin(), x.log_x.end()), x_t(x.x_t.begin(), x.x_t.end());
  std::vector<float> dots_f(rows * cols), w_f(cols);
  ecekde::detail::BlockOffsets split(cols);
  const auto offsets_f = split.of<float>(offsets.data(), cols);
  kern.dot(x.log_x.data(), k, x.x_t.data(), x.n, rows, cols, k, dots.data(), cols);
  kern.dot_float(log_x.data(), k, x_t.data(), x.n, rows, cols, k, dots_f.data(), cols);
  kern.affine_max(dots.data(), w.data(), offsets.data(), 20.0, cols, cols);
  kern.score_max_float(dots_f.data(), offsets_f.hi, offsets_f.lo, 20.0f, w_f.data(), cols, cols);
  double seen = 0;
  for (auto _ : state) {
    if (stage == kDot || stage == kAllStages) {
      if (single) kern.dot_float(log_x.data(), k, x_t.data(), x.n, rows, cols, k, dots_f.data(), cols);
      else kern.dot(x.log_x.data(), k, x.x_t.data(), x.n, rows, cols, k, dots.data(), cols);
    }
    for (std::size_t q = 0; q < rows; ++q) {
      double* wq = w.data();
      double shift = 1.0;  // exp alone, in place: weights stay in (0, 1]
      if (single) {
        const float* dq = dots_f.data() + q * cols;
        if (stage == kAffineMax || stage == kAllStages)
          seen += shift = kern.score_max_float(dq, offsets_f.hi, offsets_f.lo, 20.0f, w_f.data(), cols, cols);
        if (stage == kExp || stage == kAllStages) kern.exp_shifted_float(w_f.data(), cols, static_cast<float>(shift));
        if (stage == kClassSums || stage == kAllStages)
          for (std::size_t c = 0; c < k; ++c) seen += kern.sum_float(w_f.data() + c * cols / k, cols / k);
        continue;
      }
      if (stage == kAffineMax || stage == kAllStages)
        seen += shift = kern.affine_max(dots.data() + q * cols, wq, offsets.data(), 20.0, cols, cols);
      if (stage == kExp || stage == kAllStages) kern.exp_shifted(wq, cols, shift);
      if (stage == kClassSums || stage == kAllStages)
        for (std::size_t c = 0; c < k; ++c) seen += kern.sum(wq + c * cols / k, cols / k);  // K runs
    }
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(seen);
  state.counters["pairs/s"] = benchmark::Counter(static_cast<double>(rows * cols * state.iterations()),
                                                 benchmark::Counter::kIsRate);
  static const char* names[] = {"dot products", "affine + max", "exp", "class sums", "all four"};
  state.SetLabel(names[stage]);
}

// The dot kernel where nothing waits on memory: 8 rows x 16 centres x depth 64, all in L1.
void BM_DotPeak(benchmark::State& state) {
  constexpr std::size_t rows = 8, cols = 16, depth = 64;
  std::vector<double> a(rows * depth, 0.5), bt(depth * cols, 0.25), out(rows * cols);
  const ecekde::detail::TileKernels& kern = ecekde::detail::tile_kernels();
  for (auto _ : state) {
    kern.dot(a.data(), depth, bt.data(), cols, rows, cols, depth, out.data(), cols);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * rows * cols * depth * static_cast<double>(state.iterations()) * 1e-9,
                                                benchmark::Counter::kIsRate);
  state.SetLabel(kern.isa);
}

// Arguments: centres per block, and whether the centres come by their copies' class runs (1: the kernel,
// B = 100 copies, K = 10 classes drawn uniformly) or in order once (0: one run of the whole block).
void BM_ClassRunSums(benchmark::State& state) {
  constexpr std::size_t rows = 16, classes = 10;
  const auto cols = static_cast<std::size_t>(state.range(0));
  const std::size_t copies = state.range(1) ? 100 : 1, runs = state.range(1) ? classes : 1;
  const ecekde::detail::TileKernels& kern = ecekde::detail::tile_kernels();
  std::vector<double> wt(cols * rows), acc(copies * runs * rows, 0.0);
  for (std::size_t i = 0; i < wt.size(); ++i) wt[i] = 1.0 / static_cast<double>(1 + i % 97);
  std::vector<std::uint32_t> order(copies * cols), starts(copies * (runs + 1));
  ecekde::Rng rng(3);
  for (std::size_t b = 0; b < copies; ++b) {  // a counting sort of the centres by their class in copy b
    std::vector<std::uint32_t> cls(cols);
    for (auto& c : cls) c = static_cast<std::uint32_t>(rng.below(runs));
    std::uint32_t* st = starts.data() + b * (runs + 1);
    for (std::size_t l = 0; l <= runs; ++l) st[l] = 0;
    for (auto c : cls) ++st[c + 1];
    for (std::size_t l = 0; l < runs; ++l) st[l + 1] += st[l];
    std::vector<std::uint32_t> fill(st, st + runs);
    for (std::size_t j = 0; j < cols; ++j) order[b * cols + fill[cls[j]]++] = static_cast<std::uint32_t>(j);
  }
  for (auto _ : state) {
    kern.class_run_sums(wt.data(), order.data(), starts.data(), cols, copies, runs, acc.data());
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(acc.data());
  const double centres = static_cast<double>(cols * copies * state.iterations());
  state.counters["centre-copies/s"] = benchmark::Counter(centres, benchmark::Counter::kIsRate);
  state.counters["GB/s"] = benchmark::Counter(centres * rows * sizeof(double) * 1e-9, benchmark::Counter::kIsRate);
}

// The default estimator's payload product at large K (crossfit's canonical corrections: PayloadSums in
// SharedDots) as one task of its sweep meets it: for each of 4 blocks of 512 centres, the tile of weights
// of each of 9 bandwidths (128 rows x 512 centres) times the block's residuals (512 x K), added to that
// bandwidth's row sums; one thread. The residuals are stored as PayloadSums stores them, K values padded
// with zeros to a multiple of 8 (`stride`). And OpenBLAS on the same products (beta = 1), unpadded.
struct PayloadShape {
  static constexpr std::size_t rows = 128, centres = 512, blocks = 4, bandwidths = 9;
  std::size_t k, stride;
  std::vector<double> weights, payload, sums;
  explicit PayloadShape(std::size_t k)
      : k(k), stride(ecekde::detail::payload_stride(k)), weights(bandwidths * rows * centres),
        payload(blocks * centres * stride, 0.0), sums(bandwidths * rows * (stride + 2)) {
    ecekde::Rng rng(k);
    for (double& w : weights) w = std::exp(-rng.uniform() * 5);
    for (std::size_t i = 0; i < blocks * centres; ++i)
      for (std::size_t l = 0; l < k; ++l) payload[i * stride + l] = rng.uniform() - 0.5;
  }
  template <class Product>
  void run(benchmark::State& state, Product product) {
    for (auto _ : state) {
      for (std::size_t c = 0; c < blocks; ++c)
        for (std::size_t b = 0; b < bandwidths; ++b)
          product(weights.data() + b * rows * centres, payload.data() + c * centres * stride,
                  sums.data() + b * rows * (stride + 2) + 2);
      benchmark::DoNotOptimize(sums.data());
    }
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * blocks * bandwidths * rows * centres * static_cast<double>(k) *
                                                      static_cast<double>(state.iterations()) * 1e-9,
                                                  benchmark::Counter::kIsRate);
  }
};

void BM_PayloadProduct(benchmark::State& state) {
  PayloadShape s(static_cast<std::size_t>(state.range(0)));
  const ecekde::detail::TileKernels& kern = ecekde::detail::tile_kernels();
  s.run(state, [&](const double* w, const double* r, double* out) {
    kern.dot_add(w, s.centres, r, s.stride, s.rows, s.stride, s.centres, out, s.stride + 2);
  });
}

#ifdef ECEKDE_BENCH_OPENBLAS
void BM_OpenBlasPayloadProduct(benchmark::State& state) {
  PayloadShape s(static_cast<std::size_t>(state.range(0)));
  openblas_set_num_threads(1);
  const int m = static_cast<int>(s.rows), n = static_cast<int>(s.k), depth = static_cast<int>(s.centres);
  s.run(state, [&](const double* w, const double* r, double* out) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, depth, 1.0, w, depth, r, static_cast<int>(s.stride),
                1.0, out, static_cast<int>(s.stride) + 2);
  });
}
#endif

// row_dots (each row of a tile against each transposed feature) at the shapes its callers give it: the
// score tree's leaves (rows: a group's rows, 8 or 16; columns: a leaf's centres, 32 or 128; depth: the
// payload's columns, 1 to 3) and the pilots' rows at K = 100 and 1,000 (4 rows, depth 3). Arguments:
// rows, columns, depth.
void BM_RowDots(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0)), cols = static_cast<std::size_t>(state.range(1)),
             depth = static_cast<std::size_t>(state.range(2));
  std::vector<double> b(rows * cols), xt(depth * cols), out(rows * depth);
  ecekde::Rng rng(rows + cols + depth);
  for (double& v : b) v = rng.uniform();
  for (double& v : xt) v = rng.uniform() - 0.5;
  const ecekde::detail::TileKernels& kern = ecekde::detail::tile_kernels();
  for (auto _ : state) {
    kern.row_dots(b.data(), cols, rows, cols, xt.data(), cols, depth, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(rows * cols * depth * state.iterations()) * 1e-9,
                                                benchmark::Counter::kIsRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgsProduct({{8000}, {10, 100, 1000}, {1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_SweepScores)->Apply(shapes);
#ifdef ECEKDE_BENCH_OPENBLAS
BENCHMARK(BM_OpenBlasDgemm)->Apply(shapes);
#endif

BENCHMARK(BM_ClassSumsSweep)->ArgsProduct({{1, 2}, {0, 1}})->ArgNames({"threads", "float"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TileStage)->ArgsProduct({{kDot, kAffineMax, kExp, kClassSums, kAllStages}, {0, 1}})->ArgNames({"stage", "float"});
BENCHMARK(BM_DotPeak);
BENCHMARK(BM_ClassRunSums)->ArgsProduct({{128, 256, 512}, {0, 1}})->ArgNames({"centres", "copies"});
BENCHMARK(BM_RowDots)->ArgsProduct({{8, 16}, {32, 128}, {1, 2, 3}})->Args({4, 100, 3})->Args({4, 1000, 3});
BENCHMARK(BM_PayloadProduct)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
#ifdef ECEKDE_BENCH_OPENBLAS
BENCHMARK(BM_OpenBlasPayloadProduct)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);
#endif

BENCHMARK_MAIN();
