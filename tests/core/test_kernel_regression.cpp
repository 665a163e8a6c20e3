// kernel_regression() against direct sums, and its density integrating to one.
#include <gtest/gtest.h>

#include <cmath>

#include "expect_error.hpp"
#include "ecekde/kernel_regression.hpp"
#include "generate.hpp"
#include "oracle.hpp"

namespace {

using ecekde::CalibrationType;

ecekde::EstimateOptions fixed(CalibrationType type, double h) {
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = type;
  o.bandwidth = h;
  o.execution.block_size = 7;
  o.execution.threads = 2;
  return o;
}

TEST(KernelRegression, CanonicalMatchesDirectSums) {
  const auto d = testdata::softmax_predictions(60, 3, 4, 2.0, 1.5);
  const auto queries = testdata::softmax_predictions(25, 3, 5, 1.0, 1.0);
  const double h = 0.05;
  const auto r = ecekde::kernel_regression(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y),
                                           ecekde::ProbsView::row_major(queries.f.data(), queries.n, 3),
                                           fixed(CalibrationType::canonical, h));
  ASSERT_EQ(r.queries, 25u);
  ASSERT_EQ(r.columns, 3u);
  for (std::size_t q = 0; q < queries.n; ++q) {
    double den = 0, num[3] = {0, 0, 0};
    for (std::size_t i = 0; i < d.n; ++i) {
      const double w = std::exp(oracle::log_dirichlet(&queries.f[q * 3], &d.f[i * 3], 3, h));
      den += w;
      num[d.y[i]] += w;
    }
    for (std::size_t c = 0; c < 3; ++c) {
      EXPECT_NEAR(r.expectation[q * 3 + c], num[c] / den, 1e-12);
      EXPECT_NEAR(r.log_density[q * 3 + c], std::log(den / d.n), 1e-11);
    }
  }
}

TEST(KernelRegression, TopLabelCurveMatchesDirectSumsAndDensityIntegratesToOne) {
  const auto d = testdata::softmax_predictions(80, 4, 6, 2.0, 1.5);
  std::vector<double> grid(2001);
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<double>(i) / 2000.0;
  const double h = 0.02;
  const auto r = ecekde::kernel_regression(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y),
                                           ecekde::ProbsView::column(std::span<const double>(grid)),
                                           fixed(CalibrationType::top_label, h));
  ASSERT_EQ(r.columns, 1u);
  double integral = 0;
  for (std::size_t q = 0; q < grid.size(); ++q) {
    std::vector<double> logk(d.n);
    std::vector<int> positive(d.n);
    double m = -INFINITY;
    for (std::size_t i = 0; i < d.n; ++i) {
      std::size_t top = 0;
      for (std::size_t c = 1; c < d.k; ++c)
        if (d.at(i, c) > d.at(i, top)) top = c;
      logk[i] = oracle::log_beta(grid[q], d.at(i, top), h);
      positive[i] = d.y[i] == static_cast<std::int64_t>(top);
      m = std::max(m, logk[i]);
    }
    double den = 0, num = 0;  // shifted by the largest log-kernel, as far from the data they underflow
    for (std::size_t i = 0; i < d.n; ++i) {
      den += std::exp(logk[i] - m);
      num += positive[i] * std::exp(logk[i] - m);
    }
    EXPECT_NEAR(r.expectation[q], num / den, 1e-9) << grid[q];
    EXPECT_NEAR(r.log_density[q], m + std::log(den / d.n), 1e-9 * std::max(1.0, std::fabs(m))) << grid[q];
    integral += (q == 0 || q + 1 == grid.size() ? 0.5 : 1.0) * std::exp(r.log_density[q]) / 2000.0;
  }
  EXPECT_NEAR(integral, 1.0, 1e-3);  // a mixture of Beta densities on [0, 1]
}

TEST(KernelRegression, Errors) {
  const auto d = testdata::softmax_predictions(10, 3, 4, 2.0, 1.5);
  const std::vector<double> bad = {0.5, 0.6};
  auto regress = [&](const std::vector<double>& q, CalibrationType type, std::size_t cols) {
    return ecekde::kernel_regression(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y),
                                     ecekde::ProbsView::row_major(q.data(), q.size() / cols, cols), fixed(type, 0.1));
  };
  EXPECT_THROW_MSG(regress(bad, CalibrationType::canonical, 1), "queries for type canonical need 3 columns, got 1");
  EXPECT_THROW_MSG(regress(bad, CalibrationType::marginal, 2), "queries for type marginal need 1 column, got 2");
  EXPECT_THROW_MSG(regress({0.5, 1.5}, CalibrationType::top_label, 1),
                   "queries row 1, column 0: value 1.5 is not a probability");
}

}  // namespace
