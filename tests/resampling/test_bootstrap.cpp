// The one-sweep bootstrap against resampling done the plain way, and the interval bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ecekde/bootstrap.hpp"
#include "expect_error.hpp"
#include "generate.hpp"
#include "oracle.hpp"

namespace {

using ecekde::BootstrapCopies;
using ecekde::CalibrationType;

ecekde::EstimateOptions fixed(CalibrationType type, double h, double p) {
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = type;
  o.bandwidth = h;
  o.p = p;
  return o;
}

ecekde::ProbsView view(const oracle::Data& d) { return ecekde::ProbsView::row_major(d.f.data(), d.n, d.k); }

// "resample, then estimate": build the resampled data set and call estimate() on it.
double resample_then_estimate(const oracle::Data& d, const std::vector<std::size_t>& idx,
                              const ecekde::EstimateOptions& o) {
  oracle::Data r;
  r.n = idx.size();
  r.k = d.k;
  for (std::size_t i : idx) {
    r.f.insert(r.f.end(), d.f.begin() + static_cast<std::ptrdiff_t>(i * d.k),
               d.f.begin() + static_cast<std::ptrdiff_t>((i + 1) * d.k));
    r.y.push_back(d.y[i]);
  }
  return ecekde::estimate(view(r), ecekde::LabelsView(r.y), o).ce_pow_p;
}

TEST(Bootstrap, PlainEqualsResampleThenEstimate) {
  struct Case {
    CalibrationType type;
    std::size_t n, k;
    double h, p;
  };
  const Case cases[] = {{CalibrationType::canonical, 40, 3, 0.05, 1.0},  {CalibrationType::canonical, 60, 5, 1e-4, 2.0},
                        {CalibrationType::marginal, 45, 4, 0.02, 1.0},   {CalibrationType::top_label, 50, 3, 1e-3, 1.5},
                        {CalibrationType::binary, 40, 1, 0.1, 2.0},      {CalibrationType::canonical, 2, 2, 0.1, 1.0}};
  for (const auto& c : cases) {
    const auto d = c.k == 1 ? testdata::binary_predictions(c.n, 5, 1.5) : testdata::softmax_predictions(c.n, c.k, 5, 2.0, 1.5);
    ecekde::BootstrapOptions b;
    b.replicates = 12;
    b.seed = 42;
    b.copies = BootstrapCopies::plain;
    for (auto [threads, block] : {std::pair{1, std::size_t{512}}, {2, 7}}) {
      auto o = fixed(c.type, c.h, c.p);
      o.execution.threads = threads;
      o.execution.block_size = block;
      const auto boot = ecekde::bootstrap_kde(view(d), ecekde::LabelsView(d.y), o, b);
      ASSERT_EQ(boot.ce_pow_p.replicates.size(), b.replicates);
      for (std::size_t r = 0; r < b.replicates; ++r) {
        const double want = resample_then_estimate(d, ecekde::bootstrap_indices(d.n, b.seed, r), o);
        EXPECT_NEAR(boot.ce_pow_p.replicates[r], want, 1e-11 * want + 1e-15)
            << to_string(c.type) << " n=" << c.n << " h=" << c.h << " replicate " << r;
      }
    }
  }
}

// Leave-copies-out: each distinct sample i weighs its multiplicity c_i; a row skips all copies of itself.
double weighted_oracle(const oracle::Data& d, const std::vector<double>& c, double h, double p) {
  double total = 0;
  for (std::size_t j = 0; j < d.n; ++j) {
    if (c[j] == 0) continue;
    std::vector<double> logk(d.n);
    double m = -INFINITY;
    for (std::size_t i = 0; i < d.n; ++i)
      if (i != j && c[i] > 0) {
        logk[i] = oracle::log_dirichlet(&d.f[j * d.k], &d.f[i * d.k], d.k, h);
        m = std::max(m, logk[i]);
      }
    std::vector<double> num(d.k, 0.0);
    double den = 0;
    for (std::size_t i = 0; i < d.n; ++i)
      if (i != j && c[i] > 0) {
        const double w = c[i] * std::exp(logk[i] - m);
        num[static_cast<std::size_t>(d.y[i])] += w;
        den += w;
      }
    double t = 0;
    for (std::size_t k = 0; k < d.k; ++k) t += std::pow(std::fabs(num[k] / den - d.at(j, k)), p);
    total += c[j] * t;
  }
  return total / static_cast<double>(d.n);
}

TEST(Bootstrap, LeaveCopiesOutEqualsWeightedOracle) {
  for (double h : {0.05, 1e-5}) {
    const auto d = testdata::softmax_predictions(50, 4, 9, 2.0, 1.5);
    ecekde::BootstrapOptions b;
    b.replicates = 10;
    b.seed = 3;
    const auto boot = ecekde::bootstrap_kde(view(d), ecekde::LabelsView(d.y), fixed(CalibrationType::canonical, h, 1.0), b);
    for (std::size_t r = 0; r < b.replicates; ++r) {
      std::vector<double> c(d.n, 0.0);
      for (std::size_t i : ecekde::bootstrap_indices(d.n, b.seed, r)) c[i] += 1;
      const double want = weighted_oracle(d, c, h, 1.0);
      EXPECT_NEAR(boot.ce_pow_p.replicates[r], want, 1e-10 * want) << "h=" << h << " replicate " << r;
    }
  }
}

TEST(Bootstrap, IntervalBookkeeping) {
  const auto d = testdata::softmax_predictions(80, 3, 21, 2.0, 1.5);
  const auto o = fixed(CalibrationType::canonical, 0.05, 2.0);
  ecekde::BootstrapOptions b;
  b.replicates = 40;
  b.seed = 8;
  const auto boot = ecekde::bootstrap_kde(view(d), ecekde::LabelsView(d.y), o, b);
  const auto plain = ecekde::estimate(view(d), ecekde::LabelsView(d.y), o);
  EXPECT_EQ(boot.result.ce_pow_p, plain.ce_pow_p);
  EXPECT_EQ(boot.ce_pow_p.estimate, plain.ce_pow_p);
  EXPECT_EQ(boot.ce.estimate, plain.ce);
  EXPECT_LE(boot.ce_pow_p.lower, boot.ce_pow_p.upper);
  std::vector<double> sorted = boot.ce_pow_p.replicates;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(boot.ce_pow_p.lower, ecekde::quantile_sorted(sorted, (1 - 0.95) / 2));
  EXPECT_EQ(boot.ce_pow_p.upper, ecekde::quantile_sorted(sorted, (1 + 0.95) / 2));
  EXPECT_DOUBLE_EQ(boot.ce.lower, std::sqrt(boot.ce_pow_p.lower));  // the CE_p^p interval mapped by x^(1/p)
  EXPECT_DOUBLE_EQ(boot.ce.upper, std::sqrt(boot.ce_pow_p.upper));
  // reproducible for a seed, different for another
  EXPECT_EQ(ecekde::bootstrap_kde(view(d), ecekde::LabelsView(d.y), o, b).ce_pow_p.replicates, boot.ce_pow_p.replicates);
  b.seed = 9;
  EXPECT_NE(ecekde::bootstrap_kde(view(d), ecekde::LabelsView(d.y), o, b).ce_pow_p.replicates, boot.ce_pow_p.replicates);
}

// The estimate a bootstrap reports is estimate()'s to the bit: for canonical in double it comes out of the
// replicates' sweep (their weights, the data's own class sums), elsewhere from estimate()'s own sweep.
TEST(Bootstrap, EstimateIsEstimatesBitwise) {
  ecekde::BootstrapOptions b;
  b.replicates = 5;
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal})
    for (auto precision : {ecekde::Precision::double_, ecekde::Precision::single})
      for (auto [threads, block] : {std::pair{1, std::size_t{512}}, {2, 7}, {1, 13}, {2, 64}})
        for (double h : {0.05, 1e-3}) {
          const auto d = testdata::softmax_predictions(150, 4, 3, 2.0, 1.5);
          auto o = fixed(type, h, 1.0);
          o.execution.threads = threads;
          o.execution.block_size = block;
          o.execution.precision = precision;
          const auto boot = ecekde::bootstrap_kde(view(d), ecekde::LabelsView(d.y), o, b);
          const auto plain = ecekde::estimate(view(d), ecekde::LabelsView(d.y), o);
          EXPECT_EQ(boot.result.ce_pow_p, plain.ce_pow_p)
              << to_string(type) << " threads=" << threads << " block=" << block << " h=" << h;
          EXPECT_EQ(boot.result.class_ce_pow_p, plain.class_ce_pow_p);
        }
}

TEST(Bootstrap, QuantileType7) {
  const std::vector<double> v{1, 2, 4, 8};
  EXPECT_EQ(ecekde::quantile_sorted(v, 0.0), 1.0);
  EXPECT_EQ(ecekde::quantile_sorted(v, 1.0), 8.0);
  EXPECT_DOUBLE_EQ(ecekde::quantile_sorted(v, 0.5), 3.0);     // position 1.5: between 2 and 4
  EXPECT_DOUBLE_EQ(ecekde::quantile_sorted(v, 0.25), 1.75);   // position 0.75
}

TEST(Bootstrap, GenericStatisticAndErrors) {
  std::vector<double> x{3, 1, 4, 1, 5, 9, 2, 6};
  auto mean = [&](std::span<const std::size_t> idx) {
    double s = 0;
    for (auto i : idx) s += x[i];
    return s / static_cast<double>(idx.size());
  };
  ecekde::BootstrapOptions b;
  b.replicates = 50;
  const auto iv = ecekde::bootstrap(x.size(), mean, b, {.threads = 2});
  EXPECT_DOUBLE_EQ(iv.estimate, 3.875);
  for (std::size_t r = 0; r < b.replicates; ++r) EXPECT_EQ(iv.replicates[r], mean(ecekde::bootstrap_indices(x.size(), 0, r)));
  b.replicates = 1;
  EXPECT_THROW_MSG(ecekde::bootstrap(x.size(), mean, b), "bootstrap replicates must be at least 2, got 1");
  b.replicates = 10;
  b.level = 1.5;
  EXPECT_THROW_MSG(ecekde::bootstrap(x.size(), mean, b), "bootstrap level must be in (0, 1), got 1.5");
}

}  // namespace
