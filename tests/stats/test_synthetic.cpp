// The synthetic generator by statistical checks with fixed seeds, the temperature map, and the ground
// truths against closed forms (K = 2, where every truth is a 1-D integral over u_1, and t2 = 1, where
// every truth is 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ecekde/error.hpp"
#include "ecekde/synthetic.hpp"
#include "expect_error.hpp"

namespace {

using ecekde::SyntheticModel;

// Kolmogorov-Smirnov distance between the sample and a CDF.
double ks_distance(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}

TEST(UniformSimplex, PointsLieOnTheSimplexWithBetaMarginals) {
  // A coordinate of a uniform point on the K-simplex is Beta(1, K-1): CDF 1 - (1 - x)^(K-1).
  for (std::size_t k : {2, 3, 5, 10}) {
    ecekde::Rng rng(k);
    const std::size_t n = 20000;
    std::vector<std::vector<double>> coord(k, std::vector<double>(n));
    std::vector<double> u(k);
    for (std::size_t r = 0; r < n; ++r) {
      ecekde::uniform_simplex(rng, u);
      double sum = 0;
      for (std::size_t c = 0; c < k; ++c) {
        ASSERT_GE(u[c], 0);
        sum += u[c];
        coord[c][r] = u[c];
      }
      ASSERT_NEAR(sum, 1, 1e-15);
    }
    const double km1 = static_cast<double>(k - 1);
    // 1.63 / sqrt(n) is the 1% critical value of the KS statistic.
    for (std::size_t c = 0; c < k; ++c)
      EXPECT_LT(ks_distance(coord[c], [&](double x) { return 1 - std::pow(1 - x, km1); }), 1.63 / std::sqrt(n))
          << "K = " << k << ", coordinate " << c;
  }
}

TEST(UniformSimplex, FirstCoordinateGivenItsValueLeavesTheRestUniform) {
  // (u_2, u_3) / (1 - u_1) is uniform on the 2-simplex whatever u_1: check its first coordinate for
  // small and large u_1 separately.
  ecekde::Rng rng(5);
  std::vector<double> small, large, u(3);
  for (int r = 0; r < 40000; ++r) {
    ecekde::uniform_simplex(rng, u);
    (u[0] < 0.2 ? small : large).push_back(u[1] / (1 - u[0]));
  }
  for (const auto* s : {&small, &large})
    EXPECT_LT(ks_distance(*s, [](double x) { return x; }), 1.63 / std::sqrt(static_cast<double>(s->size())));
}

TEST(TemperatureScale, MatchesThePowerFormulaAndComposes) {
  const std::vector<double> q{0.5, 0.3, 0.15, 0.05};
  for (double t : {0.25, 0.6, 1.0, 3.0}) {
    std::vector<double> out(4), want(4);
    ecekde::temperature_scale(q, t, out);
    double s = 0;
    for (std::size_t c = 0; c < 4; ++c) s += want[c] = std::pow(q[c], 1 / t);
    for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(out[c], want[c] / s, 1e-15);
    // T_a(T_b(q)) = T_{ab}(q)
    std::vector<double> twice(4), once(4);
    ecekde::temperature_scale(out, 0.7, twice);
    ecekde::temperature_scale(q, 0.7 * t, once);
    for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(twice[c], once[c], 1e-15);
  }
  std::vector<double> same(q.begin(), q.end());
  ecekde::temperature_scale(same, 1.0, same);
  for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(same[c], q[c], 1e-16);
}

TEST(TemperatureScale, KeepsZerosAndDoesNotUnderflow) {
  const std::vector<double> q{0.0, 0.6, 0.4};
  std::vector<double> out(3);
  ecekde::temperature_scale(q, 1e-3, out);  // 0.6^1000 underflows; the log-space form does not
  EXPECT_EQ(out[0], 0);
  EXPECT_NEAR(out[1], 1, 1e-15);
  EXPECT_GE(out[2], 0);
}

TEST(GenerateSynthetic, PredictionsAreTheTemperedCalibratedModel) {
  SyntheticModel model{5, 0.6, 0.8};
  const auto d = ecekde::generate_synthetic(model, 1000, 9);
  ASSERT_EQ(d.probs.size(), 5000u);
  std::vector<double> f(5);
  for (std::size_t r = 0; r < d.n; ++r) {
    ecekde::temperature_scale(std::span<const double>(&d.calibrated[r * 5], 5), model.t2, f);
    double sum = 0;
    for (std::size_t c = 0; c < 5; ++c) {
      EXPECT_NEAR(d.probs[r * 5 + c], f[c], 1e-15);
      sum += d.probs[r * 5 + c];
    }
    EXPECT_NEAR(sum, 1, 1e-14);
    EXPECT_TRUE(d.labels[r] >= 0 && d.labels[r] < 5);
  }
}

TEST(GenerateSynthetic, LabelsFollowTheCalibratedModel) {
  // Per class and per decile of p1_c: the count of y = c against sum p1_c, in standard deviations.
  const SyntheticModel model{4, 0.6, 0.6};
  const auto d = ecekde::generate_synthetic(model, 200000, 17);
  for (std::size_t c = 0; c < 4; ++c) {
    std::vector<double> hits(10, 0), expected(10, 0), variance(10, 0);
    for (std::size_t r = 0; r < d.n; ++r) {
      const double p = d.calibrated[r * 4 + c];
      const std::size_t bin = std::min<std::size_t>(9, static_cast<std::size_t>(p * 10));
      hits[bin] += d.labels[r] == static_cast<std::int64_t>(c);
      expected[bin] += p;
      variance[bin] += p * (1 - p);
    }
    for (std::size_t b = 0; b < 10; ++b) {
      if (variance[b] == 0) continue;
      EXPECT_LT(std::fabs(hits[b] - expected[b]) / std::sqrt(variance[b]), 4) << "class " << c << ", bin " << b;
    }
  }
}

TEST(GenerateSynthetic, IsReproducibleForAnyThreadCount) {
  const SyntheticModel model{3, 0.5, 0.7};
  const auto a = ecekde::generate_synthetic(model, 10000, 4, 1);
  const auto b = ecekde::generate_synthetic(model, 10000, 4, 2);
  const auto c = ecekde::generate_synthetic(model, 10000, 5, 2);
  EXPECT_EQ(a.probs, b.probs);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.probs, c.probs);
}

// ---- ground truth -----------------------------------------------------------------------------------

// For K = 2 every truth is a 1-D integral over u_1 ~ U(0, 1): canonical = marginal = 2 E|p1_1 - f_1|^p
// and top-label = E|p1_1 - f_1|^p (the top class's gap equals class 1's up to sign). Composite
// Gauss-Legendre in z = logit(u_1), written independently of the library; p1_1 - f_1 changes sign at
// z = 0, where the panels shrink geometrically (|z|^p is not smooth there for fractional p).
double k2_class_value(const SyntheticModel& m, double p) {
  const double xg[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526};
  const double wg[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538};
  std::vector<double> ends;
  for (double a = 0.125; a <= 60; a += 0.125) ends.push_back(a);
  for (int j = 4; j < 60; ++j) ends.push_back(std::ldexp(1.0, -j));
  std::sort(ends.begin(), ends.end());
  double total = 0, lo = 0;
  for (double hi : ends) {
    for (int i = 0; i < 4; ++i) {
      for (double side : {-1.0, 1.0}) {
        const double z = side * (lo + 0.5 * (hi - lo) * (1 + xg[i])), u = 1 / (1 + std::exp(-z));
        const double p1 = 1 / (1 + std::exp(-z / m.t1)), f = 1 / (1 + std::exp(-z / (m.t1 * m.t2)));
        total += 0.5 * (hi - lo) * wg[i] * u * (1 - u) * std::pow(std::fabs(p1 - f), p);
      }
    }
    lo = hi;
  }
  return total;
}

TEST(GroundTruth, TwoClassesMatchTheOneDimensionalIntegral) {
  for (double p : {1.0, 2.0, 1.5}) {
    const SyntheticModel model{2, 0.6, 0.6};
    ecekde::GroundTruthOptions o;
    o.p = p;
    o.canonical_samples = 1 << 18;
    const auto t = ecekde::synthetic_ground_truth(model, o);
    const double one = k2_class_value(model, p);
    EXPECT_NEAR(t.marginal.value, 2 * one, 1e-9 * one) << "p = " << p;
    EXPECT_NEAR(t.top_label.value, one, 1e-9 * one) << "p = " << p;
    EXPECT_LT(t.marginal.quadrature_error, 1e-10 * one);
    EXPECT_LT(t.marginal.standard_error, 1e-12 * one);  // the other classes' shape is fixed for K = 2
    EXPECT_NEAR(t.canonical.value, 2 * one, 4 * t.canonical.standard_error) << "p = " << p;
  }
}

TEST(GroundTruth, CalibratedModelHasZeroError) {
  for (std::size_t k : {2, 3, 6}) {
    const SyntheticModel model{k, 0.6, 1.0};
    ecekde::GroundTruthOptions o;
    o.canonical_samples = 1 << 12;
    o.inner_samples = 1 << 10;
    const auto t = ecekde::synthetic_ground_truth(model, o);
    EXPECT_LT(t.canonical.value, 1e-15);
    EXPECT_LT(t.marginal.value, 1e-12);
    EXPECT_LT(t.top_label.value, 1e-12);
  }
}

TEST(GroundTruth, IsReproducibleForAnyThreadCount) {
  const SyntheticModel model{4, 0.6, 0.6};
  ecekde::GroundTruthOptions o;
  o.canonical_samples = 1 << 14;
  o.inner_samples = 1 << 10;
  o.threads = 1;
  const auto a = ecekde::synthetic_ground_truth(model, o);
  o.threads = 2;
  const auto b = ecekde::synthetic_ground_truth(model, o);
  EXPECT_EQ(a.canonical.value, b.canonical.value);
  EXPECT_EQ(a.marginal.value, b.marginal.value);
  EXPECT_EQ(a.top_label.standard_error, b.top_label.standard_error);
}

TEST(Errors, NameWhatIsWrong) {
  EXPECT_EQ(testing_support::error_message([] { ecekde::generate_synthetic({1, 0.6, 0.6}, 10, 0); }),
            "synthetic model: classes must be >= 2, got 1");
  EXPECT_EQ(testing_support::error_message([] { ecekde::generate_synthetic({3, 0, 0.6}, 10, 0); }),
            "synthetic model: t1 must be a finite number > 0, got 0");
  EXPECT_EQ(testing_support::error_message([] { ecekde::generate_synthetic({3, 0.6, -1}, 10, 0); }),
            "synthetic model: t2 must be a finite number > 0, got -1");
  EXPECT_EQ(testing_support::error_message([] { ecekde::generate_synthetic({3, 0.6, 0.6}, 0, 0); }),
            "generate_synthetic: n must be >= 1, got 0");
  ecekde::GroundTruthOptions o;
  o.p = 0.5;
  EXPECT_EQ(testing_support::error_message([&] { ecekde::synthetic_ground_truth({}, o); }), "p must be a finite number >= 1, got 0.5");
  o = {};
  o.jackknife_groups = 1;
  EXPECT_EQ(testing_support::error_message([&] { ecekde::synthetic_ground_truth({}, o); }),
            "ground truth: jackknife_groups must be >= 2, got 1");
}

}  // namespace
