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
