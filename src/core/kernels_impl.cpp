// Tile kernels, compiled once per instruction set: this file is built with ECEKDE_ISA set to
// avx512, avx2 or baseline and matching -m flags (see src/core/CMakeLists.txt). GCC vector extensions
// give one source for all widths; exp is a polynomial of our own below (no -ffast-math, no libmvec).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/kernels.hpp"

#define ECEKDE_CAT2(a, b) a##b
#define ECEKDE_CAT(a, b) ECEKDE_CAT2(a, b)

namespace ecekde::detail::ECEKDE_CAT(isa_, ECEKDE_ISA) {
namespace {

typedef double v8 __attribute__((vector_size(64)));
constexpr std::size_t W = 8;

[[gnu::always_inline]] inline v8 load(const double* p) {
  v8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(double* p, v8 v) { std::memcpy(p, &v, sizeof v); }
[[gnu::always_inline]] inline v8 splat(double x) { return v8{x, x, x, x, x, x, x, x}; }
// Horizontal sum in a fixed lane order.
[[gnu::always_inline]] inline double reduce(v8 acc) {
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// exp by range reduction and a polynomial, in the vector width of the instruction set (no library
// call, no table): x = k ln2 + r with k = round(x / ln2) and |r| <= ln2 / 2 (Cody-Waite: ln2 split so
// that k * ln2_hi is exact), e^r by its Taylor polynomial of degree 13 (truncation error below 5e-18
// relative; even and odd halves in r^2 halve the dependency chain), times 2^(k-1) built in the exponent
// bits, times 2 (so k = 1024 works and larger k overflow to inf). Within 2 ulp of std::exp (tested).
typedef long long i8 __attribute__((vector_size(64)));

// Weights below exp(-700) relative to a row's largest (which is 1) are negligible by 300 orders of
// magnitude; they are flushed to 0.
constexpr double kExpFloor = -700.0;

[[gnu::always_inline]] inline v8 exp8_flushed(v8 x) {
  constexpr double log2e = 0x1.71547652b82fep0, ln2_hi = 0x1.62e42feep-1, ln2_lo = 0x1.a39ef35793c76p-33;
  constexpr double round_magic = 0x1.8p52;  // adding it rounds to an integer kept in the low mantissa bits
  constexpr double c[14] = {1.0,         1.0,          1.0 / 2,       1.0 / 6,        1.0 / 24,
                            1.0 / 120,   1.0 / 720,    1.0 / 5040,    1.0 / 40320,    1.0 / 362880,
                            1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800};
  // Clamped to [kExpFloor, 710]: above 709.78 the result overflows to inf as it should; NaN passes.
  v8 xc = x < splat(kExpFloor) ? splat(kExpFloor) : x;
  xc = xc > splat(710.0) ? splat(710.0) : xc;
  const v8 t = xc * splat(log2e) + splat(round_magic);
  const v8 k = t - splat(round_magic);
  v8 r = xc - k * splat(ln2_hi);
  r = r - k * splat(ln2_lo);
  const v8 r2 = r * r;
  v8 even = splat(c[12]), odd = splat(c[13]);
  for (int d = 10; d >= 0; d -= 2) {
    even = even * r2 + splat(c[d]);
    odd = odd * r2 + splat(c[d + 1]);
  }
  const v8 p = even + r * odd;
  i8 bits;
  std::memcpy(&bits, &t, sizeof bits);
  bits = (bits << 52) + (1022LL << 52);  // t's low bits hold k; (k - 1 + 1023) << 52 is 2^(k-1)
  v8 two_k1;
  std::memcpy(&two_k1, &bits, sizeof two_k1);
  const v8 e = (p * two_k1) * splat(2.0);
  return x < splat(kExpFloor) ? v8{} : e;
}
[[gnu::always_inline]] inline double exp_flushed(double x) { return x < kExpFloor ? 0.0 : std::exp(x); }

// s + x * y as the vector code computes it: fused where the instruction set has FMA (GCC contracts the
// vector expressions there), so that a pair's dot product is bitwise the same in the vector body and the
// scalar remainders, whatever the tiling.
[[gnu::always_inline]] inline double madd(double s, double x, double y) {
#if defined(__FMA__)
  return std::fma(x, y, s);
#else
  return s + x * y;
#endif
}

// Rows per register tile of the dot products: 8 rows x 16 columns (16 accumulators) where AVX-512 has 32
// vector registers, 4 x 16 on AVX2 (where one v8 takes two of its 16 registers) and on the baseline.
#if defined(__AVX512F__)
constexpr std::size_t kDotRows = 8;
#else
constexpr std::size_t kDotRows = 4;
#endif

// One register tile of the dot products: kDotRows rows x V vectors of columns, over the whole depth.
template <bool Accumulate, std::size_t V>
[[gnu::always_inline]] inline void register_tile(const double* a, std::size_t lda, const double* bt, std::size_t ldb,
                                                 std::size_t depth, double* out, std::size_t ldo) {
  constexpr std::size_t R = kDotRows;
  v8 acc[R][V] = {};
  if constexpr (Accumulate)
    for (std::size_t q = 0; q < R; ++q)
      for (std::size_t v = 0; v < V; ++v) acc[q][v] = load(out + q * ldo + v * W);
  for (std::size_t k = 0; k < depth; ++k) {
    v8 b[V];
    for (std::size_t v = 0; v < V; ++v) b[v] = load(bt + k * ldb + v * W);
    for (std::size_t q = 0; q < R; ++q) {
      const v8 s = splat(a[q * lda + k]);
      for (std::size_t v = 0; v < V; ++v) acc[q][v] += s * b[v];
    }
  }
  for (std::size_t q = 0; q < R; ++q)
    for (std::size_t v = 0; v < V; ++v) store(out + q * ldo + v * W, acc[q][v]);
}

// Compiled once (noipa: no clones specialised to a caller's constants), so that GCC does not take the
// 16-column panel's size as a bound on the scalar remainder's loop and warn (-Waggressive-loop-optimizations).
template <bool Accumulate>
[[gnu::noipa]] void dot_chunk(const double* a, std::size_t lda, const double* bt, std::size_t ldb,
                              std::size_t rows, std::size_t cols, std::size_t depth, double* out,
                              std::size_t ldo) {
  constexpr std::size_t R = kDotRows, C = 2 * W;
  std::size_t r = 0;
  for (; r + R <= rows; r += R) {
    const double* a0 = a + r * lda;
    std::size_t c = 0;
    for (; c + C <= cols; c += C) register_tile<Accumulate, 2>(a0, lda, bt + c, ldb, depth, out + r * ldo + c, ldo);
    if (c + W <= cols) {  // 8 more columns still in vectors (the bootstrap's replicates are padded to 8)
      register_tile<Accumulate, 1>(a0, lda, bt + c, ldb, depth, out + r * ldo + c, ldo);
      c += W;
    }
    for (; c < cols; ++c)
      for (std::size_t q = 0; q < R; ++q) {
        double s = Accumulate ? out[(r + q) * ldo + c] : 0.0;
        for (std::size_t k = 0; k < depth; ++k) s = madd(s, a0[q * lda + k], bt[k * ldb + c]);
        out[(r + q) * ldo + c] = s;
      }
  }
  for (; r < rows; ++r) {
    const double* ar = a + r * lda;
    std::size_t c = 0;
    for (; c + W <= cols; c += W) {
      v8 acc = Accumulate ? load(out + r * ldo + c) : v8{};
      for (std::size_t k = 0; k < depth; ++k) acc += splat(ar[k]) * load(bt + k * ldb + c);
      store(out + r * ldo + c, acc);
    }
    for (; c < cols; ++c) {
      double s = Accumulate ? out[r * ldo + c] : 0.0;
      for (std::size_t k = 0; k < depth; ++k) s = madd(s, ar[k], bt[k * ldb + c]);
      out[r * ldo + c] = s;
    }
  }
}

// The depth is taken in chunks of 64, so that the slice of bt a chunk reads (256 KB at 512 centres) stays
// in the L2 cache while every group of rows passes over it; at depth 1,000 the whole slice is 4 MB and
// came from memory once per group (64 measured best among 32 to 256). Each output carries its running
// sum from one chunk to the next: the sum over k is still taken in increasing order, bitwise as in one pass.
constexpr std::size_t kDepthChunk = 64;

// Tiles of at least this many rows copy each chunk's 16 columns of bt into a contiguous panel first. In
// place, the 64 rows of a chunk are 64 pages apart (bt's rows are n centres long), more pages than the
// TLB holds: every load missed it, and K = 1,000 ran at 38-50 GFLOP/s where the panel gives 60+ (Xeon,
// 4 KB pages). The copy is read by every row of the tile, so it costs 1/rows of the products.
constexpr std::size_t kPanelRows = 64;

template <bool Accumulate>
void dot_impl(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
              std::size_t cols, std::size_t depth, double* out, std::size_t ldo) {
  constexpr std::size_t C = 2 * W;
  const auto chunk = [&](bool accumulate, std::size_t k0, const double* b, std::size_t ldb_, std::size_t c0,
                         std::size_t nc, std::size_t kd) {
    if (accumulate) dot_chunk<true>(a + k0, lda, b, ldb_, rows, nc, kd, out + c0, ldo);
    else dot_chunk<false>(a + k0, lda, b, ldb_, rows, nc, kd, out + c0, ldo);
  };
  std::size_t k0 = 0;
  do {
    const std::size_t kd = std::min(kDepthChunk, depth - k0);
    const bool accumulate = Accumulate || k0 > 0;
    std::size_t c = 0;
    if (rows >= kPanelRows) {
      alignas(64) double panel[kDepthChunk * C];
      for (; c + C <= cols; c += C) {
        for (std::size_t k = 0; k < kd; ++k) {
          store(panel + k * C, load(bt + (k0 + k) * ldb + c));
          store(panel + k * C + W, load(bt + (k0 + k) * ldb + c + W));
        }
        chunk(accumulate, k0, panel, C, c, C, kd);
      }
    }
    if (c < cols) chunk(accumulate, k0, bt + k0 * ldb + c, ldb, c, cols - c, kd);
  } while ((k0 += kDepthChunk) < depth);
}

void dot(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
         std::size_t cols, std::size_t depth, double* out, std::size_t ldo) {
  dot_impl<false>(a, lda, bt, ldb, rows, cols, depth, out, ldo);
}

void dot_add(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
             std::size_t cols, std::size_t depth, double* out, std::size_t ldo) {
  dot_impl<true>(a, lda, bt, ldb, rows, cols, depth, out, ldo);
}

double affine_max(const double* x, double* out, const double* offset, double scale, std::size_t n,
                  std::size_t skip) {
  constexpr double neg_inf = -std::numeric_limits<double>::infinity();
  const v8 vs = splat(scale);
  v8 vmax = splat(neg_inf);
  std::size_t c = 0;
  for (; c + W <= n; c += W) {
    const v8 v = load(offset + c) + vs * load(x + c);
    store(out + c, v);
    vmax = v > vmax ? v : vmax;
  }
  double m = neg_inf;
  for (std::size_t l = 0; l < W; ++l) m = vmax[l] > m ? vmax[l] : m;
  for (; c < n; ++c) {
    out[c] = offset[c] + scale * x[c];
    m = out[c] > m ? out[c] : m;
  }
  if (skip < n && out[skip] >= m) {  // the skipped entry may have set the maximum: recompute without it
    m = neg_inf;
    for (std::size_t i = 0; i < n; ++i)
      if (i != skip && out[i] > m) m = out[i];
  }
  return m;
}

void affine_exp(double* x, const double* offset, double scale, double shift, std::size_t n) {
  const v8 vs = splat(scale), vshift = splat(shift);
  std::size_t c = 0;
  for (; c + W <= n; c += W) store(x + c, exp8_flushed(load(offset + c) + vs * load(x + c) - vshift));
  for (; c < n; ++c) x[c] = exp_flushed(offset[c] + scale * x[c] - shift);
}

void exp_shifted(double* x, std::size_t n, double shift) {
  const v8 vshift = splat(shift);
  std::size_t c = 0;
  for (; c + W <= n; c += W) store(x + c, exp8_flushed(load(x + c) - vshift));
  for (; c < n; ++c) x[c] = exp_flushed(x[c] - shift);
}

double sum(const double* x, std::size_t n) {
  v8 acc = {};
  std::size_t c = 0;
  for (; c + W <= n; c += W) acc += load(x + c);
  double s = reduce(acc);
  for (; c < n; ++c) s += x[c];
  return s;
}

void scale(double* x, std::size_t n, double a) {
  const v8 va = splat(a);
  std::size_t c = 0;
  for (; c + W <= n; c += W) store(x + c, load(x + c) * va);
  for (; c < n; ++c) x[c] *= a;
}

void row_dots(const double* b, std::size_t ldb, std::size_t rows, std::size_t cols, const double* xt,
              std::size_t ldx, std::size_t depth, double* out) {
  constexpr std::size_t Q = 4, K = 4;  // 4 rows x 4 features per pass: 8 loads feed 16 FMAs
  const std::size_t cv = cols / W * W;
  for (std::size_t q0 = 0; q0 < rows; q0 += Q) {
    const std::size_t nq = std::min(Q, rows - q0);
    for (std::size_t k0 = 0; k0 < depth; k0 += K) {
      const std::size_t nk = std::min(K, depth - k0);
      v8 acc[Q][K] = {};
      for (std::size_t c = 0; c < cv; c += W) {
        v8 xv[K], bv[Q];
        for (std::size_t k = 0; k < nk; ++k) xv[k] = load(xt + (k0 + k) * ldx + c);
        for (std::size_t q = 0; q < nq; ++q) bv[q] = load(b + (q0 + q) * ldb + c);
        for (std::size_t q = 0; q < nq; ++q)
          for (std::size_t k = 0; k < nk; ++k) acc[q][k] += bv[q] * xv[k];
      }
      for (std::size_t q = 0; q < nq; ++q)
        for (std::size_t k = 0; k < nk; ++k) {
          double s = reduce(acc[q][k]);
          for (std::size_t c = cv; c < cols; ++c) s += b[(q0 + q) * ldb + c] * xt[(k0 + k) * ldx + c];
          out[(q0 + q) * depth + k0 + k] += s;
        }
    }
  }
}

void label_scatter(const double* wt, std::size_t cols, const std::uint16_t* labels, std::size_t copies,
                   std::size_t classes, double* acc) {
  // Copies in chunks whose accumulators (chunk x classes x 16 doubles) stay in L1; each accumulator
  // still receives the centres in increasing order, so the sums do not depend on the chunking.
  const std::size_t chunk = std::max<std::size_t>(1, 128 / classes);
  for (std::size_t b0 = 0; b0 < copies; b0 += chunk) {
    const std::size_t b1 = std::min(copies, b0 + chunk);
    for (std::size_t c = 0; c < cols; ++c) {
      const v8 w0 = load(wt + c * 16), w1 = load(wt + c * 16 + W);
      const std::uint16_t* lab = labels + c * copies;
      for (std::size_t b = b0; b < b1; ++b) {
        double* a = acc + (b * classes + lab[b]) * 16;
        store(a, load(a) + w0);
        store(a + W, load(a + W) + w1);
      }
    }
  }
}

}  // namespace

TileKernels make_kernels() {
#define ECEKDE_STR2(x) #x
#define ECEKDE_STR(x) ECEKDE_STR2(x)
  return TileKernels{ECEKDE_STR(ECEKDE_ISA), dot, dot_add, affine_max, affine_exp, exp_shifted, sum, scale, row_dots,
                     label_scatter};
}

}  // namespace ecekde::detail::ECEKDE_CAT(isa_, ECEKDE_ISA)
