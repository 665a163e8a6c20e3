// The tile kernels' exp (a polynomial after range reduction, no library call) against std::exp, in
// every kernel variant this CPU runs: relative error, the flush below -700, overflow, NaN.
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

}  // namespace
