// The analytic gradient against central finite differences (fourth order) of the value, on free
// probabilities, for every type, several p, h, K, thread counts and block sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "core/gradient.hpp"
#include "ecekde/gradient.hpp"
#include "generate.hpp"
#include "variants.hpp"

namespace {

using ecekde::CalibrationType;
using namespace ecekde::detail;

CheckedPredictions to_predictions(const oracle::Data& d) {
  CheckedPredictions p;
  p.n = d.n;
  p.k = d.k;
  p.f = d.f;
  p.y.assign(d.y.begin(), d.y.end());
  return p;
}

SweepPlan plan(int threads, std::size_t block) {
  ecekde::ExecutionOptions e;
  e.threads = threads;
  e.block_size = block;
  return SweepPlan::from(e);
}

double value(const CheckedPredictions& pred, CalibrationType type, double h, double p) {
  return value_and_gradient(pred, make_problems(pred, type), type, h, p, plan(1, 512)).ce_pow_p;
}

// Largest |analytic - numeric| over all entries, relative to the largest |numeric|.
double gradient_error(const oracle::Data& d, CalibrationType type, double h, double p, int threads,
                      std::size_t block) {
  CheckedPredictions pred = to_predictions(d);
  const auto vg = value_and_gradient(pred, make_problems(pred, type), type, h, p, plan(threads, block));
  const double step = 2e-5;  // fourth-order stencil: truncation ~ step^4, rounding ~ 1e-16 / step
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < pred.f.size(); ++i) {
    const double x0 = pred.f[i];
    auto at = [&](double dx) {
      pred.f[i] = x0 + dx;
      const double v = value(pred, type, h, p);
      pred.f[i] = x0;
      return v;
    };
    const double numeric = (8 * (at(step) - at(-step)) - (at(2 * step) - at(-2 * step))) / (12 * step);
    worst = std::max(worst, std::fabs(vg.grad[i] - numeric));
    scale = std::max(scale, std::fabs(numeric));
  }
  return worst / scale;
}

struct Case {
  CalibrationType type;
  std::size_t n, k;
};

TEST(Gradient, MatchesFiniteDifferences) {
  const Case cases[] = {{CalibrationType::canonical, 12, 3},  {CalibrationType::canonical, 20, 5},
                        {CalibrationType::marginal, 15, 3},   {CalibrationType::marginal, 10, 4},
                        {CalibrationType::top_label, 14, 3},  {CalibrationType::top_label, 18, 6},
                        {CalibrationType::binary, 16, 2}};
  std::uint64_t seed = 7;
  for (const auto& c : cases)
    for (double h : {0.05, 0.2, 1.0})
      for (double p : {1.5, 2.0, 3.0}) {
        const auto d = testdata::softmax_predictions(c.n, c.k, seed++, 1.0, 1.3);
        if (testdata::kSanitized && p == 3.0) continue;  // the same memory as p = 1.5, other arithmetic
        for (auto [threads, block] : {std::pair{1, std::size_t{512}}, {2, 3}, {3, 5}}) {
          const double err = gradient_error(d, c.type, h, p, threads, block);
          EXPECT_LT(err, 1e-6) << to_string(c.type) << " n=" << c.n << " k=" << c.k << " h=" << h << " p=" << p
                               << " threads=" << threads << " block=" << block;
        }
      }
}

TEST(Gradient, OneColumnBinaryMatchesFiniteDifferences) {
  const auto d = testdata::binary_predictions(15, 3, 1.5);
  for (double h : {0.05, 0.5})
    for (double p : {1.5, 2.0}) EXPECT_LT(gradient_error(d, CalibrationType::binary, h, p, 2, 4), 1e-6);
}

// p = 1 away from kinks: random data almost surely has no |r - f| = 0.
TEST(Gradient, OrderOneAwayFromKinks) {
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label}) {
    const auto d = testdata::softmax_predictions(12, 3, 99, 1.0, 1.3);
    EXPECT_LT(gradient_error(d, type, 0.1, 1.0, 2, 5), 1e-6) << to_string(type);
  }
}

}  // namespace

namespace {

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

ecekde::GradientResult with_gradient(const oracle::Data& d, CalibrationType type, double h, double p) {
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = type;
  o.bandwidth = h;
  o.p = p;
  return ecekde::estimate_with_gradient(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o);
}

// The authors' code returns NaN gradients when a class is missing from a batch; here every entry is
// finite, for batches with a missing class, a class seen once, saturated rows and tiny bandwidths.
TEST(Gradient, FiniteOnHardBatches) {
  auto d = testdata::softmax_predictions(32, 5, 3, 4.0, 1.0);
  for (auto& y : d.y) y = y == 4 ? 0 : y;  // class 4 absent
  d.y[7] = 3;
  for (std::size_t r = 0; r < d.n; ++r)
    if (d.y[r] == 3 && r != 7) d.y[r] = 1;  // class 3 appears once
  for (std::size_t c = 0; c < d.k; ++c) d.f[2 * d.k + c] = c == 1 ? 1.0 : 0.0;  // one-hot rows
  for (std::size_t c = 0; c < d.k; ++c) d.f[5 * d.k + c] = c == 0 ? 1.0 : 0.0;
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
    for (double h : {1e-6, 1e-3, 0.5, 10.0})
      for (double p : {1.0, 2.0}) {
        const auto g = with_gradient(d, type, h, p);
        EXPECT_TRUE(std::isfinite(g.result.ce_pow_p));
        EXPECT_TRUE(all_finite(g.grad_ce_pow_p)) << to_string(type) << " h=" << h << " p=" << p;
        EXPECT_TRUE(all_finite(g.grad_ce)) << to_string(type) << " h=" << h << " p=" << p;
      }
}

TEST(Gradient, SingleExampleOfEachClassAndTwoSamples) {
  oracle::Data d;
  d.n = 2;
  d.k = 2;
  d.f = {0.7, 0.3, 0.2, 0.8};
  d.y = {0, 1};
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label,
                    CalibrationType::binary}) {
    const auto g = with_gradient(d, type, 0.1, 2.0);
    EXPECT_TRUE(all_finite(g.grad_ce_pow_p)) << to_string(type);
  }
}

// The gradient's value equals estimate()'s, and grad_ce is the chain rule of CE_p = (CE_p^p)^(1/p).
TEST(Gradient, ValueAndChainRuleAgreeWithEstimate) {
  const auto d = testdata::softmax_predictions(50, 4, 5, 2.0, 1.5);
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
    for (double p : {1.0, 2.0, 3.0}) {
      const auto g = with_gradient(d, type, 0.05, p);
      ecekde::EstimateOptions o;
      o.estimator = ecekde::Estimator::paper;
      o.type = type;
      o.bandwidth = 0.05;
      o.p = p;
      const auto r = ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o);
      EXPECT_NEAR(g.result.ce_pow_p, r.ce_pow_p, 1e-14 * r.ce_pow_p);
      const double factor = std::pow(r.ce_pow_p, 1 / p - 1) / p;
      for (std::size_t i = 0; i < g.grad_ce.size(); ++i)
        EXPECT_NEAR(g.grad_ce[i], factor * g.grad_ce_pow_p[i], 1e-14 * std::fabs(factor * g.grad_ce_pow_p[i]) + 1e-300);
    }
}

// Thread count never changes the gradient (rows are independent, centres accumulate in fixed rounds).
TEST(Gradient, BitwiseIdenticalAcrossThreadCounts) {
  const auto d = testdata::softmax_predictions(700, 6, 11, 2.0, 1.5);
  for (std::size_t block : {64, 200}) {
    std::vector<double> first;
    for (int t : {1, 2, 3, 4}) {
      ecekde::EstimateOptions o;
      o.estimator = ecekde::Estimator::paper;
      o.bandwidth = 0.02;
      o.execution.threads = t;
      o.execution.block_size = block;
      const auto g = ecekde::estimate_with_gradient(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                                    ecekde::LabelsView(d.y), o);
      if (first.empty()) first = g.grad_ce_pow_p;
      EXPECT_EQ(g.grad_ce_pow_p, first) << "threads=" << t << " block=" << block;
    }
  }
}

}  // namespace
