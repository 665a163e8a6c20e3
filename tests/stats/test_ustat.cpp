// distinct_product_sum (Moebius inversion over set partitions) against nested loops over distinct
// indices.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ecekde/random.hpp"
#include "ustat.hpp"

namespace {

using Span = std::span<const double>;

double brute_force(const std::vector<std::vector<double>>& f) {
  const std::size_t m = f.size(), n = f[0].size();
  std::vector<std::size_t> idx(m, 0);
  double total = 0;
  for (;;) {
    bool distinct = true;
    for (std::size_t a = 0; a < m; ++a)
      for (std::size_t b = a + 1; b < m; ++b) distinct = distinct && idx[a] != idx[b];
    if (distinct) {
      double prod = 1;
      for (std::size_t t = 0; t < m; ++t) prod *= f[t][idx[t]];
      total += prod;
    }
    std::size_t t = 0;
    while (t < m && ++idx[t] == n) idx[t++] = 0;
    if (t == m) return total;
  }
}

TEST(DistinctProductSum, MatchesNestedLoops) {
  ecekde::Rng rng(11);
  for (std::size_t m = 1; m <= 4; ++m) {
    for (std::size_t n = 1; n <= 9; ++n) {
      std::vector<std::vector<double>> f(m, std::vector<double>(n));
      for (auto& col : f)
        for (auto& v : col) v = rng.normal() + 0.5;
      std::vector<Span> spans(f.begin(), f.end());
      const double want = brute_force(f);
      const double got = ecekde::detail::distinct_product_sum(spans);
      EXPECT_NEAR(got, want, 1e-12 * (1 + std::fabs(want))) << "m = " << m << ", n = " << n;
    }
  }
}

TEST(DistinctProductSum, RepeatedFactorGivesFallingFactorialForOnes) {
  const std::vector<double> ones(7, 1.0);
  const std::vector<Span> f(4, Span(ones));
  EXPECT_DOUBLE_EQ(ecekde::detail::distinct_product_sum(f), ecekde::detail::falling_factorial(7, 4));
  EXPECT_DOUBLE_EQ(ecekde::detail::falling_factorial(7, 4), 7.0 * 6 * 5 * 4);
}

}  // namespace
