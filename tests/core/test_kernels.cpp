// The tile kernels in every variant this CPU runs: exp (a polynomial after range reduction, no library
// call) against std::exp (relative error, the flush below -700, overflow, NaN), and the dot products
// (register tiles, depth chunks) against a plain sum over k in increasing order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/kernels.hpp"
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
    kern->affine_exp(y.data(), offset.data(), -2.0, 0.5, y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      EXPECT_NEAR(y[i], std::exp(offset[i] - 2.0 * (i + 1.0) - 0.5), 4e-16) << kern->isa;
  }
}

// dot and dot_add over grids of rows and columns (full register tiles and remainders), depths (one
// chunk, chunk boundaries, many chunks) and leading dimensions with padding: every output is bitwise the
// one the same kernel gives for that pair alone (the scalar path: tiling does not change a pair's value),
// and within 4 ulp of sum_k |a_k b_k| of a plain sum.
TEST(Kernels, DotDoesNotDependOnTilingAndMatchesPlainSum) {
  ecekde::Rng rng(11);
  for (const TileKernels* kern : variants())
    for (std::size_t rows : {1, 3, 4, 8, 9, 16, 17, 128})
      for (std::size_t cols : {1, 7, 16, 24, 33, 517})
        for (std::size_t depth : {1, 2, 10, 63, 64, 65, 200, 1000}) {
          const std::size_t lda = depth + 3, ldb = cols + 5, ldo = cols + 2;
          std::vector<double> a(rows * lda), bt(depth * ldb), start(rows * ldo);
          for (double& v : a) v = std::log(rng.uniform() + 1e-300);
          for (double& v : bt) v = rng.uniform();
          for (double& v : start) v = rng.uniform() - 0.5;
          std::vector<double> out(rows * ldo, 0.0), added = start;
          kern->dot(a.data(), lda, bt.data(), ldb, rows, cols, depth, out.data(), ldo);
          kern->dot_add(a.data(), lda, bt.data(), ldb, rows, cols, depth, added.data(), ldo);
          std::size_t tiled = 0, inexact = 0;
          for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) {
              double alone = 0, alone_added = start[r * ldo + c];
              kern->dot(a.data() + r * lda, lda, bt.data() + c, ldb, 1, 1, depth, &alone, 1);
              kern->dot_add(a.data() + r * lda, lda, bt.data() + c, ldb, 1, 1, depth, &alone_added, 1);
              tiled += out[r * ldo + c] != alone || added[r * ldo + c] != alone_added;
              double plain = 0, size = 0;
              for (std::size_t k = 0; k < depth; ++k) {
                plain += a[r * lda + k] * bt[k * ldb + c];
                size += std::abs(a[r * lda + k] * bt[k * ldb + c]);
              }
              inexact += std::abs(out[r * ldo + c] - plain) > 4 * std::numeric_limits<double>::epsilon() * size;
            }
          EXPECT_EQ(tiled, 0u) << kern->isa << " rows " << rows << " cols " << cols << " depth " << depth;
          EXPECT_EQ(inexact, 0u) << kern->isa << " rows " << rows << " cols " << cols << " depth " << depth;
        }
}

}  // namespace
