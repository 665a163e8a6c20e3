// Tile kernels, compiled once per instruction set: this file is built with ECEKDE_ISA set to
// avx512, avx2 or baseline and matching -m flags (see src/core/CMakeLists.txt). GCC vector extensions
// give one source for all widths; exp is a polynomial of our own below (no -ffast-math, no libmvec).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/kernels.hpp"

#define ECEKDE_CAT2(a, b) a##b
#define ECEKDE_CAT(a, b) ECEKDE_CAT2(a, b)

namespace ecekde::detail::ECEKDE_CAT(isa_, ECEKDE_ISA) {
namespace {

// One 512-bit vector of T (8 doubles or 16 floats), held as the instruction set's own vectors: one on
// AVX-512, two on AVX2, four on the baseline. Every lane's arithmetic is the same in each, so each variant
// computes the same results; only the registers differ. GCC's own 512-bit vector type, split by the
// compiler on AVX2 and the baseline, kept arrays of such vectors (the dot kernel's accumulators) and even
// one running sum in memory, with a store and a reload around every add: the dot kernel ran at 4 GFLOP/s
// on an AVX2 EPYC where OpenBLAS ran at 45 (docs/benchmarks.md).
// Under AddressSanitizer GCC's own 512-bit type stays the vector, as before the packs: ASan kept the packs
// on the stack, and the sanitizer build's tests took two to four times as long with them (the Release
// build's tests run the packs).
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kNativeBytes = 64;
template <class T>
struct VectorOf {
  typedef T type __attribute__((vector_size(64)));
};
template <class T>
using vec = typename VectorOf<T>::type;
template <class T>
using Native = vec<T>;
template <class T>
[[gnu::always_inline]] inline vec<T> load_native(const T* p) {
  vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
[[gnu::always_inline]] inline void store_native(T* p, vec<T> v) {
  std::memcpy(p, &v, sizeof v);
}
template <class T>
[[gnu::always_inline]] inline vec<T> load(const T* p) { return load_native(p); }
template <class T>
[[gnu::always_inline]] inline void store(T* p, vec<T> v) { store_native(p, v); }
template <class M, class V>
[[gnu::always_inline]] inline V select(M mask, V a, V b) { return mask ? a : b; }
template <class To, class From>
[[gnu::always_inline]] inline vec<To> bit_cast_pack(From v) { return (vec<To>)v; }
template <class T>
[[gnu::always_inline]] inline vec<T> splat(T x) { return x - vec<T>{}; }
template <class V>
[[gnu::always_inline]] inline V multiply_add(V s, V x, V y) { return s + x * y; }
template <class V, class T>
[[gnu::always_inline]] inline void set_lane(V& v, std::size_t lane, T x) { v[lane] = x; }
#else
#if defined(__AVX512F__)
constexpr std::size_t kNativeBytes = 64;
#elif defined(__AVX2__)
constexpr std::size_t kNativeBytes = 32;
#else
constexpr std::size_t kNativeBytes = 16;
#endif

template <class T>
struct Pack {
  static constexpr std::size_t kParts = 64 / kNativeBytes, kPartLanes = kNativeBytes / sizeof(T);
  typedef T Native __attribute__((vector_size(kNativeBytes)));
  Native part[kParts];

  T operator[](std::size_t lane) const { return part[lane / kPartLanes][lane % kPartLanes]; }
  void set(std::size_t lane, T v) { part[lane / kPartLanes][lane % kPartLanes] = v; }
};

// Lane by lane, part by part (the loops have constant bounds and are unrolled).
template <class T, class Op>
[[gnu::always_inline]] inline auto lanewise(Pack<T> a, Pack<T> b, Op op) {
  Pack<std::remove_cvref_t<decltype(op(a.part[0], b.part[0])[0])>> out;
  for (std::size_t i = 0; i < Pack<T>::kParts; ++i) out.part[i] = op(a.part[i], b.part[i]);
  return out;
}
#define ECEKDE_PACK_OPERATOR(op)                                                                      \
  template <class T>                                                                                  \
  [[gnu::always_inline]] inline Pack<T> operator op(Pack<T> a, Pack<T> b) {                           \
    for (std::size_t i = 0; i < Pack<T>::kParts; ++i) a.part[i] = a.part[i] op b.part[i];            \
    return a;                                                                                         \
  }                                                                                                   \
  template <class T>                                                                                  \
  [[gnu::always_inline]] inline Pack<T>& operator op##=(Pack<T>& a, Pack<T> b) {                      \
    return a = a op b;                                                                                \
  }
ECEKDE_PACK_OPERATOR(+)
ECEKDE_PACK_OPERATOR(-)
ECEKDE_PACK_OPERATOR(*)
ECEKDE_PACK_OPERATOR(/)
#undef ECEKDE_PACK_OPERATOR
template <class T>
[[gnu::always_inline]] inline Pack<T> operator-(Pack<T> a) {
  for (auto& p : a.part) p = -p;
  return a;
}
// The integer lanes of exp's exponent bits: a shift and an added constant.
template <class T>
[[gnu::always_inline]] inline Pack<T> operator<<(Pack<T> a, int bits) {
  for (auto& p : a.part) p = p << bits;
  return a;
}
template <class T>
[[gnu::always_inline]] inline Pack<T> operator+(Pack<T> a, T b) {
  for (auto& p : a.part) p = p + b;
  return a;
}
// Comparisons give masks (integer lanes of all ones or zeros), read by select().
#define ECEKDE_PACK_COMPARISON(op)                                                                    \
  template <class T>                                                                                  \
  [[gnu::always_inline]] inline auto operator op(Pack<T> a, Pack<T> b) {                              \
    return lanewise(a, b, [](auto x, auto y) { return x op y; });                                     \
  }
ECEKDE_PACK_COMPARISON(<)
ECEKDE_PACK_COMPARISON(>)
#undef ECEKDE_PACK_COMPARISON
// mask ? a : b, lane by lane.
template <class M, class T>
[[gnu::always_inline]] inline Pack<T> select(Pack<M> mask, Pack<T> a, Pack<T> b) {
  for (std::size_t i = 0; i < Pack<T>::kParts; ++i) a.part[i] = mask.part[i] ? a.part[i] : b.part[i];
  return a;
}

template <class T>
using vec = Pack<T>;
template <class T>
using Native = typename vec<T>::Native;

// Each part loaded and stored as the instruction set's vector, through a pointer to an unaligned vector
// type (a memcpy of the whole pack went through the stack).
template <class T>
struct UnalignedOf {
  typedef T type __attribute__((vector_size(kNativeBytes), aligned(sizeof(T)), may_alias));
};
template <class T>
[[gnu::always_inline]] inline typename vec<T>::Native load_native(const T* p) {
  return *reinterpret_cast<const typename UnalignedOf<T>::type*>(p);
}
template <class T>
[[gnu::always_inline]] inline void store_native(T* p, typename vec<T>::Native v) {
  *reinterpret_cast<typename UnalignedOf<T>::type*>(p) = v;
}
template <class T>
[[gnu::always_inline]] inline vec<T> load(const T* p) {
  vec<T> v;
  for (std::size_t i = 0; i < vec<T>::kParts; ++i) v.part[i] = load_native(p + i * vec<T>::kPartLanes);
  return v;
}
template <class T>
[[gnu::always_inline]] inline void store(T* p, vec<T> v) {
  for (std::size_t i = 0; i < vec<T>::kParts; ++i) store_native(p + i * vec<T>::kPartLanes, v.part[i]);
}
// The same 64 bytes as lanes of another type (exp's exponent bits).
template <class To, class From>
[[gnu::always_inline]] inline vec<To> bit_cast_pack(vec<From> v) {
  static_assert(sizeof(To) == sizeof(From));
  vec<To> out;
  for (std::size_t i = 0; i < vec<To>::kParts; ++i) out.part[i] = (typename vec<To>::Native)v.part[i];
  return out;
}
// x in every lane. As x - 0 (an identity, so the compiler emits the broadcast alone); 0 + x is not one
// (it turns -0 into +0) and cost an add before every broadcast: in the score tree's small products, whose
// register tiles are one vector wide, that add sat on each multiply-add's chain.
template <class T>
[[gnu::always_inline]] inline vec<T> splat(T x) {
  vec<T> v;
  for (auto& p : v.part) p = x - typename vec<T>::Native{};
  return v;
}
// s + x y lane by lane, as one expression of the instruction set's vectors per part (contracted to FMAs).
template <class T>
[[gnu::always_inline]] inline vec<T> multiply_add(vec<T> s, vec<T> x, vec<T> y) {
  for (std::size_t i = 0; i < vec<T>::kParts; ++i) s.part[i] = s.part[i] + x.part[i] * y.part[i];
  return s;
}
template <class T>
[[gnu::always_inline]] inline void set_lane(vec<T>& v, std::size_t lane, T x) { v.set(lane, x); }
#endif

template <class T>
constexpr std::size_t kLanes = 64 / sizeof(T);
typedef vec<double> v8;
constexpr std::size_t W = kLanes<double>;

// Horizontal sum in a fixed lane order.
[[gnu::always_inline]] inline double reduce(v8 acc) {
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// exp by range reduction and a polynomial, in the vector width of the instruction set (no library
// call, no table): x = k ln2 + r with k = round(x / ln2) and |r| <= ln2 / 2 (Cody-Waite: ln2 split so
// that k * ln2_hi is exact), e^r by its Taylor polynomial of degree 13 (truncation error below 5e-18
// relative; even and odd halves in r^2 halve the dependency chain), times 2^(k-1) built in the exponent
// bits, times 2 (so k = 1024 works and larger k overflow to inf). Within 2 ulp of std::exp (tested).

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
  v8 xc = select(x < splat(kExpFloor), splat(kExpFloor), x);
  xc = select(xc > splat(710.0), splat(710.0), xc);
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
  // t's low bits hold k; (k - 1 + 1023) << 52 is 2^(k-1)
  const v8 two_k1 = bit_cast_pack<double>((bit_cast_pack<long long>(t) << 52) + (1022LL << 52));
  const v8 e = (p * two_k1) * splat(2.0);
  return select(x < splat(kExpFloor), v8{}, e);
}
[[gnu::always_inline]] inline double exp_flushed(double x) { return x < kExpFloor ? 0.0 : std::exp(x); }

// s + x * y as the vector code computes it: fused where the instruction set has FMA (GCC contracts the
// vector expressions there), so that a pair's dot product is bitwise the same in the vector body and the
// scalar remainders, whatever the tiling.
template <class T>
[[gnu::always_inline]] inline T madd(T s, T x, T y) {
#if defined(__FMA__)
  return std::fma(x, y, s);
#else
  return s + x * y;
#endif
}

// The register tile of the dot products: kDotRows rows x kDotVectors of the instruction set's own vectors
// of columns (whatever the lanes' grouping into 512 bits: each output is its own lane's sum over the depth
// in order, so the tile's shape changes no result). AVX-512 (32 vector registers) takes 4 x 5 (20
// accumulators, 4 broadcasts and 5 loads per 20 multiply-adds): on the Xeon of docs/benchmarks.md it ran
// the crossfit's payload product (128 x 1,000 x 512) at 1.4 times the rate of the 8 x 2 tile it replaced,
// and the K = 100 and 1,000 dot products at 1.2 to 1.4 times. AVX2 (16 registers) takes 4 x 3: 12
// accumulators, 3 loads and a broadcast. The baseline (16 registers of 2 doubles) takes 3 x 4. Under
// AddressSanitizer the vector is GCC's 512-bit type on every instruction set, with the 4 x 2 of before.
#if defined(__AVX512F__)
constexpr std::size_t kDotRows = 4, kDotVectors = 5;
#elif defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kDotRows = 4, kDotVectors = 2;
#elif defined(__AVX2__)
constexpr std::size_t kDotRows = 4, kDotVectors = 3;
#else
constexpr std::size_t kDotRows = 3, kDotVectors = 4;
#endif
template <class T>
constexpr std::size_t kNativeLanes = kNativeBytes / sizeof(T);

// The rows of the products' right-hand side: bt's row k at bt + k ldb, or, gathered, at bt + index[k] ldb.
template <class T>
struct StridedRows {
  const T* bt;
  std::size_t ldb;
  const T* operator()(std::size_t k) const { return bt + k * ldb; }
};
struct GatheredRows {
  const double* bt;
  std::size_t ldb;
  const std::uint32_t* index;
  const double* operator()(std::size_t k) const { return bt + index[k] * ldb; }
};

// One register tile of the dot products: R rows x V vectors of columns from column c on, over the whole
// depth.
template <class T, bool Accumulate, std::size_t R, std::size_t V, class Rows>
[[gnu::always_inline]] inline void register_tile(const T* a, std::size_t lda, Rows bt, std::size_t c,
                                                 std::size_t depth, T* out, std::size_t ldo) {
  constexpr std::size_t W = kNativeLanes<T>;
  Native<T> acc[R][V] = {};
  if constexpr (Accumulate)
    for (std::size_t q = 0; q < R; ++q)
      for (std::size_t v = 0; v < V; ++v) acc[q][v] = load_native(out + q * ldo + v * W);
  for (std::size_t k = 0; k < depth; ++k) {
    Native<T> b[V];
    const T* row = bt(k) + c;
    for (std::size_t v = 0; v < V; ++v) b[v] = load_native(row + v * W);
    for (std::size_t q = 0; q < R; ++q) {
      const Native<T> s = a[q * lda + k] - Native<T>{};
      for (std::size_t v = 0; v < V; ++v) acc[q][v] += s * b[v];
    }
  }
  for (std::size_t q = 0; q < R; ++q)
    for (std::size_t v = 0; v < V; ++v) store_native(out + q * ldo + v * W, acc[q][v]);
}

// The register tile of R rows and V vectors of columns, V below kDotVectors (a row block's last columns),
// or none.
template <class T, bool Accumulate, std::size_t R, class Rows, std::size_t V = kDotVectors - 1>
[[gnu::always_inline]] inline void narrower_tile(std::size_t vectors, const T* a, std::size_t lda, Rows bt,
                                                 std::size_t c, std::size_t depth, T* out, std::size_t ldo) {
  if constexpr (V > 0) {
    if (vectors == V) register_tile<T, Accumulate, R, V>(a, lda, bt, c, depth, out, ldo);
    else narrower_tile<T, Accumulate, R, Rows, V - 1>(vectors, a, lda, bt, c, depth, out, ldo);
  }
}

// R rows of the product: whole register tiles, a narrower one, then the columns left one by one.
template <class T, bool Accumulate, std::size_t R, class Rows>
[[gnu::always_inline]] inline void row_block(const T* a, std::size_t lda, Rows bt, std::size_t cols,
                                             std::size_t depth, T* out, std::size_t ldo) {
  constexpr std::size_t W = kNativeLanes<T>, C = kDotVectors * W;
  std::size_t c = 0;
  for (; c + C <= cols; c += C) register_tile<T, Accumulate, R, kDotVectors>(a, lda, bt, c, depth, out + c, ldo);
  const std::size_t vectors = (cols - c) / W;  // whole vectors left
  narrower_tile<T, Accumulate, R>(vectors, a, lda, bt, c, depth, out + c, ldo);
  for (c += vectors * W; c < cols; ++c)
    for (std::size_t q = 0; q < R; ++q) {
      T s = Accumulate ? out[q * ldo + c] : T{};
      for (std::size_t k = 0; k < depth; ++k) s = madd(s, a[q * lda + k], bt(k)[c]);
      out[q * ldo + c] = s;
    }
}

// The rows left below a whole tile (`left` < kDotRows) as one block of their own count.
template <class T, bool Accumulate, class Rows, std::size_t R = kDotRows - 1>
[[gnu::always_inline]] inline void last_rows(std::size_t left, const T* a, std::size_t lda, Rows bt, std::size_t cols,
                                             std::size_t depth, T* out, std::size_t ldo) {
  if constexpr (R > 0) {
    if (left == R) row_block<T, Accumulate, R>(a, lda, bt, cols, depth, out, ldo);
    else last_rows<T, Accumulate, Rows, R - 1>(left, a, lda, bt, cols, depth, out, ldo);
  }
}

// Compiled once (noipa: no clones specialised to a caller's constants), so that GCC does not take the
// panel's size as a bound on the scalar remainder's loop and warn (-Waggressive-loop-optimizations). The
// rows below a whole tile take a block of their own count, so their vectors' chains of multiply-adds run
// side by side: one at a time, the score tree's moments of a payload-free request (2 rows, depth 128)
// waited on each multiply-add's latency.
template <class T, bool Accumulate, class Rows = StridedRows<T>>
[[gnu::noipa]] void dot_chunk(const T* a, std::size_t lda, Rows bt, std::size_t rows, std::size_t cols,
                              std::size_t depth, T* out, std::size_t ldo) {
  std::size_t r = 0;
  for (; r + kDotRows <= rows; r += kDotRows)
    row_block<T, Accumulate, kDotRows>(a + r * lda, lda, bt, cols, depth, out + r * ldo, ldo);
  last_rows<T, Accumulate>(rows - r, a + r * lda, lda, bt, cols, depth, out + r * ldo, ldo);
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

template <class T, bool Accumulate>
void dot_impl(const T* a, std::size_t lda, const T* bt, std::size_t ldb, std::size_t rows,
              std::size_t cols, std::size_t depth, T* out, std::size_t ldo) {
  constexpr std::size_t W = kNativeLanes<T>, C = kDotVectors * W;
  const auto chunk = [&](bool accumulate, std::size_t k0, const T* b, std::size_t ldb_, std::size_t c0,
                         std::size_t nc, std::size_t kd) {
    if (accumulate) dot_chunk<T, true>(a + k0, lda, StridedRows<T>{b, ldb_}, rows, nc, kd, out + c0, ldo);
    else dot_chunk<T, false>(a + k0, lda, StridedRows<T>{b, ldb_}, rows, nc, kd, out + c0, ldo);
  };
  std::size_t k0 = 0;
  do {
    const std::size_t kd = std::min(kDepthChunk, depth - k0);
    const bool accumulate = Accumulate || k0 > 0;
    std::size_t c = 0;
    if (rows >= kPanelRows) {
      alignas(64) T panel[kDepthChunk * C];
      for (; c + C <= cols; c += C) {
        for (std::size_t k = 0; k < kd; ++k)
          for (std::size_t v = 0; v < kDotVectors; ++v)
            store_native(panel + k * C + v * W, load_native(bt + (k0 + k) * ldb + c + v * W));
        chunk(accumulate, k0, panel, C, c, C, kd);
      }
    }
    if (c < cols) chunk(accumulate, k0, bt + k0 * ldb + c, ldb, c, cols - c, kd);
  } while ((k0 += kDepthChunk) < depth);
}

void dot(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
         std::size_t cols, std::size_t depth, double* out, std::size_t ldo) {
  dot_impl<double, false>(a, lda, bt, ldb, rows, cols, depth, out, ldo);
}

void dot_add(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
             std::size_t cols, std::size_t depth, double* out, std::size_t ldo) {
  dot_impl<double, true>(a, lda, bt, ldb, rows, cols, depth, out, ldo);
}

void gathered_dot_add(const double* a, std::size_t lda, const double* bt, std::size_t ldb, const std::uint32_t* index,
                      std::size_t rows, std::size_t cols, std::size_t depth, double* out, std::size_t ldo) {
  dot_chunk<double, true>(a, lda, GatheredRows{bt, ldb, index}, rows, cols, depth, out, ldo);
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
    vmax = select(v > vmax, v, vmax);
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

void affine_exp(const double* x, double* out, const double* offset, double scale, double shift, std::size_t n) {
  const v8 vs = splat(scale), vshift = splat(shift);
  std::size_t c = 0;
  for (; c + W <= n; c += W) store(out + c, exp8_flushed(load(offset + c) + vs * load(x + c) - vshift));
  for (; c < n; ++c) out[c] = exp_flushed(offset[c] + scale * x[c] - shift);
}

// affine_exp and affine_max in one pass: each score made once, its exponential and the maximum taken from
// it in registers (affine_max, the pass that wrote the scores for exp_shifted to read, took 7% to 8% of a
// canonical estimate at n = 50,000, K = 10). The same expressions as theirs, so the same bits: the scores are
// fused multiply-adds in the vector body and the scalar tail alike where the instruction set has FMA (GCC
// contracts both), and the maximum without `skip` is recomputed from the same expression.
double affine_exp_max(const double* x, double* out, const double* offset, double scale, double shift, std::size_t n,
                      std::size_t skip) {
  constexpr double neg_inf = -std::numeric_limits<double>::infinity();
  const v8 vs = splat(scale), vshift = splat(shift);
  v8 vmax = splat(neg_inf);
  std::size_t c = 0;
  for (; c + W <= n; c += W) {
    const v8 v = load(offset + c) + vs * load(x + c);
    vmax = select(v > vmax, v, vmax);
    store(out + c, exp8_flushed(v - vshift));
  }
  double m = neg_inf;
  for (std::size_t l = 0; l < W; ++l) m = vmax[l] > m ? vmax[l] : m;
  for (; c < n; ++c) {
    const double v = offset[c] + scale * x[c];
    out[c] = exp_flushed(v - shift);
    m = v > m ? v : m;
  }
  if (skip < n && offset[skip] + scale * x[skip] >= m) {  // as affine_max: the maximum without the skipped entry
    m = neg_inf;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = offset[i] + scale * x[i];
      if (i != skip && v > m) m = v;
    }
  }
  return m;
}

void exp_shifted(double* x, std::size_t n, double shift) {
  const v8 vshift = splat(shift);
  std::size_t c = 0;
  for (; c + W <= n; c += W) store(x + c, exp8_flushed(load(x + c) - vshift));
  for (; c < n; ++c) x[c] = exp_flushed(x[c] - shift);
}

// The float path (ExecutionOptions::precision): dot products in float, and each score rounded once to
// float where it is of the size of the row's largest score, then exp in 16 float lanes.
typedef vec<float> v16;

void dot_float(const float* a, std::size_t lda, const float* bt, std::size_t ldb, std::size_t rows,
               std::size_t cols, std::size_t depth, float* out, std::size_t ldo) {
  dot_impl<float, false>(a, lda, bt, ldb, rows, cols, depth, out, ldo);
}

// In float, weights below exp(-80) = 1.8e-35 of a row's largest are flushed to 0: negligible next to
// float's rounding by 27 orders of magnitude, and 2^k stays a normal number.
constexpr float kExpFloorFloat = -80.0f;

// exp in float lanes, as exp8_flushed: k = round(x / ln2), r = x - k ln2 with ln2 in two parts (k * ln2_hi
// exact for |k| < 2^9), e^r by its Taylor polynomial of degree 7 (truncation below 6e-9 relative at
// |r| <= ln2 / 2), times 2^(k-1) in the exponent bits, times 2. Within 2 ulp of std::exp in float for
// x <= 88 (tested). Unlike exp8_flushed there is no clamp above: every argument here is a score minus the
// row's running maximum, at most 0, except the row's own pair, whose weight the caller sets to 0 (above
// 88.7 the exponent bits wrap, NaN still gives NaN).
[[gnu::always_inline]] inline v16 exp16_flushed(v16 x) {
  constexpr float log2e = 0x1.715476p0f, ln2_hi = 0x1.62e4p-1f, ln2_lo = 0x1.7f7d1cp-20f;
  constexpr float round_magic = 0x1.8p23f;
  constexpr float c[8] = {1.0f, 1.0f, 1.0f / 2, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040};
  const v16 xc = select(x < splat(kExpFloorFloat), splat(kExpFloorFloat), x);
  const v16 t = xc * splat(log2e) + splat(round_magic);
  const v16 k = t - splat(round_magic);
  v16 r = xc - k * splat(ln2_hi);
  r = r - k * splat(ln2_lo);
  const v16 r2 = r * r;
  const v16 even = ((splat(c[6]) * r2 + splat(c[4])) * r2 + splat(c[2])) * r2 + splat(c[0]);
  const v16 odd = ((splat(c[7]) * r2 + splat(c[5])) * r2 + splat(c[3])) * r2 + splat(c[1]);
  const v16 p = even + r * odd;
  // t's low bits hold k; (k - 1 + 127) << 23 is 2^(k-1)
  const v16 two_k1 = bit_cast_pack<float>((bit_cast_pack<unsigned>(t) << 23) + (126u << 23));
  const v16 e = (p * two_k1) * splat(2.0f);
  return select(x < splat(kExpFloorFloat), v16{}, e);
}

// The score offset + scale * d of a float dot product d, with the offset carried as two floats hi + lo:
// hi + scale * d is rounded once (a fused multiply-add), where it is about as large as the row's largest
// score (tens), not the offset (up to thousands at small h). Without FMA the same sum is formed in double.
[[gnu::always_inline]] inline v16 score16(v16 d, v16 scale, v16 hi, v16 lo) {
#if defined(__FMA__)
  // Contracted to one FMA, as in madd: one expression per part of the instruction set's vectors, so that
  // the product is never rounded on its own (as two pack operators it was, under AddressSanitizer).
  return multiply_add(hi, scale, d) + lo;
#else
  v16 rounded;
  for (std::size_t l = 0; l < kLanes<float>; ++l)
    set_lane(rounded, l, static_cast<float>(static_cast<double>(hi[l]) + static_cast<double>(scale[l]) * static_cast<double>(d[l])));
  return rounded + lo;
#endif
}
[[gnu::always_inline]] inline float score1(float d, float scale, float hi, float lo) {
#if defined(__FMA__)
  return std::fma(scale, d, hi) + lo;
#else
  return static_cast<float>(static_cast<double>(hi) + static_cast<double>(scale) * static_cast<double>(d)) + lo;
#endif
}

float score_max_float(const float* d, const float* hi, const float* lo, float scale, float* out, std::size_t n,
                      std::size_t skip) {
  constexpr float neg_inf = -std::numeric_limits<float>::infinity();
  constexpr std::size_t F = kLanes<float>;
  const v16 vs = splat(scale);
  v16 vmax = splat(neg_inf);
  std::size_t c = 0;
  for (; c + F <= n; c += F) {
    const v16 v = score16(load(d + c), vs, load(hi + c), load(lo + c));
    store(out + c, v);
    vmax = select(v > vmax, v, vmax);
  }
  float m = neg_inf;
  for (std::size_t l = 0; l < F; ++l) m = vmax[l] > m ? vmax[l] : m;
  for (; c < n; ++c) m = std::max(m, out[c] = score1(d[c], scale, hi[c], lo[c]));
  if (skip < n && out[skip] >= m) {  // the skipped entry may have set the maximum: recompute without it
    m = neg_inf;
    for (std::size_t i = 0; i < n; ++i)
      if (i != skip) m = std::max(m, out[i]);
  }
  return m;
}

void exp_shifted_float(float* x, std::size_t n, float shift) {
  constexpr std::size_t F = kLanes<float>;
  const v16 vshift = splat(shift);
  std::size_t c = 0;
  for (; c + F <= n; c += F) store(x + c, exp16_flushed(load(x + c) - vshift));
  for (; c < n; ++c) x[c] = x[c] - shift < kExpFloorFloat ? 0.0f : std::exp(x[c] - shift);
}

double sum_float(const float* x, std::size_t n) {
  constexpr std::size_t F = kLanes<float>;
  v16 acc = {};
  std::size_t c = 0;
  for (; c + F <= n; c += F) acc += load(x + c);
  // Halves folded onto each other down to one lane, in a fixed order.
  float h8[8], h4[4];
  for (std::size_t l = 0; l < 8; ++l) h8[l] = acc[l] + acc[l + 8];
  for (std::size_t l = 0; l < 4; ++l) h4[l] = h8[l] + h8[l + 4];
  double s = double{(h4[0] + h4[2]) + (h4[1] + h4[3])};
  for (; c < n; ++c) s += double{x[c]};
  return s;
}

void widen(const float* x, double* out, std::size_t n) {
  for (std::size_t c = 0; c < n; ++c) out[c] = double{x[c]};
}

double sum(const double* x, std::size_t n) {
  v8 acc = {};
  std::size_t c = 0;
  for (; c + W <= n; c += W) acc += load(x + c);
  double s = reduce(acc);
  for (; c < n; ++c) s += x[c];
  return s;
}

void sum_and_squares(const double* x, std::size_t n, double* sum, double* squares) {
  // Four vectors of each (one vector's chain of adds waits on the add's latency at every step).
  v8 s[4] = {}, q[4] = {};
  std::size_t c = 0;
  for (; c + 4 * W <= n; c += 4 * W)
    for (std::size_t u = 0; u < 4; ++u) {
      const v8 v = load(x + c + u * W);
      s[u] += v;
      q[u] += v * v;
    }
  for (; c + W <= n; c += W) {
    const v8 v = load(x + c);
    s[0] += v;
    q[0] += v * v;
  }
  double a = reduce((s[0] + s[1]) + (s[2] + s[3])), b = reduce((q[0] + q[1]) + (q[2] + q[3]));
  for (; c < n; ++c) {
    a += x[c];
    b += x[c] * x[c];
  }
  *sum += a;
  *squares += b;
}

void interpolate(const double* x, std::size_t n, const double* t, const double* weight, std::size_t points,
                 double unit, const double* g, std::size_t columns, double* out, double* product) {
  // Rows in the lanes, so that every operation is a vector one and nothing is reduced across lanes.
  v8 c[kMostInterpolationPoints];
  for (std::size_t r = 0; r < n; r += W) {
    const std::size_t lanes = std::min(W, n - r);
    alignas(64) double xs[W];
    for (std::size_t q = 0; q < W; ++q) xs[q] = x[r + (q < lanes ? q : 0)];  // the tail repeats a row
    const v8 xv = load(xs);
    v8 den = {}, prod = splat(1.0);
    for (std::size_t k = 0; k < points; ++k) {
      const v8 d = xv - splat(t[k]);
      c[k] = splat(weight[k]) / d;
      den += c[k];
      prod *= select(d < v8{}, -d, d) * splat(unit);
    }
    alignas(64) double lane[W];
    store(lane, prod);
    std::copy_n(lane, lanes, product + r);
    for (std::size_t l = 0; l < columns; ++l) {
      v8 a = {};
      for (std::size_t k = 0; k < points; ++k) a += c[k] * splat(g[l * points + k]);
      store(lane, a / den);
      std::copy_n(lane, lanes, out + l * n + r);
    }
  }
}

// log(1 + e) for 0 <= e <= 1 as 2 atanh(t), t = e / (2 + e) <= 1/3: the series 2 t sum_m t^2m / (2m + 1)
// to m = 15 leaves out less than 2e-17 relative. Even and odd m in t^4 halve the dependency chain.
[[gnu::always_inline]] inline v8 log1p8_unit(v8 e) {
  const v8 t = e / (splat(2.0) + e), t2 = t * t, t4 = t2 * t2;
  v8 even = splat(1.0 / 29), odd = splat(1.0 / 31);
  for (int m = 12; m >= 0; m -= 2) {
    even = even * t4 + splat(1.0 / (2 * m + 1));
    odd = odd * t4 + splat(1.0 / (2 * m + 3));
  }
  return splat(2.0) * t * (even + t2 * odd);
}

double softplus_sigmoid(const double* s, double* sigmoid, std::size_t n, double cap) {
  const v8 vcap = splat(cap), one = splat(1.0);
  v8 acc = {};
  std::size_t c = 0;
  for (; c + W <= n; c += W) {
    const v8 x = load(s + c);
    const v8 e = exp8_flushed(select(x > v8{}, -x, x));  // e^-|s|, in (0, 1]
    const v8 softplus = select(x > v8{}, x, v8{}) + log1p8_unit(e);
    acc += select(softplus > vcap, vcap, softplus);
    store(sigmoid + c, select(x > v8{}, one, e) / (one + e));
  }
  double total = reduce(acc);
  for (; c < n; ++c) {
    const double e = exp_flushed(-std::fabs(s[c]));
    const double softplus = std::max(s[c], 0.0) + std::log1p(e);
    total += softplus > cap ? cap : softplus;
    sigmoid[c] = (s[c] > 0 ? 1 : e) / (1 + e);
  }
  return total;
}

void scale(double* x, std::size_t n, double a) {
  const v8 va = splat(a);
  std::size_t c = 0;
  for (; c + W <= n; c += W) store(x + c, load(x + c) * va);
  for (; c < n; ++c) x[c] *= a;
}

// One tile of row_dots: NQ rows of b against NK rows of xt (out[q ldo + k]), each pair's products in its
// own vector of lanes, then reduced, and the columns left added one by one.
template <std::size_t NQ, std::size_t NK>
[[gnu::always_inline]] inline void row_dots_tile(const double* b, std::size_t ldb, std::size_t cols, const double* xt,
                                                 std::size_t ldx, double* out, std::size_t ldo) {
  const std::size_t cv = cols / W * W;
  v8 acc[NQ][NK] = {};
  for (std::size_t c = 0; c < cv; c += W) {
    v8 xv[NK], bv[NQ];
    for (std::size_t k = 0; k < NK; ++k) xv[k] = load(xt + k * ldx + c);
    for (std::size_t q = 0; q < NQ; ++q) bv[q] = load(b + q * ldb + c);
    for (std::size_t q = 0; q < NQ; ++q)
      for (std::size_t k = 0; k < NK; ++k) acc[q][k] += bv[q] * xv[k];
  }
  for (std::size_t q = 0; q < NQ; ++q)
    for (std::size_t k = 0; k < NK; ++k) {
      double s = reduce(acc[q][k]);
      for (std::size_t c = cv; c < cols; ++c) s += b[q * ldb + c] * xt[k * ldx + c];
      out[q * ldo + k] += s;
    }
}

// The tile's shape in 512-bit accumulators: 4 rows x 4 features on AVX-512 (16 of its 32 registers), 4 x 1
// on AVX2 and 2 x 1 on the baseline, where one accumulator takes two and four of the 16 registers. A shape
// known only at run time kept the accumulators on the stack, cleared and reloaded around the
// multiply-adds. On the AVX2 EPYC (bench_scores' BM_RowDots: the score tree's leaves, the pilots' rows) 4 x 1
// took 0.6 to 0.9 of 2 x 2's time; 2 x 3, 6 x 1 and 8 x 1 took more on the leaves' shapes.
#if defined(__AVX512F__) || defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kRowDotRows = 4, kRowDotFeatures = 4;
#elif defined(__AVX2__)
constexpr std::size_t kRowDotRows = 4, kRowDotFeatures = 1;
#else
constexpr std::size_t kRowDotRows = 2, kRowDotFeatures = 1;
#endif

// The features left below a whole tile (`left` < kRowDotFeatures) as one tile of their own count.
template <std::size_t NQ, std::size_t NK = kRowDotFeatures - 1>
[[gnu::always_inline]] inline void last_features(std::size_t left, const double* b, std::size_t ldb, std::size_t cols,
                                                 const double* xt, std::size_t ldx, double* out, std::size_t ldo) {
  if constexpr (NK > 0) {
    if (left == NK) row_dots_tile<NQ, NK>(b, ldb, cols, xt, ldx, out, ldo);
    else last_features<NQ, NK - 1>(left, b, ldb, cols, xt, ldx, out, ldo);
  }
}

// NQ rows of b against every row of xt.
template <std::size_t NQ>
[[gnu::always_inline]] inline void row_dots_rows(const double* b, std::size_t ldb, std::size_t cols, const double* xt,
                                                 std::size_t ldx, std::size_t depth, double* out) {
  constexpr std::size_t F = kRowDotFeatures;
  std::size_t k = 0;
  for (; k + F <= depth; k += F) row_dots_tile<NQ, F>(b, ldb, cols, xt + k * ldx, ldx, out + k, depth);
  last_features<NQ>(depth - k, b, ldb, cols, xt + k * ldx, ldx, out + k, depth);
}

// The rows left below a whole tile (`left` < kRowDotRows) as rows of their own count.
template <std::size_t NQ = kRowDotRows - 1>
[[gnu::always_inline]] inline void last_row_dots(std::size_t left, const double* b, std::size_t ldb, std::size_t cols,
                                                 const double* xt, std::size_t ldx, std::size_t depth, double* out) {
  if constexpr (NQ > 0) {
    if (left == NQ) row_dots_rows<NQ>(b, ldb, cols, xt, ldx, depth, out);
    else last_row_dots<NQ - 1>(left, b, ldb, cols, xt, ldx, depth, out);
  }
}

void row_dots(const double* b, std::size_t ldb, std::size_t rows, std::size_t cols, const double* xt,
              std::size_t ldx, std::size_t depth, double* out) {
  if (cols < W) {  // rows shorter than a vector (the pilots' rows at K < 8): the columns one by one, without
                   // accumulators to clear and reduce; the same sums, from 0 in the same order
    for (std::size_t q = 0; q < rows; ++q)
      for (std::size_t k = 0; k < depth; ++k) {
        double s = 0;
        for (std::size_t c = 0; c < cols; ++c) s += b[q * ldb + c] * xt[k * ldx + c];
        out[q * depth + k] += s;
      }
    return;
  }
  constexpr std::size_t R = kRowDotRows;
  std::size_t q = 0;
  for (; q + R <= rows; q += R) row_dots_rows<R>(b + q * ldb, ldb, cols, xt, ldx, depth, out + q * depth);
  last_row_dots(rows - q, b + q * ldb, ldb, cols, xt, ldx, depth, out + q * depth);
}

void class_run_sums(const double* wt, const std::uint32_t* order, const std::uint32_t* starts, std::size_t cols,
                    std::size_t copies, std::size_t classes, double* acc) {
  // Each class run summed in registers, four centres at a time into independent sums (an add's latency
  // would otherwise bound the loop), then added to its accumulator once: loads only, where scattering
  // each centre into its class's accumulator was bound by the stores.
  for (std::size_t b = 0; b < copies; ++b) {
    const std::uint32_t* ord = order + b * cols;
    const std::uint32_t* st = starts + b * (classes + 1);
    for (std::size_t l = 0; l < classes; ++l) {
      std::size_t i = st[l];
      const std::size_t end = st[l + 1];
      if (i == end) continue;
      v8 s[4][2] = {};
      for (; i + 4 <= end; i += 4)
        for (std::size_t u = 0; u < 4; ++u) {
          const double* w = wt + ord[i + u] * 16;
          s[u][0] += load(w);
          s[u][1] += load(w + W);
        }
      for (std::size_t u = 0; i < end; ++i, ++u) {
        const double* w = wt + ord[i] * 16;
        s[u][0] += load(w);
        s[u][1] += load(w + W);
      }
      double* a = acc + (b * classes + l) * 16;
      store(a, load(a) + ((s[0][0] + s[1][0]) + (s[2][0] + s[3][0])));
      store(a + W, load(a + W) + ((s[0][1] + s[1][1]) + (s[2][1] + s[3][1])));
    }
  }
}

}  // namespace

TileKernels make_kernels() {
#define ECEKDE_STR2(x) #x
#define ECEKDE_STR(x) ECEKDE_STR2(x)
  return TileKernels{ECEKDE_STR(ECEKDE_ISA), dot, dot_add, gathered_dot_add, affine_max, affine_exp, affine_exp_max,
                     exp_shifted, sum, sum_and_squares, softplus_sigmoid, scale, row_dots, interpolate,
                     class_run_sums, dot_float, score_max_float, exp_shifted_float, sum_float, widen};
}

}  // namespace ecekde::detail::ECEKDE_CAT(isa_, ECEKDE_ISA)
