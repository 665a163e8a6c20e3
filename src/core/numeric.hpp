// Small numeric helpers shared by the estimators.
#pragma once

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
