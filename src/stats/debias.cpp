// The paper's ratio estimators and their bias corrections. The formulas, their derivation and the
// corrections to the paper's appendices are in docs/validation.md ("Debiasing"); the comments below
// name the pieces.
#include "ecekde/debias.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/text.hpp"
#include "stats/ustat.hpp"

namespace ecekde {

namespace {

using Span = std::span<const double>;

void check_finite(const char* function, const char* name, Span v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) detail::fail_with(function, ": ", name, "[", i, "] = ", v[i], " is not finite");
}

void check_count(const char* function, std::size_t n, std::size_t minimum) {
  if (n < minimum) detail::fail_with(function, ": needs at least ", minimum, " values, got ", n);
}

void check_pairs(const char* function, Span x, Span y, std::size_t minimum) {
  if (x.size() != y.size())
    detail::fail_with(function, ": x has ", x.size(), " values but y has ", y.size());
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

// Unchecked versions of the public U-statistics.
double square_of_mean(Span x) {
  const std::size_t n = x.size();
  return distinct_sum({x, x}) / detail::falling_factorial(n, 2);
}
double product_of_means(Span x, Span y) {
  return distinct_sum({x, y}) / detail::falling_factorial(x.size(), 2);
}
double cube_of_mean(Span x) { return distinct_sum({x, x, x}) / detail::falling_factorial(x.size(), 3); }
double fourth_power_of_mean(Span x) {
  return distinct_sum({x, x, x, x}) / detail::falling_factorial(x.size(), 4);
}
double covariance(Span x, Span y) {
  const double mx = mean(x), my = mean(y);
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += (x[i] - mx) * (y[i] - my);
  return s / static_cast<double>(x.size() - 1);
}

std::vector<double> squares(Span v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i] * v[i];
  return out;
}

// Sample summaries shared by the corrections: means, deviations from them, the unbiased (co)variances
// and the plug-in third central moments m30 = mean(ex^3), m21 = mean(ex^2 ey).
struct Moments {
  double n, xbar, ybar, var_x, var_y, cov_xy, m30, m21;
  std::vector<double> ex, ey;

  Moments(Span x, Span y) : n(static_cast<double>(x.size())), xbar(mean(x)), ybar(mean(y)) {
    ex.resize(x.size());
    ey.resize(y.size());
    double sxx = 0, syy = 0, sxy = 0, sxxx = 0, sxxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      ex[i] = x[i] - xbar;
      ey[i] = y[i] - ybar;
      sxx += ex[i] * ex[i];
      syy += ey[i] * ey[i];
      sxy += ex[i] * ey[i];
      sxxx += ex[i] * ex[i] * ex[i];
      sxxy += ex[i] * ex[i] * ey[i];
    }
    var_x = sxx / (n - 1);
    var_y = syy / (n - 1);
    cov_xy = sxy / (n - 1);
    m30 = sxxx / n;
    m21 = sxxy / n;
  }
};

void require_nonzero(const char* function, const char* what, double value) {
  if (value == 0)
    detail::fail_with(function, ": the paper's correction divides by the estimate of ", what,
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

PaperStarredRatios starred_ratios(const char* function, Span x, Span y, const Moments& m) {
  const double n1 = m.n - 1;
  const double q_x = square_of_mean(x), p = product_of_means(x, y);
  require_nonzero(function, "mu_Y", m.ybar);
  require_nonzero(function, "mu_X mu_Y", p);
  const std::vector<double> x2 = squares(x), y2 = squares(y);
  const double cov_x2y = covariance(x2, y), cov_y2x = covariance(y2, x), cov_x2x = covariance(x2, x);
  const double r_a = m.cov_xy / p, r_b = m.var_x / q_x;
  PaperStarredRatios out;
  out.r_a_main = r_a * (1 - 4 / n1 - (m.var_x / q_x + 2 * m.cov_xy / (m.xbar * m.ybar)) / n1) +
                 (m.ybar * cov_x2y + m.xbar * cov_y2x) / (n1 * p * m.xbar * m.ybar);
  out.r_a_over_mu_y2 = -r_a * m.var_y / n1;
  out.r_b = r_b * (1 - 4 / n1 - 4 * m.var_x / (n1 * q_x)) + 2 * cov_x2x / (n1 * q_x * m.xbar);
  return out;
}

// Appendix C: r (1 - (r_b* - r_a*) / n - B2 / n^2).
double ratio_of_means_paper(Span x, Span y, const Moments& m) {
  const char* function = "ratio_of_means";
  const PaperStarredRatios s = starred_ratios(function, x, y, m);
  const double q_y = square_of_mean(y);
  require_nonzero(function, "mu_Y^2", q_y);
  const double r_a = s.r_a_main + s.r_a_over_mu_y2 / q_y;
  const std::vector<double> x2 = squares(x);
  const double q_x = square_of_mean(x), mu3 = cube_of_mean(x), mu4 = fourth_power_of_mean(x);
  const double cov_x2y = covariance(x2, y), cov_x2x = covariance(x2, x);
  const double v = m.var_x, c = m.cov_xy, n = m.n;
  const double b2 = (cov_x2y - 2 * m.xbar * c) / (q_x * m.ybar) - (cov_x2x - 2 * m.xbar * v) / mu3 -
                    3 * v * c / (mu3 * m.ybar) + 3 * v * v / mu4;
  return m.ybar / m.xbar * (1 - (s.r_b - r_a) / n - b2 / (n * n));
}

// r - b1 / n + 2 b2 / n^2 with b1 = (ybar Var(X) - xbar Cov(X,Y)) / mu_X^3 (unbiased numerator and
// denominator) and b2 the plug-in of the 1/n^2 bias coefficient of r.
double ratio_of_means_complete(Span x, const Moments& m) {
  const double n = m.n, xb = m.xbar, yb = m.ybar, v = m.var_x, c = m.cov_xy;
  const double b1 = (yb * v - xb * c) / cube_of_mean(x);
  const double xb3 = xb * xb * xb, xb4 = xb3 * xb;
  const double b2 = -yb * m.m30 / xb4 + m.m21 / xb3 + 3 * yb * v * v / (xb4 * xb) - 3 * v * c / xb4;
  return yb / xb - b1 / n + 2 * b2 / (n * n);
}

// Appendix D: r (1 + (a) - (b) - (c) + (d) + (e) - (f)) with the terms as corrected in
// docs/validation.md. r_a* and Cov(X,Y)^2 / (mu_X^2 mu_Y^2) enter (a), (c) and (e) only; their parts
// divided by the estimate of mu_Y^2 are multiplied by r = mu_Y^2 / mu_X^2 exactly, which cancels it.
double ratio_of_squared_means_paper(const char* function, Span x, Span y, const Moments& m) {
  const PaperStarredRatios s = starred_ratios(function, x, y, m);
  const std::vector<double> x2 = squares(x);
  const double q_x = square_of_mean(x), q_y = square_of_mean(y);
  const double mu3 = cube_of_mean(x), mu4 = fourth_power_of_mean(x);
  const double cov_x2y = covariance(x2, y), cov_x2x = covariance(x2, x);
  const double n = m.n, v = m.var_x, c = m.cov_xy, yb = m.ybar;
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
double ratio_of_squared_means_complete(Span x, Span y, const Moments& m) {
  const std::size_t count = x.size();
  const double n = m.n;
  std::vector<double> ex2(count), exy(count);
  for (std::size_t i = 0; i < count; ++i) {
    ex2[i] = m.ex[i] * m.ex[i];
    exy[i] = m.ex[i] * m.ey[i];
  }
  const double ff4 = detail::falling_factorial(count, 4);
  const double my2_var_x = ((n - 3) * distinct_sum({y, y, ex2}) - distinct_sum({y, y, m.ex, m.ex})) / ff4;
  const double mx_my_cov = ((n - 3) * distinct_sum({x, y, exy}) - distinct_sum({x, y, m.ex, m.ey})) / ff4;
  const double b1 = 4 * (my2_var_x - mx_my_cov) / fourth_power_of_mean(x);
  const double xb = m.xbar, yb = m.ybar, v = m.var_x, c = m.cov_xy;
  const double xb2 = xb * xb, xb4 = xb2 * xb2, xb5 = xb4 * xb, xb6 = xb4 * xb2;
  const double b2 = -38 * yb * yb * v * v / xb6 - 10 * c * c / xb4 + 48 * yb * v * c / xb5 +
                    8 * yb * yb * m.m30 / xb5 - 8 * yb * m.m21 / xb4;
  return square_of_mean(y) / square_of_mean(x) - b1 / n - b2 / (n * n);
}

double squared_means_ratio(const char* function, Span x, Span y, RatioDebiasing debiasing) {
  check_pairs(function, x, y, debiasing == RatioDebiasing::none ? 2 : 4);
  if (all_zero(y)) return 0;
  if (debiasing == RatioDebiasing::none) return square_of_mean(y) / square_of_mean(x);
  const Moments m(x, y);
  if (debiasing == RatioDebiasing::paper) return ratio_of_squared_means_paper(function, x, y, m);
  return ratio_of_squared_means_complete(x, y, m);
}

}  // namespace

double unbiased_square_of_mean(Span x) {
  check_count("unbiased_square_of_mean", x.size(), 2);
  check_finite("unbiased_square_of_mean", "x", x);
  return square_of_mean(x);
}

double unbiased_product_of_means(Span x, Span y) {
  check_pairs("unbiased_product_of_means", x, y, 2);
  return product_of_means(x, y);
}

double unbiased_cube_of_mean(Span x) {
  check_count("unbiased_cube_of_mean", x.size(), 3);
  check_finite("unbiased_cube_of_mean", "x", x);
  return cube_of_mean(x);
}

double unbiased_fourth_power_of_mean(Span x) {
  check_count("unbiased_fourth_power_of_mean", x.size(), 4);
  check_finite("unbiased_fourth_power_of_mean", "x", x);
  return fourth_power_of_mean(x);
}

double unbiased_covariance(Span x, Span y) {
  check_pairs("unbiased_covariance", x, y, 2);
  return covariance(x, y);
}

double unbiased_third_comoment(Span x, Span y) {
  check_pairs("unbiased_third_comoment", x, y, 3);
  const Moments m(x, y);
  return m.m21 * m.n * m.n / ((m.n - 1) * (m.n - 2));
}

double ratio_of_means(Span x, Span y, RatioDebiasing debiasing) {
  const char* function = "ratio_of_means";
  check_pairs(function, x, y, debiasing == RatioDebiasing::none ? 1 : 4);
  if (all_zero(y)) return 0;
  if (debiasing == RatioDebiasing::none) return mean(y) / mean(x);
  const Moments m(x, y);
  if (debiasing == RatioDebiasing::paper) return ratio_of_means_paper(x, y, m);
  return ratio_of_means_complete(x, m);
}

double ratio_of_squared_means(Span x, Span y, RatioDebiasing debiasing) {
  return squared_means_ratio("ratio_of_squared_means", x, y, debiasing);
}

double sharpness_at(Span kernel, LabelsView labels, RatioDebiasing debiasing) {
  const char* function = "sharpness_at";
  if (labels.size() != kernel.size())
    detail::fail_with(function, ": labels has ", labels.size(), " entries but kernel has ", kernel.size());
  for (std::size_t i = 0; i < kernel.size(); ++i)
    if (!(std::isfinite(kernel[i]) && kernel[i] >= 0))
      detail::fail_with(function, ": kernel[", i, "] = ", kernel[i], " is not a finite value >= 0");
  std::vector<double> weighted(kernel.size());
  for (std::size_t i = 0; i < kernel.size(); ++i) {
    const std::int64_t label = labels[i];
    if (label != 0 && label != 1) detail::fail_with(function, ": labels[", i, "] = ", label, " is not 0 or 1");
    weighted[i] = label == 1 ? kernel[i] : 0.0;
  }
  return squared_means_ratio(function, kernel, weighted, debiasing);
}

}  // namespace ecekde
