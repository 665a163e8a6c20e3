// The tile kernels in every variant this CPU runs: exp (a polynomial after range reduction, no library
// call) against std::exp (relative error, the flush below -700, overflow, NaN), the dot products
// (register tiles, depth chunks) against a plain sum over k in increasing order, and the float path's
// kernels the same way; the guard that flushes subnormal results; the centres' log normalisers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels.hpp"
#include "core/numeric.hpp"
#include "core/sweep.hpp"
#include "ecekde/random.hpp"

namespace {

using ecekde::detail::TileKernels;

std::vector<const TileKernels*> variants() {
  std::vector<const TileKernels*> v;
  for (const char* isa : {"baseline", "avx2", "avx512"})
    if (ecekde::detail::kernel_variant_supported(isa)) v.push_back(&ecekde::detail::tile_kernels_for(isa));
  return v;
}

// exp_shifted over x (in place), in odd-sized chunks so that vector bodies and scalar tails both run.
std::vector<double> exp_of(const TileKernels& kern, std::vector<double> x, double shift) {
  for (std::size_t i = 0; i < x.size(); i += 13) kern.exp_shifted(x.data() + i, std::min<std::size_t>(13, x.size() - i), shift);
  return x;
}

TEST(Kernels, ExpWithinTwoUlpOfStdExp) {
  ecekde::Rng rng(7);
  std::vector<double> x;
  for (int i = 0; i < 200000; ++i) x.push_back(-700 + 1409.7 * rng.uniform());
  for (double v : {-700.0, -699.999, -1e-300, 0.0, 1e-300, 0.5 * std::log(2.0), 1.0, 708.0, 709.0, 709.78})
    x.push_back(v);
  for (const TileKernels* kern : variants()) {
    const std::vector<double> e = exp_of(*kern, x, 0.0);
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(e[i] - std::exp(x[i])) / std::exp(x[i]));
    EXPECT_LE(worst, 2 * std::numeric_limits<double>::epsilon()) << kern->isa;
  }
}

TEST(Kernels, ExpFlushesOverflowsAndPropagatesNan) {
  constexpr double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x{-700.0001, -1e300, -inf, 709.79, 1e300, inf, nan, 0.0};
  for (const TileKernels* kern : variants()) {
    const std::vector<double> e = exp_of(*kern, x, 0.0);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(e[i], 0.0) << kern->isa << " x = " << x[i];
    for (std::size_t i = 3; i < 6; ++i) EXPECT_EQ(e[i], inf) << kern->isa << " x = " << x[i];
    EXPECT_TRUE(std::isnan(e[6])) << kern->isa;
    EXPECT_EQ(e[7], 1.0) << kern->isa;
    // affine_exp is the same exp after offset + scale * x - shift
    std::vector<double> y{1.0, 2.0, 3.0}, offset{0.5, -0.25, 0.0};
    kern->affine_exp(y.data(), y.data(), offset.data(), -2.0, 0.5, y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      EXPECT_NEAR(y[i], std::exp(offset[i] - 2.0 * (i + 1.0) - 0.5), 4e-16) << kern->isa;
  }
}

// softplus_sigmoid (the pilot fits' logistic terms) against softplus and sigmoid in long double, over
// margins from -800 to 800 and near 0, in odd-sized chunks (vector bodies and scalar tails): each value
// within 4 ulp (2.3 ulp seen), or 0 below -700 as exp flushes; the chunks' sums of capped terms within
// rounding of the plain sum; the cap taken above it, and NaN passed on.
TEST(Kernels, SoftplusAndSigmoidWithinFourUlp) {
  ecekde::Rng rng(8);
  std::vector<double> s;
  for (int i = 0; i < 100000; ++i) s.push_back(-800 + 1600 * rng.uniform());
  for (int i = 0; i < 100000; ++i) s.push_back((rng.uniform() - 0.5) * std::pow(10.0, -12 + 14 * rng.uniform()));
  for (double v : {0.0, -0.0, 1e-300, -1e-300, 700.0, -700.0, 710.0, -710.0, 1e300, -1e300}) s.push_back(v);
  const double cap = 708.0;
  for (const TileKernels* kern : variants()) {
    std::vector<double> sigmoid(s.size());
    double total = 0;
    for (std::size_t i = 0; i < s.size(); i += 13) {
      const std::size_t m = std::min<std::size_t>(13, s.size() - i);
      total += kern->softplus_sigmoid(s.data() + i, sigmoid.data() + i, m, cap);
    }
    long double plain = 0;
    double worst_softplus = 0, worst_sigmoid = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const long double x = s[i], softplus = std::max(x, 0.0L) + std::log1p(std::exp(-std::fabs(x)));
      const long double expected_sigmoid = 1 / (1 + std::exp(-x));
      plain += std::min(softplus, static_cast<long double>(cap));
      // one value's softplus from a full vector of it (eight equal lanes sum to 8 times it exactly)
      std::vector<double> eight(8, s[i]), eight_sigmoid(8);
      const double alone = kern->softplus_sigmoid(eight.data(), eight_sigmoid.data(), 8, 1e308) / 8;
      if (s[i] < -700) {  // flushed, as exp is: the true values are below 1e-304
        EXPECT_EQ(alone, 0.0) << kern->isa << " s = " << s[i];
        EXPECT_EQ(sigmoid[i], 0.0) << kern->isa << " s = " << s[i];
        continue;
      }
      worst_softplus = std::max(worst_softplus, static_cast<double>(std::fabs(alone - softplus) / softplus));
      worst_sigmoid = std::max(worst_sigmoid, static_cast<double>(std::fabs(sigmoid[i] - expected_sigmoid) / expected_sigmoid));
    }
    EXPECT_LE(worst_softplus, 4 * std::numeric_limits<double>::epsilon()) << kern->isa;
    EXPECT_LE(worst_sigmoid, 4 * std::numeric_limits<double>::epsilon()) << kern->isa;
    EXPECT_NEAR(total, static_cast<double>(plain), 1e-13 * static_cast<double>(plain)) << kern->isa;
    // the vector body and the scalar tail alike: 1e300 is capped, NaN passes to both outputs
    std::vector<double> special(17, 1e300), out(17);
    special[3] = special[16] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(std::isnan(kern->softplus_sigmoid(special.data(), out.data(), 17, cap))) << kern->isa;
    EXPECT_TRUE(std::isnan(out[3]) && std::isnan(out[16])) << kern->isa;
    EXPECT_EQ(kern->softplus_sigmoid(special.data(), out.data(), 3, cap), 3 * cap) << kern->isa;
    EXPECT_EQ(out[0], 1.0) << kern->isa;
  }
}

// The float path's exp (exp_shifted_float) against std::exp, over the range where weights are kept, in
// odd-sized chunks (vector bodies and scalar tails).
TEST(Kernels, FloatExpWithinTwoUlpAndFlushedBelowMinus80) {
  ecekde::Rng rng(9);
  std::vector<float> x;
  for (int i = 0; i < 200000; ++i) x.push_back(static_cast<float>(-80 + 168 * rng.uniform()));
  for (float v : {-80.0f, -79.999f, -1e-30f, 0.0f, 1e-30f, 0.3465736f, 1.0f, 88.0f}) x.push_back(v);
  for (float v : {-80.001f, -1e30f, -std::numeric_limits<float>::infinity()}) x.push_back(v);
  for (const TileKernels* kern : variants()) {
    std::vector<float> e = x;
    for (std::size_t i = 0; i < e.size(); i += 13) kern->exp_shifted_float(e.data() + i, std::min<std::size_t>(13, e.size() - i), 0.0f);
    double worst = 0;
    for (std::size_t i = 0; i < x.size() - 3; ++i)
      worst = std::max(worst, std::abs(double{e[i]} - std::exp(double{x[i]})) / std::exp(double{x[i]}));
    EXPECT_LE(worst, 2 * double{std::numeric_limits<float>::epsilon()}) << kern->isa;
    for (std::size_t i = x.size() - 3; i < x.size(); ++i) EXPECT_EQ(e[i], 0.0f) << kern->isa << " x = " << x[i];
    std::vector<float> nan{std::numeric_limits<float>::quiet_NaN()};
    kern->exp_shifted_float(nan.data(), 1, 0.0f);
    EXPECT_TRUE(std::isnan(nan[0])) << kern->isa;
  }
}

// score_max_float: the scores hi + lo + scale * d (to float's rounding of the score, though the offsets
// are hundreds), and their largest over the entries other than skip, whether or not the skipped entry is
// the maximum.
TEST(Kernels, FloatScoresAndTheirMaximumSkipTheDiagonal) {
  ecekde::Rng rng(10);
  for (const TileKernels* kern : variants())
    for (std::size_t n : {1, 5, 16, 31, 40}) {
      std::vector<float> d(n), hi(n), lo(n), scores(n);
      for (std::size_t c = 0; c < n; ++c) {
        d[c] = static_cast<float>(-3 - 3 * rng.uniform());
        const double offset = 300 + 10 * rng.uniform();
        hi[c] = static_cast<float>(offset);
        lo[c] = static_cast<float>(offset - hi[c]);
      }
      const auto score = [&](std::size_t c) { return double{hi[c]} + double{lo[c]} + 50.0 * double{d[c]}; };
      for (std::size_t skip : {std::size_t{0}, n / 2, n - 1, n}) {
        const float m = kern->score_max_float(d.data(), hi.data(), lo.data(), 50.0f, scores.data(), n, skip);
        double best = -std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < n; ++c) {
          EXPECT_NEAR(scores[c], score(c), 2 * std::numeric_limits<float>::epsilon() * std::abs(score(c)))
              << kern->isa << " c " << c;
          if (c != skip) best = std::max(best, double{scores[c]});
        }
        EXPECT_EQ(double{m}, best) << kern->isa << " n " << n << " skip " << skip;
      }
    }
}

// affine_exp_max is the two passes it replaces in a sweep's weights, bitwise: affine_max (the largest score
// without `skip`), then exp_shifted of the scores it wrote; its weights are also affine_exp's with the same
// shift. Over lengths around whole vectors, skips where the largest score is, elsewhere and none, and shifts
// at, above and below that maximum (the maximum so far of a row, which a tile can exceed), in every kernel
// variant this CPU runs.
TEST(Kernels, AffineExpMaxIsAffineMaxThenExp) {
  ecekde::Rng rng(12);
  for (const TileKernels* kern : variants())
    for (std::size_t n : {1, 2, 7, 8, 9, 16, 23, 64, 517}) {
      std::vector<double> dots(n), offset(n), scores(n), fused(n), affine(n);
      for (std::size_t c = 0; c < n; ++c) {
        dots[c] = -40 * rng.uniform();
        offset[c] = 3 * rng.uniform() - 1.5;
      }
      const double inv_h = 1 / 0.3;
      std::size_t top = 0;  // where the largest score is
      for (std::size_t c = 1; c < n; ++c)
        if (offset[c] + inv_h * dots[c] > offset[top] + inv_h * dots[top]) top = c;
      for (std::size_t skip : {top, std::size_t{0}, n / 2, n - 1, n}) {
        const double expected_max = kern->affine_max(dots.data(), scores.data(), offset.data(), inv_h, n, skip);
        const double reference = std::isfinite(expected_max) ? expected_max : offset[0] + inv_h * dots[0];
        for (double shift : {reference, reference + 3, reference - 2}) {
          std::vector<double> expected = scores;
          kern->exp_shifted(expected.data(), n, shift);
          const double max = kern->affine_exp_max(dots.data(), fused.data(), offset.data(), inv_h, shift, n, skip);
          kern->affine_exp(dots.data(), affine.data(), offset.data(), inv_h, shift, n);
          const std::string at = std::string(kern->isa) + " n " + std::to_string(n) + " skip " + std::to_string(skip);
          EXPECT_EQ(max, expected_max) << at;
          EXPECT_EQ(fused, expected) << at << " shift " << shift - reference;
          EXPECT_EQ(affine, expected) << at << " shift " << shift - reference;
        }
      }
    }
}

// dot and dot_add (double) and dot_float over grids of rows and columns (full register tiles and
// narrower ones, remainders of several counts), depths (one chunk, chunk boundaries, many chunks) and
// leading dimensions with padding: every output is bitwise the one the same kernel gives for that pair alone
// (the scalar path: tiling does not change a pair's value), and close to a plain sum in double: within 4 ulp
// of sum_k |a_k b_k| for double, within depth ulp (the worst-case bound of a sum of depth terms) for float;
// the padding past each row's columns untouched.
template <class T, class Dot, class DotAdd>
void check_dot(const TileKernels& kern, Dot dot, DotAdd dot_add, std::size_t max_depth) {
  ecekde::Rng rng(11);
  constexpr double eps = std::numeric_limits<T>::epsilon();
  for (std::size_t rows : {1, 3, 4, 8, 9, 16, 17, 128})
    for (std::size_t cols : {1, 2, 4, 7, 10, 12, 16, 20, 24, 33, 42, 44, 517})
      for (std::size_t depth : {1, 2, 10, 63, 64, 65, 200, 1000}) {
        if (depth > max_depth) continue;
        const std::size_t lda = depth + 3, ldb = cols + 5, ldo = cols + 2;
        std::vector<T> a(rows * lda), bt(depth * ldb), start(rows * ldo);
        for (T& v : a) v = static_cast<T>(std::log(rng.uniform() + 1e-300));
        for (T& v : bt) v = static_cast<T>(rng.uniform());
        for (T& v : start) v = static_cast<T>(rng.uniform() - 0.5);
        std::vector<T> out(rows * ldo, T{}), added = start;
        dot(a.data(), lda, bt.data(), ldb, rows, cols, depth, out.data(), ldo);
        if constexpr (!std::is_same_v<DotAdd, std::nullptr_t>)
          dot_add(a.data(), lda, bt.data(), ldb, rows, cols, depth, added.data(), ldo);
        const double tolerance = std::is_same_v<T, double> ? 4 * eps : static_cast<double>(depth) * eps;
        std::size_t tiled = 0, inexact = 0;
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t c = 0; c < cols; ++c) {
            T alone{}, alone_added = start[r * ldo + c];
            dot(a.data() + r * lda, lda, bt.data() + c, ldb, 1, 1, depth, &alone, 1);
            tiled += out[r * ldo + c] != alone;
            if constexpr (!std::is_same_v<DotAdd, std::nullptr_t>) {
              dot_add(a.data() + r * lda, lda, bt.data() + c, ldb, 1, 1, depth, &alone_added, 1);
              tiled += added[r * ldo + c] != alone_added;
            }
            double plain = 0, size = 0;
            for (std::size_t k = 0; k < depth; ++k) {
              plain += double{a[r * lda + k]} * double{bt[k * ldb + c]};
              size += std::abs(double{a[r * lda + k]} * double{bt[k * ldb + c]});
            }
            inexact += std::abs(out[r * ldo + c] - plain) > tolerance * size;
          }
        std::size_t padding_moved = 0;
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t c = cols; c < ldo; ++c) {
            padding_moved += out[r * ldo + c] != T{};
            if constexpr (!std::is_same_v<DotAdd, std::nullptr_t>)
              padding_moved += added[r * ldo + c] != start[r * ldo + c];
          }
        EXPECT_EQ(padding_moved, 0u) << kern.isa << " rows " << rows << " cols " << cols << " depth " << depth;
        EXPECT_EQ(tiled, 0u) << kern.isa << " rows " << rows << " cols " << cols << " depth " << depth;
        EXPECT_EQ(inexact, 0u) << kern.isa << " rows " << rows << " cols " << cols << " depth " << depth;
      }
}

// sum_and_squares at every length from 0 to 70 (its bodies of four vectors and of one, and the scalar
// tail) against long double sums, added to what the two outputs held before.
TEST(Kernels, SumAndSquaresAddThePlainSums) {
  ecekde::Rng rng(11);
  std::vector<double> x(70);
  for (double& v : x) v = std::exp(-30 * rng.uniform());  // weights, spread over 13 orders of magnitude
  for (const TileKernels* kern : variants())
    for (std::size_t n = 0; n <= x.size(); ++n) {
      long double sum = 1.5, squares = 2.5;
      for (std::size_t i = 0; i < n; ++i) {
        sum += x[i];
        squares += static_cast<long double>(x[i]) * x[i];
      }
      double got_sum = 1.5, got_squares = 2.5;
      kern->sum_and_squares(x.data(), n, &got_sum, &got_squares);
      EXPECT_NEAR(got_sum, static_cast<double>(sum), 4e-16 * static_cast<double>(sum)) << kern->isa << " n " << n;
      EXPECT_NEAR(got_squares, static_cast<double>(squares), 4e-16 * static_cast<double>(squares))
          << kern->isa << " n " << n;
    }
}

// The interpolation kernel of the one-dimensional corrections (score_grid.cpp) against the barycentric
// formula in long double, in every variant: row counts around the lane width (the tail repeats a row),
// 1 to 32 points, 1 to 3 columns; and a row at a point gives a quotient that is not finite.
TEST(Kernels, InterpolateIsThePlainBarycentricFormula) {
  ecekde::Rng rng(13);
  for (const TileKernels* kern : variants())
    for (std::size_t points : {std::size_t{1}, std::size_t{2}, std::size_t{16}, ecekde::detail::kMostInterpolationPoints})
      for (std::size_t columns : {1, 2, 3})
        for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 17u}) {
          std::vector<double> t(points), weight(points), g(points * columns), x(n);
          for (std::size_t k = 0; k < points; ++k) {
            t[k] = static_cast<double>(k) + 0.25 * rng.uniform();
            weight[k] = 2 * rng.uniform() - 1;
          }
          for (double& v : g) v = std::exp(-3 * rng.uniform());
          for (double& v : x) v = -1 + (static_cast<double>(points) + 1) * rng.uniform();
          const double unit = 0.5;
          std::vector<double> out(n * columns), product(n);
          kern->interpolate(x.data(), n, t.data(), weight.data(), points, unit, g.data(), columns, out.data(),
                            product.data());
          for (std::size_t r = 0; r < n; ++r) {
            long double den = 0, prod = 1;
            std::vector<long double> num(columns, 0);
            for (std::size_t k = 0; k < points; ++k) {
              const long double c = weight[k] / (static_cast<long double>(x[r]) - t[k]);
              den += c;
              prod *= std::fabs(static_cast<long double>(x[r]) - t[k]) * unit;
              for (std::size_t l = 0; l < columns; ++l) num[l] += c * g[l * points + k];
            }
            EXPECT_NEAR(product[r], static_cast<double>(prod), 1e-14 * static_cast<double>(prod)) << kern->isa;
            for (std::size_t l = 0; l < columns; ++l) {
              const double want = static_cast<double>(num[l] / den);
              // the formula's own conditioning: the numerator's and the denominator's sums of |terms|
              long double scale = 0, spread = 0;
              for (std::size_t k = 0; k < points; ++k) {
                const long double c = std::fabs(weight[k] / (static_cast<long double>(x[r]) - t[k]));
                scale += c * g[l * points + k];
                spread += c;
              }
              EXPECT_NEAR(out[l * n + r], want, 1e-14 * static_cast<double>((scale + std::fabs(want) * spread) / std::fabs(den)))
                  << kern->isa << " points " << points << " columns " << columns << " n " << n << " row " << r;
            }
          }
          if (n > 0) {  // a row at a point
            x[0] = t[points / 2];
            kern->interpolate(x.data(), n, t.data(), weight.data(), points, unit, g.data(), columns, out.data(),
                              product.data());
            EXPECT_FALSE(std::isfinite(out[0])) << kern->isa;
            EXPECT_EQ(product[0], 0.0) << kern->isa;
          }
        }
}

TEST(Kernels, DotDoesNotDependOnTilingAndMatchesPlainSum) {
  for (const TileKernels* kern : variants()) check_dot<double>(*kern, kern->dot, kern->dot_add, 1000);
}

// gathered_dot_add, over rows (register tiles and remainders), columns in whole vectors of 8 (as the padded
// payloads it serves), depths and index lists with repeats and gaps: bitwise dot_add of the picked rows
// copied out in the index's order, added to what the outputs held.
TEST(Kernels, GatheredDotAddIsDotAddOfTheCopiedRows) {
  ecekde::Rng rng(12);
  for (const TileKernels* kern : variants())
    for (std::size_t rows : {1, 3, 4, 7, 8})
      for (std::size_t cols : {8, 16, 40, 48, 1000})
        for (std::size_t depth : {1, 5, 64, 65, 300}) {
          const std::size_t lda = depth + 3, ldb = cols + 8, ldo = cols + 2, pool = 2 * depth + 1;
          std::vector<double> a(rows * lda), bt(pool * ldb), start(rows * ldo), copied(depth * cols);
          std::vector<std::uint32_t> index(depth);
          for (double& v : a) v = rng.uniform();
          for (double& v : bt) v = rng.uniform() - 0.5;
          for (double& v : start) v = rng.uniform();
          for (std::size_t k = 0; k < depth; ++k) {
            index[k] = static_cast<std::uint32_t>(rng.uniform() * static_cast<double>(pool)) % static_cast<std::uint32_t>(pool);
            std::copy_n(bt.begin() + static_cast<std::ptrdiff_t>(index[k] * ldb), cols,
                        copied.begin() + static_cast<std::ptrdiff_t>(k * cols));
          }
          std::vector<double> gathered = start, expected = start;
          kern->gathered_dot_add(a.data(), lda, bt.data(), ldb, index.data(), rows, cols, depth, gathered.data(), ldo);
          kern->dot_add(a.data(), lda, copied.data(), cols, rows, cols, depth, expected.data(), ldo);
          EXPECT_EQ(gathered, expected) << kern->isa << " rows " << rows << " cols " << cols << " depth " << depth;
        }
}

TEST(Kernels, FloatDotDoesNotDependOnTilingAndMatchesPlainSum) {
  // Depth up to 200 (four chunks): the chunking is the double kernel's code, checked to 1000 above.
  for (const TileKernels* kern : variants()) check_dot<float>(*kern, kern->dot_float, nullptr, 200);
}

// The guard flushes subnormal results to zero while it lives (on x86, where the mode exists), nests, and
// restores gradual underflow on exit; off, it changes nothing.
TEST(Kernels, FlushSubnormalsOnlyWhileAlive) {
  volatile double tiny = std::numeric_limits<double>::min();  // volatile: computed at run time, in the mode
  const double subnormal = tiny / 16;
  ASSERT_GT(subnormal, 0.0);
  {
    const ecekde::detail::FlushSubnormals flush(true);
#if defined(__x86_64__)
    EXPECT_EQ(tiny / 16, 0.0);
#endif
    {
      const ecekde::detail::FlushSubnormals inner(true);
      const ecekde::detail::FlushSubnormals off(false);
#if defined(__x86_64__)
      EXPECT_EQ(tiny / 16, 0.0);
#endif
    }
#if defined(__x86_64__)
    EXPECT_EQ(tiny / 16, 0.0);
#endif
    EXPECT_EQ(tiny * 2, 2 * std::numeric_limits<double>::min());  // normal results as before
  }
  EXPECT_EQ(tiny / 16, subnormal);
  {
    const ecekde::detail::FlushSubnormals off(false);
    EXPECT_EQ(tiny / 16, subnormal);
  }
}

// The calibration test's class sums: every copy's centres grouped by class (here by a plain stable
// partition), summed per class into 16-row accumulators, against plain sums in each variant. Runs of 0 to
// over 4 centres (the four interleaved sums and their tail), empty classes (their accumulators untouched).
TEST(Kernels, ClassRunSumsAreEachCopysClassSums) {
  ecekde::Rng rng(11);
  for (const TileKernels* kern : variants())
    for (std::size_t cols : {1, 3, 4, 5, 9, 17, 512})
      for (std::size_t copies : {1, 7})
        for (std::size_t classes : {1, 2, 10}) {
          std::vector<double> wt(cols * 16), acc(copies * classes * 16), plain;
          for (double& w : wt) w = rng.uniform();
          for (double& a : acc) a = rng.uniform();
          plain = acc;
          std::vector<std::uint32_t> order(copies * cols), starts(copies * (classes + 1), 0);
          for (std::size_t b = 0; b < copies; ++b) {
            std::vector<std::size_t> label(cols);
            for (auto& l : label) l = classes == 10 ? rng.below(3) * 3 : rng.below(classes);  // K = 10: 7 empty
            std::size_t i = 0;
            for (std::size_t l = 0; l < classes; ++l) {
              starts[b * (classes + 1) + l] = static_cast<std::uint32_t>(i);
              for (std::size_t c = 0; c < cols; ++c)
                if (label[c] == l) {
                  order[b * cols + i++] = static_cast<std::uint32_t>(c);
                  for (std::size_t q = 0; q < 16; ++q) plain[(b * classes + l) * 16 + q] += wt[c * 16 + q];
                }
            }
            starts[b * (classes + 1) + classes] = static_cast<std::uint32_t>(i);
          }
          const std::vector<double> before = acc;
          kern->class_run_sums(wt.data(), order.data(), starts.data(), cols, copies, classes, acc.data());
          for (std::size_t i = 0; i < acc.size(); ++i) {
            if (plain[i] == before[i]) {
              EXPECT_EQ(acc[i], before[i]) << kern->isa << ": an empty class was written";
            }
            EXPECT_NEAR(acc[i], plain[i], 1e-14 * plain[i])
                << kern->isa << " cols " << cols << " copies " << copies << " classes " << classes << " at " << i;
          }
        }
}

}  // namespace

// The Dirichlet normaliser's lgamma(1 + e) for small e (centre_offsets) by its series: within a few ulps of
// std::lgamma over the whole range it serves, its end included, and exactly 0 at e = 0.
TEST(Kernels, LgammaNearOneIsStdLgamma) {
  EXPECT_EQ(ecekde::detail::lgamma_near_one(0.0), 0.0);
  const double top = ecekde::detail::kNearOne;
  for (int i = 1; i <= 20000; ++i) {
    // evenly over [0, top] and geometrically down to 1e-300, as x / h + 1 - 1 takes them
    for (double e : {top * i / 20000, top * std::pow(1e-300 / top, i / 20000.0)}) {
      const double alpha = 1 + e, excess = alpha - 1;  // as centre_offsets forms it
      const double plain = std::lgamma(alpha), fast = ecekde::detail::lgamma_near_one(excess);
      ASSERT_NEAR(fast, plain, 4 * std::numeric_limits<double>::epsilon() * std::fabs(plain) + 1e-300) << "e " << excess;
    }
  }
}

// The Dirichlet kernel's log normaliser of every centre, a_i(h) = lgamma(sum_k x_ik / h + dim) -
// sum_k lgamma(x_ik / h + 1), against that formula, and bitwise the same on any number of threads (n spans
// several of its chunks). Points of a simplex with exact zeros, at bandwidths from 1e-3 to 10.
TEST(Kernels, CentreOffsetsAreThePlainFormulaOnAnyThreads) {
  const std::size_t n = 5000, dim = 7;
  ecekde::Rng rng(31);
  std::vector<double> x(n * dim);
  for (std::size_t i = 0; i < n; ++i) {
    double total = 0;
    for (std::size_t k = 0; k < dim; ++k) total += x[i * dim + k] = rng.uniform() < 0.2 ? 0.0 : -std::log(rng.uniform());
    for (std::size_t k = 0; k < dim; ++k) x[i * dim + k] = total > 0 ? x[i * dim + k] / total : 1.0 / dim;
  }
  const auto points = ecekde::detail::KernelPoints::from_rows(x.data(), n, dim);
  for (double h : {1e-3, 0.05, 10.0}) {
    std::vector<double> one(n), more(n);
    points.centre_offsets(h, one, 1);
    for (std::size_t i = 0; i < n; ++i) {
      double total = 0, plain = 0;
      for (std::size_t k = 0; k < dim; ++k) total += x[i * dim + k] / h + 1, plain -= std::lgamma(x[i * dim + k] / h + 1);
      plain += std::lgamma(total);
      ASSERT_NEAR(one[i], plain, 1e-12 * (1 + std::abs(plain))) << "h " << h << ", centre " << i;
    }
    for (int threads : {2, 3}) {
      points.centre_offsets(h, more, threads);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(one[i], more[i]) << "h " << h << ", " << threads << " threads, centre " << i;
    }
  }
}
