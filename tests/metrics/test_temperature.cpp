// Temperature scaling: recovery of a known temperature, a brute-force grid minimiser, and the edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ecekde/error.hpp"
#include "ecekde/random.hpp"
#include "ecekde/temperature.hpp"
#include "metrics_oracle.hpp"

namespace {

struct Logits {
  std::size_t n = 0, k = 0;
  std::vector<double> z;
  std::vector<int> y;
  std::vector<std::int64_t> labels() const { return {y.begin(), y.end()}; }
};

// Normal logits with standard deviation `spread`; labels drawn from softmax(z / t_true).
Logits synthetic(std::size_t n, std::size_t k, double spread, double t_true, std::uint64_t seed) {
  ecekde::Rng rng(seed);
  Logits d{n, k, std::vector<double>(n * k), std::vector<int>(n)};
  std::vector<double> p(k);
  for (std::size_t i = 0; i < n; ++i) {
    double m = -INFINITY, s = 0;
    for (std::size_t c = 0; c < k; ++c) m = std::max(m, d.z[i * k + c] = spread * rng.normal());
    for (std::size_t c = 0; c < k; ++c) s += p[c] = std::exp((d.z[i * k + c] - m) / t_true);
    for (auto& v : p) v /= s;
    d.y[i] = static_cast<int>(rng.categorical(p));
  }
  return d;
}

ecekde::TemperatureFit fit(const Logits& d, const ecekde::TemperatureOptions& o = {}) {
  return ecekde::fit_temperature(ecekde::ProbsView::row_major(d.z.data(), d.n, d.k), ecekde::LabelsView(d.labels()), o);
}

TEST(Temperature, RecoversAKnownTemperature) {
  // The fit is the maximum-likelihood estimate of b = 1/T, whose standard error is
  // 1 / sqrt(n L''(b)) with L'' the mean curvature of the NLL in b (here by a second difference of the
  // oracle). Four standard errors on each of four data sets.
  std::uint64_t seed = 1;
  for (double t_true : {0.5, 1.0, 2.0, 4.0}) {
    const auto d = synthetic(20000, 10, 2.0, t_true, seed++);
    const auto f = fit(d);
    EXPECT_FALSE(f.at_bound);
    const double b = 1 / f.temperature, step = 1e-3 * b;
    auto L = [&](double beta) { return metrics_oracle::nll(d.z, d.k, d.y, 1 / beta); };
    const double curvature = (L(b + step) - 2 * L(b) + L(b - step)) / (step * step);
    const double se = 1 / std::sqrt(double(d.n) * curvature);
    EXPECT_LT(std::fabs(b - 1 / t_true), 4 * se) << "T_true=" << t_true << " fitted " << f.temperature << " se(1/T) " << se;
    EXPECT_LT(se, 0.05 / t_true);  // the test has power: the estimate is pinned to a few percent
  }
}

TEST(Temperature, AgreesWithBruteForceGrid) {
  // 4001 points in log T over [0.05, 20]; the fit is within one grid step of the grid's best point and
  // at least as good as every grid point.
  const auto d = synthetic(500, 5, 3.0, 1.7, 42);
  const auto f = fit(d);
  const double lo = std::log(0.05), hi = std::log(20.0);
  const int points = 4001;
  const double step = (hi - lo) / (points - 1);
  double best_t = 0, best = INFINITY;
  for (int g = 0; g < points; ++g) {
    const double t = std::exp(lo + step * g), v = metrics_oracle::nll(d.z, d.k, d.y, t);
    if (v < best) best = v, best_t = t;
  }
  EXPECT_LE(std::fabs(std::log(f.temperature) - std::log(best_t)), step);
  EXPECT_LE(f.nll, best + 1e-14);
  EXPECT_NEAR(f.nll, metrics_oracle::nll(d.z, d.k, d.y, f.temperature), 1e-14);
  EXPECT_NEAR(f.nll_at_one, metrics_oracle::nll(d.z, d.k, d.y, 1.0), 1e-14);
  EXPECT_LE(f.nll, f.nll_at_one);
  EXPECT_LT(f.iterations, 30);
  // Converged to the stationary point, not merely near it: the oracle's slope in log T vanishes to the
  // rounding of its central difference (about eps L / delta = 2e-11).
  const double delta = 1e-5, u = std::log(f.temperature);
  const double slope = (metrics_oracle::nll(d.z, d.k, d.y, std::exp(u + delta)) -
                        metrics_oracle::nll(d.z, d.k, d.y, std::exp(u - delta))) / (2 * delta);
  EXPECT_LT(std::fabs(slope), 1e-9);
}

TEST(Temperature, LogProbabilitiesGiveTheSameFit) {
  // log softmax(z) = z - logsumexp(z): a per-row shift, which the softmax ignores.
  const auto d = synthetic(3000, 7, 2.5, 1.4, 5);
  Logits logp = d;
  for (std::size_t i = 0; i < d.n; ++i) {
    double m = -INFINITY, s = 0;
    for (std::size_t c = 0; c < d.k; ++c) m = std::max(m, d.z[i * d.k + c]);
    for (std::size_t c = 0; c < d.k; ++c) s += std::exp(d.z[i * d.k + c] - m);
    for (std::size_t c = 0; c < d.k; ++c) logp.z[i * d.k + c] = d.z[i * d.k + c] - m - std::log(s);
  }
  EXPECT_NEAR(fit(logp).temperature, fit(d).temperature, 1e-9);
  // float32 logits are read as their double values.
  std::vector<float> z32(d.z.begin(), d.z.end());
  Logits rounded = d;
  for (std::size_t e = 0; e < z32.size(); ++e) rounded.z[e] = z32[e];
  const auto f32 = ecekde::fit_temperature(ecekde::ProbsView::row_major(z32.data(), d.n, d.k), ecekde::LabelsView(d.labels()));
  EXPECT_EQ(f32.temperature, fit(rounded).temperature);
}

TEST(Temperature, ApplyIsTheScaledSoftmax) {
  const std::vector<double> z{1000, 0, -3, 2.0, 2.0, 2.0, 0.5, -0.5, 1.5};
  const auto p = ecekde::apply_temperature(ecekde::ProbsView::row_major(z.data(), 3, 3), 2.0);
  ASSERT_EQ(p.size(), 9u);
  EXPECT_EQ(p[0], 1.0);  // no overflow: exp(500) is never formed
  EXPECT_DOUBLE_EQ(p[1], std::exp(-500.0));
  EXPECT_DOUBLE_EQ(p[2], std::exp(-501.5));
  for (int c = 3; c < 6; ++c) EXPECT_NEAR(p[c], 1.0 / 3, 1e-16);
  const double a = std::exp(0.25), b = std::exp(-0.25), c = std::exp(0.75);
  EXPECT_NEAR(p[6], a / (a + b + c), 1e-16);
  EXPECT_NEAR(p[7], b / (a + b + c), 1e-16);
  EXPECT_NEAR(p[8], c / (a + b + c), 1e-16);
}

TEST(Temperature, BoundsAndFlatLikelihood) {
  // Every prediction right: the NLL keeps falling as T -> 0, so the fit stops at the lower bound.
  Logits right{3, 2, {2, 0, 0, 1, 3, -1}, {0, 1, 0}};
  ecekde::TemperatureOptions o;
  o.min_temperature = 0.01;
  o.max_temperature = 50;
  auto f = fit(right, o);
  EXPECT_TRUE(f.at_bound);
  EXPECT_EQ(f.temperature, 0.01);
  // Every prediction wrong: the NLL falls toward the uniform prediction, T -> infinity.
  Logits wrong = right;
  wrong.y = {1, 0, 1};
  f = fit(wrong, o);
  EXPECT_TRUE(f.at_bound);
  EXPECT_EQ(f.temperature, 50.0);
  // Equal logits in every row: the NLL is log K for every T; the fit reports T = 1.
  Logits flat{2, 3, {1, 1, 1, -2, -2, -2}, {0, 2}};
  f = fit(flat);
  EXPECT_FALSE(f.at_bound);
  EXPECT_EQ(f.temperature, 1.0);
  EXPECT_NEAR(f.nll, std::log(3.0), 1e-15);
  // One sample suffices.
  Logits one{1, 2, {1, 0}, {1}};
  EXPECT_TRUE(fit(one).at_bound);
}

std::string error_of(auto f) {
  try {
    f();
  } catch (const ecekde::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Temperature, ErrorMessages) {
  auto fit_of = [](std::vector<double> z, std::size_t n, std::size_t k, std::vector<std::int64_t> y,
                   ecekde::TemperatureOptions o = {}) {
    return error_of([&] { ecekde::fit_temperature(ecekde::ProbsView::row_major(z.data(), n, k), ecekde::LabelsView(y), o); });
  };
  EXPECT_EQ(fit_of({1, 2}, 2, 1, {0, 0}), "temperature scaling needs logits with at least 2 columns (classes), got 1");
  EXPECT_EQ(fit_of({}, 0, 3, {}), "temperature scaling needs at least 1 sample, got 0");
  EXPECT_EQ(fit_of({1, NAN, 0, 1}, 2, 2, {0, 1}), "logits row 0, column 1: value nan is not finite");
  EXPECT_EQ(fit_of({1, 0, -INFINITY, 1}, 2, 2, {0, 1}), "logits row 1, column 0: value -inf is not finite");
  EXPECT_EQ(fit_of({1, 0, 0, 1}, 2, 2, {0, 2}), "labels row 1: value 2 is outside [0, 2)");
  EXPECT_EQ(fit_of({1, 0, 0, 1}, 2, 2, {0}), "labels has 1 entries but logits has 2 rows");
  ecekde::TemperatureOptions bad;
  bad.min_temperature = 0;
  EXPECT_EQ(fit_of({1, 0, 0, 1}, 2, 2, {0, 1}, bad), "min_temperature must be a finite number > 0, got 0");
  bad.min_temperature = 2;
  bad.max_temperature = 1;
  EXPECT_EQ(fit_of({1, 0, 0, 1}, 2, 2, {0, 1}, bad),
            "max_temperature must be a finite number above min_temperature (2), got 1");
  const std::vector<double> z{1, 0};
  EXPECT_EQ(error_of([&] { ecekde::apply_temperature(ecekde::ProbsView::row_major(z.data(), 1, 2), -1); }),
            "temperature must be a finite number > 0, got -1");
  EXPECT_EQ(error_of([&] { ecekde::apply_temperature(ecekde::ProbsView::row_major(z.data(), 1, 2), NAN); }),
            "temperature must be a finite number > 0, got nan");
}

}  // namespace
