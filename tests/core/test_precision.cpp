// The float path (ExecutionOptions::precision = single) against the double path, which the oracle tests
// check: over families of predictions (softmax of normal logits from nearly uniform to nearly one-hot,
// over- and underconfident; Dirichlet from spread to tightly clustered), classes, bandwidths, orders,
// thread counts, block sizes and kernel variants, the estimate agrees within 1e-5 relative plus 1e-6
// absolute (a small estimate, resting on few neighbours at small h, carries float's rounding of a few
// scores). The entry points that stay in double (bandwidth selection, gradient) give bitwise the double
// results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/kernel_regression.hpp"
#include "generate.hpp"
#include "variants.hpp"

namespace {

using ecekde::CalibrationType;
using ecekde::Precision;

constexpr double kRelative = 1e-5, kAbsolute = 1e-6;

double tolerance(double want) { return kRelative * std::abs(want) + kAbsolute; }

ecekde::EstimateOptions options(CalibrationType type, double h, double p, Precision precision) {
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = type;
  o.p = p;
  o.bandwidth = h;
  o.execution.precision = precision;
  return o;
}

double ce(const oracle::Data& d, const ecekde::EstimateOptions& o) {
  return ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o).ce;
}

std::vector<oracle::Data> families(std::size_t n, std::size_t k, std::uint64_t& seed) {
  std::vector<oracle::Data> out;
  for (double spread : {0.3, 2.0, 6.0})
    for (double temperature : {0.7, 1.0, 1.5}) out.push_back(testdata::softmax_predictions(n, k, seed++, spread, temperature));
  for (double concentration : {0.1, 1.0, 30.0, 300.0})
    for (bool calibrated : {true, false}) out.push_back(testdata::dirichlet_predictions(n, k, seed++, concentration, calibrated));
  return out;
}

TEST(Precision, FloatAgreesWithDoubleOverFamiliesBandwidthsAndOrders) {
  std::uint64_t seed = 40;
  double worst = 0, worst_absolute = 0, worst_share = 0;
  for (std::size_t k : {3, 10, 30})
    for (const auto& d : families(k == 30 ? 400 : 800, k, seed))
      for (double h : {0.002, 0.01, 0.05, 0.3})
        for (double p : {1.0, 2.0}) {
          if (testdata::kSanitized && p == 2.0) continue;  // the same memory as p = 1, other arithmetic
          const double want = ce(d, options(CalibrationType::canonical, h, p, Precision::double_));
          const double got = ce(d, options(CalibrationType::canonical, h, p, Precision::single));
          worst = std::max(worst, std::abs(got - want) / std::abs(want));
          worst_absolute = std::max(worst_absolute, std::abs(got - want));
          worst_share = std::max(worst_share, std::abs(got - want) / tolerance(want));
          EXPECT_LE(std::abs(got - want), tolerance(want))
              << "k " << k << " h " << h << " p " << p << " double " << want << " float " << got;
        }
  std::printf("largest difference, float against double: %.2e relative, %.2e absolute, %.0f%% of the tolerance\n",
              worst, worst_absolute, 100 * worst_share);
}

// The float path in every kernel variant, thread count and block size (tiles, remainders, the running
// maximum across centre blocks); marginal through the full sweep (the score tree does not use it).
TEST(Precision, FloatAgreesInEveryVariantThreadCountAndBlockSize) {
  std::uint64_t seed = 90;
  const auto d = testdata::softmax_predictions(333, 5, seed, 2.0, 1.3);
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal}) {
    auto o = options(type, 0.02, 1.0, Precision::double_);
    o.execution.full_sweep = true;
    const double want = ce(d, o);
    o.execution.precision = Precision::single;
    for (const auto& isa : testdata::kernel_variants())
      for (std::size_t block : {1, 7, 64, 512}) {
        double first = NAN;
        for (int threads : {1, 2, 3}) {
          o.execution.isa = isa;
          o.execution.block_size = block;
          o.execution.threads = threads;
          const double got = ce(d, o);
          EXPECT_LE(std::abs(got - want), tolerance(want)) << isa << " block " << block << " threads " << threads;
          if (threads == 1) first = got;
          EXPECT_EQ(got, first) << "rows are independent: the thread count does not change the result";
        }
      }
  }
}

// The crossfit estimator's corrections at a given bandwidth run in float too. (Where its threshold
// keeps every row with the pilot the figure does not depend on them, and float gives it bitwise.)
TEST(Precision, CrossfitAgreesWithDouble) {
  std::uint64_t seed = 120;
  for (std::size_t k : {3, 10, 70}) {  // 70: the residuals summed as one product per tile (kWidePayload)
    const auto d = testdata::softmax_predictions(1500, k, seed++, 2.0, 1.4);
    ecekde::EstimateOptions o;
    o.bandwidth = 0.05;
    const double want = ce(d, o);
    o.execution.precision = Precision::single;
    EXPECT_LE(std::abs(ce(d, o) - want), tolerance(want)) << "k " << k;
  }
}

// The kernel regression read at points other than the samples (no pair left out), row by row: each
// estimate of E[y | f = x] in float within 1e-5 of double's, over bandwidths.
TEST(Precision, KernelRegressionAgreesRowByRow) {
  std::uint64_t seed = 130;
  const auto d = testdata::softmax_predictions(800, 6, seed++, 2.0, 1.4);
  const auto q = testdata::softmax_predictions(200, 6, seed++, 2.5, 1.0);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  const auto queries = ecekde::ProbsView::row_major(q.f.data(), q.n, q.k);
  for (double h : {0.005, 0.05, 0.5}) {
    auto o = options(CalibrationType::canonical, h, 1.0, Precision::double_);
    const auto want = ecekde::kernel_regression(probs, ecekde::LabelsView(d.y), queries, o);
    o.execution.precision = Precision::single;
    const auto got = ecekde::kernel_regression(probs, ecekde::LabelsView(d.y), queries, o);
    ASSERT_EQ(got.expectation.size(), want.expectation.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.expectation.size(); ++i)
      worst = std::max(worst, std::abs(got.expectation[i] - want.expectation[i]));
    EXPECT_LE(worst, kRelative) << "h " << h;
    EXPECT_GT(worst, 0.0) << "h " << h << ": the float path did not run";
  }
}

// Bandwidth selection and the gradient stay in double: the same bandwidth and bitwise the same gradient.
TEST(Precision, SelectionAndGradientStayDouble) {
  std::uint64_t seed = 150;
  const auto d = testdata::softmax_predictions(400, 4, seed, 2.0, 1.4);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  auto o = options(CalibrationType::canonical, 0, 1.0, Precision::double_);
  o.bandwidth.reset();
  const auto want = ecekde::estimate(probs, ecekde::LabelsView(d.y), o);
  o.execution.precision = Precision::single;
  const auto got = ecekde::estimate(probs, ecekde::LabelsView(d.y), o);
  EXPECT_EQ(got.bandwidth, want.bandwidth);
  EXPECT_LE(std::abs(got.ce - want.ce), tolerance(want.ce));

  o = options(CalibrationType::canonical, 0.05, 2.0, Precision::double_);
  const auto g_double = ecekde::estimate_with_gradient(probs, ecekde::LabelsView(d.y), o);
  o.execution.precision = Precision::single;
  const auto g_float = ecekde::estimate_with_gradient(probs, ecekde::LabelsView(d.y), o);
  EXPECT_EQ(g_float.result.ce, g_double.result.ce);
  EXPECT_EQ(g_float.grad_ce, g_double.grad_ce);
}

// Below the tested bandwidths an estimate in float says so; above them, or where the score tree computes
// in double anyway (one-dimensional types), it does not.
TEST(Precision, WarnsBelowTheTestedBandwidths) {
  std::uint64_t seed = 170;
  const auto d = testdata::softmax_predictions(300, 4, seed, 2.0, 1.0);
  const auto warned = [&](CalibrationType type, double h, ecekde::Estimator estimator) {
    auto o = options(type, h, 1.0, Precision::single);
    o.estimator = estimator;
    const auto r = ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o);
    for (const auto& w : r.warnings)
      if (w.find("precision float") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(warned(CalibrationType::canonical, 0.001, ecekde::Estimator::paper));
  EXPECT_TRUE(warned(CalibrationType::canonical, 0.001, ecekde::Estimator::crossfit));
  EXPECT_FALSE(warned(CalibrationType::canonical, 0.002, ecekde::Estimator::paper));
  EXPECT_FALSE(warned(CalibrationType::marginal, 0.001, ecekde::Estimator::paper));
}

}  // namespace
