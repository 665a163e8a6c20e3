// The paper's ratio estimators and their bias corrections. The formulas, their derivation and the
// corrections to the paper's appendices are in docs/validation.md ("Debiasing"); the comments below
// name the pieces.
#include "debias.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ecekde/error.hpp"
#include "ustat.hpp"

namespace ecekde {

namespace {

using Span = std::span<const double>;

void check_finite(const char* function, const char* name, Span v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) fail_with(function, ": ", name, "[", i, "] = ", v[i], " is not finite");
}

void check_count(const char* function, std::size_t n, std::size_t minimum) {
  if (n < minimum) fail_with(function, ": needs at least ", minimum, " values, got ", n);
}

void check_pairs(const char* function, Span x, Span y, std::size_t minimum) {
  if (x.size() != y.size())
    fail_with(function, ": x has ", x.size(), " values but y has ", y.size());
  check_count(function, x.size(), minimum);
  check_finite(function, "x", x);
  check_finite(function, "y", y);
}

double mean(Span v) {
  double s = 0;
  for (double a : v) s += a;
  return s / static_cast<double>(v.size());
}

bool all_zero(Span v) {
  for (double a : v)
    if (a != 0) return false;
  return true;
}

double distinct_sum(std::initializer_list<Span> factors) {
  return detail::distinct_product_sum(std::span<const Span>(factors.begin(), factors.size()));
}

// One pass over the deviations e = x - xbar, d = y - ybar gives every statistic the estimators use.
// The U-statistics come from expanding x = xbar + e in their distinct-index sums, where sum e = 0:
//   sum_{i!=j} x_i x_j          = n(n-1) xbar^2 - S(e^2)
//   sum_{distinct} x_i x_j x_k  = (n)_3 xbar^3 - 3 (n-2) xbar S(e^2) + 2 S(e^3)
//   sum_{distinct} x_i..x_l     = (n)_4 xbar^4 - 6 (n-2)(n-3) xbar^2 S(e^2) + 8 (n-3) xbar S(e^3)
//                                 + 3 S(e^2)^2 - 6 S(e^4)
// (S = sum over i, (n)_k = n (n-1) ... (n-k+1)), which avoids the cancellation of raw power sums.
struct Summary {
  double n, xbar, ybar;
  double see = 0, sdd = 0, sed = 0, seee = 0, seed = 0, sedd = 0, seeee = 0;  // central power sums

  Summary(Span x, Span y) : n(static_cast<double>(x.size())), xbar(mean(x)), ybar(mean(y)) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double a = x[i] - xbar, b = y[i] - ybar;
      see += a * a, sdd += b * b, sed += a * b;
      seee += a * a * a, seed += a * a * b, sedd += a * b * b, seeee += a * a * a * a;
    }
  }
  double var_x() const { return see / (n - 1); }
  double var_y() const { return sdd / (n - 1); }
  double cov_xy() const { return sed / (n - 1); }
  double m30() const { return seee / n; }  // plug-in third central moments
  double m21() const { return seed / n; }
  double square_of_mean_x() const { return xbar * xbar - see / (n * (n - 1)); }
  double square_of_mean_y() const { return ybar * ybar - sdd / (n * (n - 1)); }
  double product_of_means() const { return xbar * ybar - sed / (n * (n - 1)); }
  double cube_of_mean_x() const {
    return xbar * xbar * xbar - 3 * xbar * see / (n * (n - 1)) + 2 * seee / (n * (n - 1) * (n - 2));
  }
  double fourth_power_of_mean_x() const {
    const double x2 = xbar * xbar;
    return x2 * x2 + (-6 * (n - 2) * (n - 3) * x2 * see + 8 * (n - 3) * xbar * seee + 3 * see * see - 6 * seeee) /
                         detail::falling_factorial(static_cast<std::size_t>(n), 4);
  }
  // Sample covariances of (x^2, y), (y^2, x), (x^2, x): x_i^2 - mean(x^2) = 2 xbar e_i + e_i^2 - mean(e^2).
  double cov_x2_y() const { return (2 * xbar * sed + seed) / (n - 1); }
  double cov_y2_x() const { return (2 * ybar * sed + sedd) / (n - 1); }
  double cov_x2_x() const { return (2 * xbar * see + seee) / (n - 1); }
};

void require_nonzero(const char* function, const char* what, double value) {
  if (value == 0)
    fail_with(function, ": the paper's correction divides by the estimate of ", what,
                      ", which is 0 for this sample (RatioDebiasing::complete does not)");
}

// The paper's recursively corrected r_a = Cov(X,Y) / mu_X mu_Y and r_b = Var(X) / mu_X^2 (Appendix C,
// Eqs. r_a*, r_b*), written with the factors Cov(X,Y) and Var(X) cancelled so that a sample with zero
// covariance or variance is not a 0/0. r_a* = r_a_main + r_a_over_mu_y2 / (estimate of mu_Y^2): that
// term is kept apart so that the ratio of squared means can multiply it by r = mu_Y^2 / mu_X^2 before
// dividing (the estimate of mu_Y^2 is 0 when at most one y_i is nonzero).
struct PaperStarredRatios {
  double r_a_main, r_a_over_mu_y2, r_b;
};

PaperStarredRatios starred_ratios(const char* function, const Summary& m) {
  const double n1 = m.n - 1;
  const double q_x = m.square_of_mean_x(), p = m.product_of_means();
  require_nonzero(function, "mu_Y", m.ybar);
  require_nonzero(function, "mu_X mu_Y", p);
  const double v = m.var_x(), c = m.cov_xy();
  const double r_a = c / p, r_b = v / q_x;
  PaperStarredRatios out;
  out.r_a_main = r_a * (1 - 4 / n1 - (v / q_x + 2 * c / (m.xbar * m.ybar)) / n1) +
                 (m.ybar * m.cov_x2_y() + m.xbar * m.cov_y2_x()) / (n1 * p * m.xbar * m.ybar);
  out.r_a_over_mu_y2 = -r_a * m.var_y() / n1;
  out.r_b = r_b * (1 - 4 / n1 - 4 * v / (n1 * q_x)) + 2 * m.cov_x2_x() / (n1 * q_x * m.xbar);
  return out;
}

// Appendix C: r (1 - (r_b* - r_a*) / n - B2 / n^2).
double ratio_of_means_paper(const Summary& m) {
  const char* function = "ratio_of_means";
  const PaperStarredRatios s = starred_ratios(function, m);
  const double q_y = m.square_of_mean_y();
  require_nonzero(function, "mu_Y^2", q_y);
  const double r_a = s.r_a_main + s.r_a_over_mu_y2 / q_y;
  const double q_x = m.square_of_mean_x(), mu3 = m.cube_of_mean_x(), mu4 = m.fourth_power_of_mean_x();
  const double v = m.var_x(), c = m.cov_xy(), n = m.n;
  const double b2 = (m.cov_x2_y() - 2 * m.xbar * c) / (q_x * m.ybar) - (m.cov_x2_x() - 2 * m.xbar * v) / mu3 -
                    3 * v * c / (mu3 * m.ybar) + 3 * v * v / mu4;
  return m.ybar / m.xbar * (1 - (s.r_b - r_a) / n - b2 / (n * n));
}

// r - b1 / n + 2 b2 / n^2 with b1 = (ybar Var(X) - xbar Cov(X,Y)) / mu_X^3 (unbiased numerator and
// denominator) and b2 the plug-in of the 1/n^2 bias coefficient of r.
double ratio_of_means_complete(const Summary& m) {
  const double n = m.n, xb = m.xbar, yb = m.ybar, v = m.var_x(), c = m.cov_xy();
  const double b1 = (yb * v - xb * c) / m.cube_of_mean_x();
  const double xb3 = xb * xb * xb, xb4 = xb3 * xb;
  const double b2 = -yb * m.m30() / xb4 + m.m21() / xb3 + 3 * yb * v * v / (xb4 * xb) - 3 * v * c / xb4;
  return yb / xb - b1 / n + 2 * b2 / (n * n);
}

// Appendix D: r (1 + (a) - (b) - (c) + (d) + (e) - (f)) with the terms as corrected in
// docs/validation.md. r_a* and Cov(X,Y)^2 / (mu_X^2 mu_Y^2) enter (a), (c) and (e) only; their parts
// divided by the estimate of mu_Y^2 are multiplied by r = mu_Y^2 / mu_X^2 exactly, which cancels it.
double ratio_of_squared_means_paper(const char* function, const Summary& m) {
  const PaperStarredRatios s = starred_ratios(function, m);
  const double q_x = m.square_of_mean_x(), q_y = m.square_of_mean_y();
  const double mu3 = m.cube_of_mean_x(), mu4 = m.fourth_power_of_mean_x();
  const double cov_x2y = m.cov_x2_y(), cov_x2x = m.cov_x2_x();
  const double n = m.n, v = m.var_x(), c = m.cov_xy(), yb = m.ybar;
  const double v2 = v * v / (q_x * q_x);
  const double f1 = 1 / (n * (n - 1));
  const double f2 = 32 * (n - 2) / (n * (n - 1) * (n - 1));
  const double f3 = 4 * (n - 2) * (n - 3) / (n * (n - 1));
  const double f4 = 24 * (n - 2) * (n - 3) * (n - 4) / (n * n * (n - 1) * (n - 1) * (n - 1));
  const double f5 = (n - 2) * (n - 3) * (n - 4) * (n - 5) / (n * n * (n - 1) * (n - 1));
  // (a) - (c) + (e) = weight_r_a * r_a* + weight_c2 * Cov^2 / (mu_X^2 mu_Y^2) + the rest of (c), (e).
  const double weight_r_a = 24 / n - f3 * 8 / n + f5 * 12 / n;
  const double weight_c2 = 12 * f1 - f3 * 12 * f1 + f5 * 30 * f1;
  const double c_rest = f2 * (cov_x2y / (q_x * yb) + 2 * c * (v + q_x) / (mu3 * yb));
  const double e_rest = f4 * (cov_x2y / (yb * q_x) + 4 * c * (v + q_x) / (yb * mu3));
  const double b = 12 * f1 * v2 + 24 / n * s.r_b;
  const double d = f2 * (cov_x2x / mu3 + 2 * v * (v + q_x) / mu4) + f3 * (8 / n * s.r_b + 12 * f1 * v2);
  const double f = f4 * (cov_x2x / mu3 + 4 * v * (v + q_x) / mu4) + f5 * (12 / n * s.r_b + 30 * f1 * v2);
  const double r = q_y / q_x;
  return r * (1 + weight_r_a * s.r_a_main - b - c_rest + d + e_rest - f) +
         (weight_r_a * s.r_a_over_mu_y2 + weight_c2 * c * c / q_x) / q_x;
}

// r - b1 / n - b2' / n^2 with b1 = 4 (mu_Y^2 Var(X) - mu_X mu_Y Cov(X,Y)) / mu_X^4 (unbiased numerator
// and denominator; the variance and covariance factors are computed from deviations, which leaves these
// shift-invariant U-statistics unchanged and avoids cancellation) and b2' the plug-in of the remaining
// 1/n^2 coefficient.
double ratio_of_squared_means_complete(Span x, Span y, const Summary& m) {
  const std::size_t count = x.size();
  const double n = m.n;
  std::vector<double> e(count), d(count), e2(count), ed(count);
  for (std::size_t i = 0; i < count; ++i) {
    e[i] = x[i] - m.xbar;
    d[i] = y[i] - m.ybar;
    e2[i] = e[i] * e[i];
    ed[i] = e[i] * d[i];
  }
  const double ff4 = detail::falling_factorial(count, 4);
  const double my2_var_x = ((n - 3) * distinct_sum({y, y, e2}) - distinct_sum({y, y, e, e})) / ff4;
  const double mx_my_cov = ((n - 3) * distinct_sum({x, y, ed}) - distinct_sum({x, y, e, d})) / ff4;
  const double b1 = 4 * (my2_var_x - mx_my_cov) / m.fourth_power_of_mean_x();
  const double xb = m.xbar, yb = m.ybar, v = m.var_x(), c = m.cov_xy();
  const double xb2 = xb * xb, xb4 = xb2 * xb2, xb5 = xb4 * xb, xb6 = xb4 * xb2;
  const double b2 = -38 * yb * yb * v * v / xb6 - 10 * c * c / xb4 + 48 * yb * v * c / xb5 +
                    8 * yb * yb * m.m30() / xb5 - 8 * yb * m.m21() / xb4;
  return m.square_of_mean_y() / m.square_of_mean_x() - b1 / n - b2 / (n * n);
}

double squared_means_ratio(const char* function, Span x, Span y, RatioDebiasing debiasing) {
  check_pairs(function, x, y, debiasing == RatioDebiasing::none ? 2 : 4);
  if (all_zero(y)) return 0;
  const Summary m(x, y);
  if (debiasing == RatioDebiasing::none) return m.square_of_mean_y() / m.square_of_mean_x();
  if (debiasing == RatioDebiasing::paper) return ratio_of_squared_means_paper(function, m);
  return ratio_of_squared_means_complete(x, y, m);
}

}  // namespace

double unbiased_square_of_mean(Span x) {
  check_count("unbiased_square_of_mean", x.size(), 2);
  check_finite("unbiased_square_of_mean", "x", x);
  return Summary(x, x).square_of_mean_x();
}

double unbiased_product_of_means(Span x, Span y) {
  check_pairs("unbiased_product_of_means", x, y, 2);
  return Summary(x, y).product_of_means();
}

double unbiased_cube_of_mean(Span x) {
  check_count("unbiased_cube_of_mean", x.size(), 3);
  check_finite("unbiased_cube_of_mean", "x", x);
  return Summary(x, x).cube_of_mean_x();
}

double unbiased_fourth_power_of_mean(Span x) {
  check_count("unbiased_fourth_power_of_mean", x.size(), 4);
  check_finite("unbiased_fourth_power_of_mean", "x", x);
  return Summary(x, x).fourth_power_of_mean_x();
}

double unbiased_covariance(Span x, Span y) {
  check_pairs("unbiased_covariance", x, y, 2);
  return Summary(x, y).cov_xy();
}

double unbiased_third_comoment(Span x, Span y) {
  check_pairs("unbiased_third_comoment", x, y, 3);
  const Summary m(x, y);
  return m.seed * m.n / ((m.n - 1) * (m.n - 2));
}

double ratio_of_means(Span x, Span y, RatioDebiasing debiasing) {
  const char* function = "ratio_of_means";
  check_pairs(function, x, y, debiasing == RatioDebiasing::none ? 1 : 4);
  if (all_zero(y)) return 0;
  if (debiasing == RatioDebiasing::none) return mean(y) / mean(x);
  const Summary m(x, y);
  if (debiasing == RatioDebiasing::paper) return ratio_of_means_paper(m);
  return ratio_of_means_complete(m);
}

double ratio_of_squared_means(Span x, Span y, RatioDebiasing debiasing) {
  return squared_means_ratio("ratio_of_squared_means", x, y, debiasing);
}

double sharpness_at(Span kernel, LabelsView labels, RatioDebiasing debiasing) {
  const char* function = "sharpness_at";
  if (labels.size() != kernel.size())
    fail_with(function, ": labels has ", labels.size(), " entries but kernel has ", kernel.size());
  for (std::size_t i = 0; i < kernel.size(); ++i)
    if (!(std::isfinite(kernel[i]) && kernel[i] >= 0))
      fail_with(function, ": kernel[", i, "] = ", kernel[i], " is not a finite value >= 0");
  std::vector<double> weighted(kernel.size());
  for (std::size_t i = 0; i < kernel.size(); ++i) {
    const std::int64_t label = labels[i];
    if (label != 0 && label != 1) fail_with(function, ": labels[", i, "] = ", label, " is not 0 or 1");
    weighted[i] = label == 1 ? kernel[i] : 0.0;
  }
  return squared_means_ratio(function, kernel, weighted, debiasing);
}

}  // namespace ecekde
