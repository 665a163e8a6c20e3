// The hot loops of the pairwise sweep, compiled once per instruction set (AVX-512, AVX2+FMA, baseline)
// and chosen once by CPU features (tile_kernels()). They do no I/O and no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ecekde::detail {

/// The most points TileKernels::interpolate takes.
inline constexpr std::size_t kMostInterpolationPoints = 32;

struct TileKernels {
  const char* isa;  // "avx512", "avx2" or "baseline"

  /// out[r*ldo + c] = sum_{k < depth} a[r*lda + k] * bt[k*ldb + c], for r < rows, c < cols. The sum
  /// runs over k in increasing order, so every pair's value is independent of the tiling.
  void (*dot)(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
              std::size_t cols, std::size_t depth, double* out, std::size_t ldo);

  /// The same product added to out: out[r*ldo + c] += sum_k a[r*lda + k] * bt[k*ldb + c].
  void (*dot_add)(const double* a, std::size_t lda, const double* bt, std::size_t ldb, std::size_t rows,
                  std::size_t cols, std::size_t depth, double* out, std::size_t ldo);

  /// dot_add with bt's rows picked by `index`: out[r*ldo + c] += sum_k a[r*lda + k] * bt[index[k]*ldb + c],
  /// bitwise dot_add of the rows copied out in that order, for a few rows (no panel, one pass over k).
  void (*gathered_dot_add)(const double* a, std::size_t lda, const double* bt, std::size_t ldb,
                           const std::uint32_t* index, std::size_t rows, std::size_t cols, std::size_t depth,
                           double* out, std::size_t ldo);

  /// out[c] = offset[c] + scale * x[c] for c < n (out may equal x); returns the maximum over
  /// c != skip (-inf if there is none).
  double (*affine_max)(const double* x, double* out, const double* offset, double scale, std::size_t n,
                       std::size_t skip);

  /// out[c] = exp(offset[c] + scale * x[c] - shift) for c < n (out may equal x). Like exp_shifted,
  /// arguments below -700 give exactly 0.
  void (*affine_exp)(const double* x, double* out, const double* offset, double scale, double shift, std::size_t n);

  /// affine_exp's out (with x's scores and `shift`) and affine_max's return value (the largest score over
  /// c != skip) in one pass, each bitwise as those two give it.
  double (*affine_exp_max)(const double* x, double* out, const double* offset, double scale, double shift,
                           std::size_t n, std::size_t skip);

  /// x[c] = exp(x[c] - shift) for c < n, within 2 ulp of std::exp; arguments below -700 give exactly 0
  /// (relative to a row's largest weight, 1, they are negligible by 300 orders of magnitude).
  void (*exp_shifted)(double* x, std::size_t n, double shift);

  /// Sum of x[0, n) in a fixed order (eight interleaved partial sums, then combined).
  double (*sum)(const double* x, std::size_t n);

  /// Adds the sum of x[0, n) to *sum and the sum of their squares to *squares, each in a fixed order (four
  /// vectors of partial sums, then combined): a row's weight total and its effective number of neighbours.
  void (*sum_and_squares)(const double* x, std::size_t n, double* sum, double* squares);

  /// The logistic terms of margins s[0, n): returns the sum over c of min(softplus(s[c]), cap), where
  /// softplus(s) = log(1 + e^s) (eight interleaved partial sums, then combined), and writes
  /// sigmoid[c] = 1 / (1 + e^-s[c]). Each within 4 ulp; margins below -700 give 0 for both (as exp_shifted
  /// flushes: the true values are below 1e-304); NaN passes. The pilots' logistic fits (logit_fit.cpp)
  /// spend their time here.
  double (*softplus_sigmoid)(const double* s, double* sigmoid, std::size_t n, double cap);

  /// x[c] *= a for c < n.
  void (*scale)(double* x, std::size_t n, double a);

  /// out[q*depth + k] += sum_{c < cols} b[q*ldb + c] * xt[k*ldx + c], for q < rows, k < depth: each row
  /// of a weight tile against each feature of the tile's centres (features stored transposed).
  void (*row_dots)(const double* b, std::size_t ldb, std::size_t rows, std::size_t cols, const double* xt,
                   std::size_t ldx, std::size_t depth, double* out);


  /// Barycentric interpolation from `points` (at most kMostInterpolationPoints) values: for r < n and
  /// l < columns, out[l*n + r] = sum_k c_k g[l*points + k] / sum_k c_k with c_k = weight[k] / (x[r] - t[k]),
  /// and product[r] = prod_k |x[r] - t[k]| unit. Where x[r] is a point the quotient is not finite.
  void (*interpolate)(const double* x, std::size_t n, const double* t, const double* weight, std::size_t points,
                      double unit, const double* g, std::size_t columns, double* out, double* product);

  /// For every copy b < copies and class l < classes: acc[(b*classes + l)*16 + q] += the sum of wt[c*16 + q]
  /// (a tile of 16 rows, transposed) over the centres c = order[b*cols + i] for starts[b*(classes+1) + l]
  /// <= i < starts[b*(classes+1) + l + 1]: each copy's centres grouped by their class in it. Used by the
  /// calibration test, where every relabelled copy puts each centre into a different class.
  void (*class_run_sums)(const double* wt, const std::uint32_t* order, const std::uint32_t* starts,
                         std::size_t cols, std::size_t copies, std::size_t classes, double* acc);

  // The float path (ExecutionOptions::precision): scores offset_c + scale * dots[c] from float dot products,
  // the offset carried as two floats hi + lo (kernels_impl.cpp says why that keeps the score accurate).

  /// dot in float: the same order of summation, 16 lanes a vector.
  void (*dot_float)(const float* a, std::size_t lda, const float* bt, std::size_t ldb, std::size_t rows,
                    std::size_t cols, std::size_t depth, float* out, std::size_t ldo);

  /// out[c] = the score of dots[c] for c < n; returns the largest over c != skip (-inf if there is none).
  float (*score_max_float)(const float* dots, const float* offset_hi, const float* offset_lo, float scale,
                           float* out, std::size_t n, std::size_t skip);

  /// x[c] = exp(x[c] - shift) for c < n, within 2 ulp of std::exp in float for arguments up to 88;
  /// arguments below -80 give exactly 0.
  void (*exp_shifted_float)(float* x, std::size_t n, float shift);

  /// Sum of x[0, n) in float in a fixed order (16 interleaved partial sums, then combined), returned as
  /// double: a tile's run of weights, which the reducers then accumulate in double.
  double (*sum_float)(const float* x, std::size_t n);

  /// out[c] = x[c] for c < n: float weights for reducers that accumulate doubles.
  void (*widen)(const float* x, double* out, std::size_t n);
};

/// While alive and `on`, this thread's floating-point results below 2^-1022 are flushed to zero rather than
/// rounded to subnormals (x86's flush-to-zero mode; elsewhere nothing changes). An x86 core takes a
/// microcode assist for every subnormal result: the score tree's moments of sharply peaked marginal scores,
/// whose powers of tiny widths underflow, took eight times as long with them. Restores the mode on exit.
class FlushSubnormals {
 public:
  explicit FlushSubnormals(bool on);
  ~FlushSubnormals();
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  unsigned saved_ = 0;
  bool on_ = false;
};

/// The best kernels for this CPU, chosen on first use.
const TileKernels& tile_kernels();

/// The named variant ("avx512", "avx2", "baseline"; "" = best). Throws Error if unknown or unsupported.
const TileKernels& tile_kernels_for(std::string_view isa);

/// Whether this CPU can run the named variant.
bool kernel_variant_supported(std::string_view isa);

}  // namespace ecekde::detail
