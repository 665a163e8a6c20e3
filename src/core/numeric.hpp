// Small numeric helpers shared by the estimators.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <span>

namespace ecekde::detail {

/// |d|^p, exact for p = 1 and p = 2.
inline double pow_abs(double d, double p) {
  const double a = std::fabs(d);
  if (p == 1) return a;
  if (p == 2) return a * a;
  return std::pow(a, p);
}

/// The digamma function psi(x) = d/dx lgamma(x), for x > 0: recurrence up to x >= 10, then the
/// asymptotic series (absolute error below 1e-14).
inline double digamma(double x) {
  double r = 0;
  for (; x < 10; x += 1) r -= 1 / x;
  const double f = 1 / (x * x);
  const double tail =
      f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760))))));
  return r + std::log(x) - 0.5 / x + tail;
}

/// lgamma(1 + e) for 0 <= e <= kNearOne, by the Taylor series at 1, -gamma e + sum_{k >= 2} (-1)^k zeta(k) e^k / k,
/// cut after k = 12: the first term left out is below 1e-22 of the sum, so the result is within a few ulps
/// of std::lgamma(1 + e) at a fraction of its cost. The Dirichlet kernel's normaliser takes lgamma(x / h + 1)
/// of every coordinate of every centre, and at K = 1,000 nearly all of them are this case (x / h small).
inline constexpr double kNearOne = 1.0 / 64;
inline double lgamma_near_one(double e) {
  constexpr double kEuler = 0.57721566490153286;
  constexpr double kZeta[] = {1.6449340668482264, 1.2020569031595943, 1.0823232337111382, 1.0369277551433699,
                              1.0173430619844491, 1.0083492773819228, 1.0040773561979443, 1.0020083928260822,
                              1.0009945751278181, 1.0004941886041195, 1.0002460865533080};  // zeta(2) .. zeta(12)
  constexpr auto kCoefficient = [&] {  // (-1)^k zeta(k) / k, k = 2 .. 12
    std::array<double, std::size(kZeta)> c{};
    for (std::size_t k = 2; k < c.size() + 2; ++k) c[k - 2] = (k % 2 ? -1.0 : 1.0) * kZeta[k - 2] / static_cast<double>(k);
    return c;
  }();
  double series = 0;
  for (std::size_t k = kCoefficient.size(); k-- > 0;) series = e * series + kCoefficient[k];
  return e * (e * series - kEuler);
}

/// d|d|^p / dd: p |d|^(p-1) sign(d), with the subgradient 0 at d = 0.
inline double pow_abs_derivative(double d, double p) {
  if (d == 0) return 0;
  const double sign = d > 0 ? 1.0 : -1.0;
  if (p == 1) return sign;
  if (p == 2) return 2 * d;
  return sign * p * std::pow(std::fabs(d), p - 1);
}

/// Sum in the given order with Neumaier compensation: the result does not depend on how the values
/// were produced, only on the values.
inline double accurate_sum(std::span<const double> values) {
  double sum = 0, carry = 0;
  for (double v : values) {
    const double t = sum + v;
    carry += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  return sum + carry;
}

}  // namespace ecekde::detail
