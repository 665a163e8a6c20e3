// The debiasing schemes of the paper (Eq. 7, Appendices B-D) and the unbiased U-statistics they are built
// from. Derivations, the corrections to the appendix formulas and the simulations that check them:
// docs/validation.md.
#pragma once

#include <span>

#include "ecekde/data.hpp"
#include "ecekde/names.hpp"

namespace ecekde {

// ---- Unbiased U-statistics: E[estimate] equals the parameter exactly, for every n. ----------------------
// Inputs are n i.i.d. values (paired samples for two arguments, equal lengths), all finite.

/// mu_X^2: ((sum x)^2 - sum x^2) / (n (n - 1)), the mean of x_i x_j over i != j. n >= 2.
double unbiased_square_of_mean(std::span<const double> x);
/// mu_X mu_Y: the mean of x_i y_j over i != j. n >= 2.
double unbiased_product_of_means(std::span<const double> x, std::span<const double> y);
/// mu_X^3: the mean of x_i x_j x_k over distinct i, j, k. n >= 3.
double unbiased_cube_of_mean(std::span<const double> x);
/// mu_X^4: the mean of x_i x_j x_k x_l over distinct i, j, k, l. n >= 4.
double unbiased_fourth_power_of_mean(std::span<const double> x);
/// Cov(X, Y): the sample covariance with divisor n - 1 (Var(X) when y is x). n >= 2.
double unbiased_covariance(std::span<const double> x, std::span<const double> y);
/// E[(X - mu_X)^2 (Y - mu_Y)]: n / ((n - 1)(n - 2)) sum (x_i - xbar)^2 (y_i - ybar). n >= 3.
double unbiased_third_comoment(std::span<const double> x, std::span<const double> y);

// ---- Ratio estimators and their bias corrections ---------------------------------------------------------

/// Which bias correction a ratio estimator applies. n is the sample size; R the target ratio.
enum class RatioDebiasing {
  /// The plain ratio of unbiased estimates of numerator and denominator. Bias O(1/n).
  none,
  /// The paper's second-order scheme (Appendix C for ratios of means, Appendix D for ratios of squared
  /// means), with its typos corrected. Bias O(1/n^2). Written in relative terms, it divides by the
  /// estimates of mu_Y (and of mu_Y^2, mu_X mu_Y): a sample that makes one of them 0 is an Error.
  paper,
  /// Every O(1/n) and O(1/n^2) bias term removed, including the cross terms the paper's scheme leaves
  /// out (docs/validation.md). Bias O(1/n^3). Divides only by estimates of powers of mu_X.
  complete,
};

template <>
struct EnumNames<RatioDebiasing> {
  static constexpr std::string_view what = "debiasing";
  static constexpr std::pair<RatioDebiasing, std::string_view> names[] = {
      {RatioDebiasing::none, "none"}, {RatioDebiasing::paper, "paper"}, {RatioDebiasing::complete, "complete"}};
};

/// mu_Y / mu_X from i.i.d. pairs (x_i, y_i): ybar / xbar, corrected as asked. The expansion behind the
/// corrections needs mu_X away from 0 relative to the spread of X (e.g. x_i > 0). n >= 1 for none,
/// n >= 4 otherwise. Every y_i = 0 gives 0 for every variant.
double ratio_of_means(std::span<const double> x, std::span<const double> y,
                      RatioDebiasing debiasing = RatioDebiasing::none);

/// mu_Y^2 / mu_X^2 from i.i.d. pairs (x_i, y_i): the ratio of the unbiased squares of the means
/// (unbiased_square_of_mean(y) / unbiased_square_of_mean(x)), corrected as asked. Same conditions as
/// ratio_of_means; n >= 2 for none, n >= 4 otherwise.
double ratio_of_squared_means(std::span<const double> x, std::span<const double> y,
                              RatioDebiasing debiasing = RatioDebiasing::none);

/// One summand of the paper's Eq. 7: the estimate of E[y | f(x)]^2 at a location f_j, from the kernel
/// values kernel[i] = k(f_j; f_i) and binary labels y_i in {0, 1} of the other samples (i != j; the
/// caller leaves j out). This is ratio_of_squared_means with x_i = k_i and y_i = k_i y_i:
/// ((sum k_i y_i)^2 - sum (k_i y_i)^2) / ((sum k_i)^2 - sum k_i^2), the "partially debiased" ratio for
/// RatioDebiasing::none. It estimates (E[k y] / E[k])^2 at the fixed bandwidth of k. Kernel values must
/// be finite and >= 0.
double sharpness_at(std::span<const double> kernel, LabelsView labels,
                    RatioDebiasing debiasing = RatioDebiasing::none);

}  // namespace ecekde
