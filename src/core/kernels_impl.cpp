// Tile kernels, compiled once per instruction set: this file is built with ECEKDE_ISA set to
// avx512, avx2 or baseline and matching -m flags (see src/core/CMakeLists.txt). GCC vector extensions
// give one source for all widths; exp goes to glibc's libmvec where available (no -ffast-math needed).
#include <cmath>
#include <cstring>
#include <limits>

#include "core/kernels.hpp"

#if defined(ECEKDE_HAVE_LIBMVEC) && (defined(__AVX512F__) || defined(__AVX2__) || defined(__SSE2__))
#include <immintrin.h>
#define ECEKDE_VECTOR_EXP 1
#endif

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

#if defined(ECEKDE_VECTOR_EXP) && defined(__AVX512F__)
extern "C" __m512d _ZGVeN8v_exp(__m512d);
[[gnu::always_inline]] inline v8 exp8(v8 x) { return (v8)_ZGVeN8v_exp((__m512d)x); }
#elif defined(ECEKDE_VECTOR_EXP) && defined(__AVX2__)
extern "C" __m256d _ZGVdN4v_exp(__m256d);
[[gnu::always_inline]] inline v8 exp8(v8 x) {
  __m256d lo, hi;
  std::memcpy(&lo, &x, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&x) + sizeof lo, sizeof hi);
  lo = _ZGVdN4v_exp(lo);
  hi = _ZGVdN4v_exp(hi);
  v8 r;
  std::memcpy(&r, &lo, sizeof lo);
  std::memcpy(reinterpret_cast<char*>(&r) + sizeof lo, &hi, sizeof hi);
  return r;
}
#elif defined(ECEKDE_VECTOR_EXP)
extern "C" __m128d _ZGVbN2v_exp(__m128d);
[[gnu::always_inline]] inline v8 exp8(v8 x) {
  __m128d part[4];
  std::memcpy(part, &x, sizeof part);
  for (auto& q : part) q = _ZGVbN2v_exp(q);
  v8 r;
  std::memcpy(&r, part, sizeof r);
  return r;
}
#else
[[gnu::always_inline]] inline v8 exp8(v8 x) {
  for (std::size_t l = 0; l < W; ++l) x[l] = std::exp(x[l]);
  return x;
}
#endif

// Weights below exp(-700) relative to a row's largest (which is 1) are negligible by 300 orders of
// magnitude; flushing them to 0 keeps libmvec off its slow scalar path for underflowing lanes.
constexpr double kExpFloor = -700.0;

[[gnu::always_inline]] inline v8 exp8_flushed(v8 x) {
  const v8 lim = splat(kExpFloor);
  const v8 r = exp8(x < lim ? lim : x);
  return x < lim ? v8{} : r;
}
[[gnu::always_inline]] inline double exp_flushed(double x) { return x < kExpFloor ? 0.0 : std::exp(x); }

template <bool Accumulate>
void dot_impl(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
              std::size_t cols, std::size_t depth, double* out, std::size_t ldo) {
  constexpr std::size_t R = 4, C = 2 * W;
  std::size_t r = 0;
  for (; r + R <= rows; r += R) {
    const double* a0 = a + r * lda;
    std::size_t c = 0;
    for (; c + C <= cols; c += C) {
      v8 acc[R][2] = {};
      if constexpr (Accumulate)
        for (std::size_t q = 0; q < R; ++q) {
          acc[q][0] = load(out + (r + q) * ldo + c);
          acc[q][1] = load(out + (r + q) * ldo + c + W);
        }
      for (std::size_t k = 0; k < depth; ++k) {
        const v8 b0 = load(bt + k * ldb + c), b1 = load(bt + k * ldb + c + W);
        for (std::size_t q = 0; q < R; ++q) {
          const v8 s = splat(a0[q * lda + k]);
          acc[q][0] += s * b0;
          acc[q][1] += s * b1;
        }
      }
      for (std::size_t q = 0; q < R; ++q) {
        store(out + (r + q) * ldo + c, acc[q][0]);
        store(out + (r + q) * ldo + c + W, acc[q][1]);
      }
    }
    for (; c < cols; ++c)
      for (std::size_t q = 0; q < R; ++q) {
        double s = Accumulate ? out[(r + q) * ldo + c] : 0.0;
        for (std::size_t k = 0; k < depth; ++k) s += a0[q * lda + k] * bt[k * ldb + c];
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
      for (std::size_t k = 0; k < depth; ++k) s += ar[k] * bt[k * ldb + c];
      out[r * ldo + c] = s;
    }
  }
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
  for (std::size_t c = 0; c < cols; ++c) {
    const v8 w0 = load(wt + c * 16), w1 = load(wt + c * 16 + W);
    const std::uint16_t* lab = labels + c * copies;
    for (std::size_t b = 0; b < copies; ++b) {
      double* a = acc + (b * classes + lab[b]) * 16;
      store(a, load(a) + w0);
      store(a + W, load(a + W) + w1);
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
