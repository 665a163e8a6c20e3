// Exact bias of the ratio estimators, without Monte Carlo noise: the expectation over every sample of
// size n from a three-point distribution of (X, Y), summed with multinomial weights. Shows the order of
// each correction (bias(n) / bias(2n) -> 2, 4, 8 for orders 1/n, 1/n^2, 1/n^3) beyond the sizes where
// a simulation can resolve it. docs/validation.md ("Debiasing") quotes its output.
//
// Usage: ecekde_exact_bias [max_n]   (default 256; doubling from 8)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <span>
#include <vector>

#include "debias.hpp"

namespace {

using ecekde::RatioDebiasing;
using Span = std::span<const double>;

// Positive X (a kernel value) and positive Y, as in the sharpness term (tests/stats uses the same points).
const double kX[3] = {0.6, 1.0, 1.8}, kY[3] = {0.2, 0.9, 0.4}, kProb[3] = {0.3, 0.45, 0.25};

double expectation(std::size_t n, const std::function<double(Span, Span)>& estimator) {
  double total = 0;
  std::vector<double> xs, ys;
  for (std::size_t c0 = 0; c0 <= n; ++c0) {
    for (std::size_t c1 = 0; c0 + c1 <= n; ++c1) {
      const std::size_t counts[3] = {c0, c1, n - c0 - c1};
      double log_weight = std::lgamma(static_cast<double>(n) + 1);
      xs.clear();
      ys.clear();
      for (int k = 0; k < 3; ++k) {
        log_weight += static_cast<double>(counts[k]) * std::log(kProb[k]) - std::lgamma(static_cast<double>(counts[k]) + 1);
        xs.insert(xs.end(), counts[k], kX[k]);
        ys.insert(ys.end(), counts[k], kY[k]);
      }
      total += std::exp(log_weight) * estimator(xs, ys);
    }
  }
  return total;
}

void table(const char* title, double (*ratio)(Span, Span, RatioDebiasing), double target, std::size_t max_n) {
  std::printf("%s (target %.10f)\n%6s %-9s %13s %11s %11s %11s %8s\n", title, target, "n", "variant", "bias",
              "n bias", "n^2 bias", "n^3 bias", "ratio");
  const char* names[3] = {"none", "paper", "complete"};
  const RatioDebiasing variants[3] = {RatioDebiasing::none, RatioDebiasing::paper, RatioDebiasing::complete};
  for (int v = 0; v < 3; ++v) {
    double previous = NAN;
    for (std::size_t n = 8; n <= max_n; n *= 2) {
      const double b = expectation(n, [&](Span x, Span y) { return ratio(x, y, variants[v]); }) - target;
      const double nd = static_cast<double>(n);
      std::printf("%6zu %-9s %+13.5e %+11.5f %+11.5f %+11.4f %8.3f\n", n, names[v], b, nd * b, nd * nd * b,
                  nd * nd * nd * b, previous / b);
      previous = b;
    }
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t max_n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  double mx = 0, my = 0;
  for (int k = 0; k < 3; ++k) mx += kProb[k] * kX[k], my += kProb[k] * kY[k];
  table("ratio of means mu_Y / mu_X", ecekde::ratio_of_means, my / mx, max_n);
  table("ratio of squared means mu_Y^2 / mu_X^2", ecekde::ratio_of_squared_means, my * my / (mx * mx), max_n);
  return 0;
}
