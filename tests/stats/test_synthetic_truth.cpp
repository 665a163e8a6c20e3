// The marginal / top-label integrator: its quadrature rule, the value for K = 3 against a 2-D
// quadrature in a different parametrisation, and its conditional expectations and densities against
// local regression on simulated data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ecekde/synthetic.hpp"
#include "stats/synthetic_truth.hpp"

namespace {

using ecekde::SyntheticModel;
using ecekde::detail::GaussLegendre;
using ecekde::detail::ShapeSample;

TEST(GaussLegendre, IsExactForPolynomialsUpToDegree2nMinus1) {
  for (std::size_t n : {1, 4, 12, 20}) {
    const GaussLegendre rule = GaussLegendre::make(n);
    for (std::size_t d = 0; d < 2 * n; ++d) {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += rule.weights[i] * std::pow(rule.nodes[i], static_cast<double>(d));
      EXPECT_NEAR(s, d % 2 ? 0.0 : 2.0 / static_cast<double>(d + 1), 1e-14) << "n = " << n << ", degree " << d;
    }
  }
}

// K = 3 oracle: u = (u1, (1-u1) w, (1-u1)(1-w)) with u1 ~ Beta(1, 2) (density 2 (1 - u1)) and w ~ U(0, 1).
// For each w, f_1 is increasing in u1; u1(s, w) is found by bisection on the power formula and the
// Jacobian by a central difference, so none of the library's closed forms is reused.
struct K3Oracle {
  double t1, t2;
  double f1(double u1, double w) const {
    const double a = 1 / (t1 * t2);
    return std::pow(u1, a) / (std::pow(u1, a) + std::pow(1 - u1, a) * (std::pow(w, a) + std::pow(1 - w, a)));
  }
  double p1(double u1, double w) const {
    const double b = 1 / t1;
    return std::pow(u1, b) / (std::pow(u1, b) + std::pow(1 - u1, b) * (std::pow(w, b) + std::pow(1 - w, b)));
  }
  // density of f_1 at s, and E[p1_1 | f_1 = s] * density
  void at(double s, double& density, double& weighted) const {
    static const GaussLegendre rule = GaussLegendre::make(16);
    density = weighted = 0;
    // w in [0, 1/2], doubled: the integrand is symmetric in w <-> 1 - w
    for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
      const double w = 0.25 * (1 + rule.nodes[i]), ww = 0.5 * rule.weights[i];
      double lo = 0, hi = 1;
      for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
        const double mid = 0.5 * (lo + hi);
        (f1(mid, w) < s ? lo : hi) = mid;
      }
      const double u1 = 0.5 * (lo + hi), h = 1e-6 * std::min(u1, 1 - u1);
      const double slope = (f1(u1 + h, w) - f1(u1 - h, w)) / (2 * h);
      const double dens = 2 * (1 - u1) / slope;
      density += ww * dens;
      weighted += ww * dens * p1(u1, w);
    }
  }
  double gap(double x) const {
    const double s = 1 / (1 + std::exp(-x));
    double density, weighted;
    at(s, density, weighted);
    return weighted / density - s;
  }
  // 3 * integral of density(s) |m(s) - s|^p ds in x = logit s, with panel ends at the sign changes of
  // m(s) - s (where |.|^p has a kink).
  double marginal(double p) const {
    static const GaussLegendre rule = GaussLegendre::make(8);
    std::vector<double> ends;
    for (double a = -30; a <= 15; a += 1) ends.push_back(a);
    const std::size_t grid = ends.size();
    for (std::size_t i = 0; i + 1 < grid; ++i) {
      double lo = ends[i], hi = ends[i + 1];
      const double g_lo = gap(lo);
      if ((g_lo > 0) == (gap(hi) > 0)) continue;
      for (int it = 0; it < 50; ++it) {
        const double mid = 0.5 * (lo + hi);
        ((gap(mid) > 0) == (g_lo > 0) ? lo : hi) = mid;
      }
      ends.push_back(0.5 * (lo + hi));
    }
    std::sort(ends.begin(), ends.end());
    double total = 0;
    for (std::size_t j = 0; j + 1 < ends.size(); ++j) {
      const double a = ends[j], h = ends[j + 1] - a;
      for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
        const double x = a + 0.5 * h * (1 + rule.nodes[i]), s = 1 / (1 + std::exp(-x));
        double density, weighted;
        at(s, density, weighted);
        if (density > 0) total += 0.5 * h * rule.weights[i] * s * (1 - s) * density * std::pow(std::fabs(weighted / density - s), p);
      }
    }
    return 3 * total;
  }
};

TEST(ScoreIntegrals, ThreeClassMarginalMatchesTwoDimensionalQuadrature) {
  const SyntheticModel model{3, 0.6, 0.6};
  const ShapeSample shape = ShapeSample::draw(model, 1 << 13, 32, 7, 0);
  const K3Oracle oracle{model.t1, model.t2};
  for (double p : {2.0, 1.0}) {
    const auto got = ecekde::detail::score_integrals(model, p, shape, 0);
    const double want = oracle.marginal(p);
    EXPECT_NEAR(got.marginal.value, want, 4 * got.marginal.standard_error + 1e-6 * want) << "p = " << p;
    EXPECT_LT(got.marginal.standard_error, 3e-3 * want);
    EXPECT_NEAR(got.class_mass, 1, 1e-10);
  }
}

// Local linear regression of b on a within |a - s| < window: the intercept, its standard error and the
// density of a at s.
struct LocalFit {
  double mean, standard_error, density, density_error;
};

LocalFit local_fit(const std::vector<double>& a, const std::vector<double>& b, double s, double window,
                   double total) {
  double n = 0, sa = 0, sb = 0, saa = 0, sab = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] - s;
    if (std::fabs(d) >= window) continue;
    ++n, sa += d, sb += b[i], saa += d * d, sab += d * b[i];
  }
  const double slope = (n * sab - sa * sb) / (n * saa - sa * sa), intercept = (sb - slope * sa) / n;
  double rss = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] - s;
    if (std::fabs(d) < window) rss += std::pow(b[i] - intercept - slope * d, 2);
  }
  const double se = std::sqrt(rss / (n - 2) * saa / (n * saa - sa * sa));
  return {intercept, se, n / (total * 2 * window), std::sqrt(n) / (total * 2 * window)};
}

TEST(ConditionalCurves, MatchLocalRegressionOnSimulatedData) {
  for (std::size_t k : {3, 4}) {
    const SyntheticModel model{k, 0.6, 0.6};
    const auto data = ecekde::generate_synthetic(model, 300000, 100 + k);
    // pairs (f_c, p1_c) over every class (exchangeable), and (max f, max p1)
    std::vector<double> score, truth, top_score, top_truth;
    for (std::size_t r = 0; r < data.n; ++r) {
      std::size_t top = 0;
      for (std::size_t c = 0; c < k; ++c) {
        score.push_back(data.probs[r * k + c]);
        truth.push_back(data.calibrated[r * k + c]);
        if (data.probs[r * k + c] > data.probs[r * k + top]) top = c;
      }
      top_score.push_back(data.probs[r * k + top]);
      top_truth.push_back(data.calibrated[r * k + top]);
    }
    const ShapeSample shape = ShapeSample::draw(model, 1 << 16, 16, 3, 0);
    const std::vector<double> at{0.05, 0.2, 0.45, 0.6, 0.8};
    const auto curves = ecekde::detail::conditional_curves(model, shape, at, 0);
    for (std::size_t i = 0; i < at.size(); ++i) {
      const LocalFit c = local_fit(score, truth, at[i], 0.01, static_cast<double>(score.size()));
      EXPECT_NEAR(curves.class_mean[i], c.mean, 4 * c.standard_error + 1e-3) << "K = " << k << ", s = " << at[i];
      EXPECT_NEAR(curves.class_density[i], c.density, 4 * c.density_error + 0.01 * c.density)
          << "K = " << k << ", s = " << at[i];
      if (at[i] < 1.0 / static_cast<double>(k)) {
        EXPECT_EQ(curves.top_density[i], 0);
        continue;
      }
      const LocalFit t = local_fit(top_score, top_truth, at[i], 0.01, static_cast<double>(top_score.size()));
      EXPECT_NEAR(curves.top_mean[i], t.mean, 4 * t.standard_error + 1e-3) << "K = " << k << ", s = " << at[i];
      EXPECT_NEAR(curves.top_density[i], t.density, 4 * t.density_error + 0.01 * t.density)
          << "K = " << k << ", s = " << at[i];
    }
  }
}

}  // namespace
