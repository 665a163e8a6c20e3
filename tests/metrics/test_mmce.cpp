// MMCE against a hand-computed case, the double-loop oracle, and central finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/error.hpp"
#include "ecekde/mmce.hpp"
#include "expect_error.hpp"
#include "generate.hpp"
#include "metrics_oracle.hpp"

namespace {

ecekde::MmceResult run(const oracle::Data& d, bool weighted, double width = 0.4) {
  ecekde::MmceOptions o;
  o.weighted = weighted;
  o.kernel_width = width;
  return ecekde::mmce(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o);
}

std::size_t argmax(const oracle::Data& d, std::size_t i) {
  std::size_t t = 0;
  for (std::size_t c = 1; c < d.k; ++c)
    if (d.at(i, c) > d.at(i, t)) t = c;
  return t;
}

// Two samples: r = 0.7 (right), r = 0.6 (wrong); k = exp(-0.1 / 0.4) = exp(-0.25).
// Unweighted: u = (c - r) / 2 = (0.15, -0.3); MMCE^2 = u1^2 + u2^2 + 2 u1 u2 k = 0.1125 - 0.09 k.
// Differentiating S(r1, r2) = ((1 - r1)/2)^2 + (r2/2)^2 - (1 - r1) r2 exp(-(r1 - r2)/0.4) / 2 by hand:
//   dS/dr1 = -(1 - r1)/2 + r2 k/2 + (1 - r1) r2 k / 0.8 = -0.15 + 0.525 k
//   dS/dr2 =  r2/2 - (1 - r1) k/2 - (1 - r1) r2 k / 0.8  =  0.3 - 0.375 k
// Weighted (one right, one wrong): (1 - r1)^2 + r2^2 - 2 (1 - r1) r2 k = 0.45 - 0.36 k.
TEST(Mmce, HandComputedPair) {
  const auto d = oracle::Data::of(2, {0.7, 0.3, 0.4, 0.6}, {0, 0});
  const double k = std::exp(-0.25);
  const auto r = run(d, false);
  EXPECT_NEAR(r.mmce_squared, 0.1125 - 0.09 * k, 1e-16);
  EXPECT_NEAR(r.mmce, std::sqrt(0.1125 - 0.09 * k), 1e-16);
  EXPECT_EQ(r.correct, 1u);
  ASSERT_EQ(r.gradient_squared.size(), 4u);
  EXPECT_NEAR(r.gradient_squared[0], -0.15 + 0.525 * k, 1e-16);
  EXPECT_EQ(r.gradient_squared[1], 0.0);  // not the argmax
  EXPECT_EQ(r.gradient_squared[2], 0.0);
  EXPECT_NEAR(r.gradient_squared[3], 0.3 - 0.375 * k, 1e-16);
  EXPECT_NEAR(r.gradient[3], (0.3 - 0.375 * k) / (2 * r.mmce), 1e-16);
  EXPECT_NEAR(run(d, true).mmce_squared, 0.45 - 0.36 * k, 1e-16);
}

void expect_matches_oracle(const oracle::Data& d, bool weighted, double width) {
  const auto want = metrics_oracle::mmce(d, weighted, width);
  const auto got = run(d, weighted, width);
  double scale = 0;
  for (double g : want.d_squared) scale = std::max(scale, std::fabs(g));
  // The oracle's plain sum of n^2 terms, of size up to about 0.1 / n^2 each, carries rounding of order
  // n eps relative to the terms' scale (MMCE^2 itself can be 20x smaller than that scale).
  EXPECT_NEAR(got.mmce_squared, want.squared, 1e-14 * double(std::max<std::size_t>(d.n, 10)) * std::max(want.squared, 1e-4))
      << "n=" << d.n << " weighted=" << weighted << " width=" << width;
  for (std::size_t i = 0; i < d.n; ++i)
    for (std::size_t c = 0; c < d.k; ++c) {
      const double expected = c == argmax(d, i) ? want.d_squared[i] : 0.0;
      ASSERT_NEAR(got.gradient_squared[i * d.k + c], expected, 1e-12 * scale)
          << "row " << i << " column " << c << " n=" << d.n << " weighted=" << weighted << " width=" << width;
    }
}

TEST(Mmce, AgreesWithOracle) {
  std::uint64_t seed = 3;
  for (std::size_t n : {2u, 5u, 50u, 300u})
    for (std::size_t k : {2u, 10u}) {
      const auto d = testdata::softmax_predictions(n, k, seed++, 2.0, 1.5);
      for (bool weighted : {false, true})
        for (double width : {0.4, 0.05, 2.0}) expect_matches_oracle(d, weighted, width);
    }
}

TEST(Mmce, TiedConfidencesUseTheSymmetricSubgradient) {
  // Confidences from {0.4, 0.5, 0.6, 0.7} only: many exact ties, where sign(r_i - r_j) = 0.
  ecekde::Rng rng(9);
  oracle::Data d;
  d.n = 80;
  d.k = 3;
  for (std::size_t i = 0; i < d.n; ++i) {
    const double q = 0.4 + 0.1 * double(rng.below(4));
    d.f.insert(d.f.end(), {q, (1 - q) / 2, (1 - q) / 2});
    d.y.push_back(static_cast<std::int64_t>(rng.below(3)));
  }
  for (bool weighted : {false, true}) expect_matches_oracle(d, weighted, 0.4);
  // Tied samples with the same correctness get the same gradient.
  const auto r = run(d, false);
  for (std::size_t i = 1; i < d.n; ++i)
    if (d.f[i * 3] == d.f[0] && (d.y[i] == 0) == (d.y[0] == 0)) {
      EXPECT_EQ(r.gradient_squared[i * 3], r.gradient_squared[0]);
    }
}

TEST(Mmce, GradientMatchesFiniteDifferences) {
  // Every entry, central differences with step 1e-7 (rows stay within the 1e-6 row-sum tolerance).
  // The data has no near-ties (argmax or confidences), so the argmax stays fixed and the kink is avoided.
  const auto base = testdata::softmax_predictions(30, 4, 17, 1.5, 1.3);
  std::vector<double> r;
  for (std::size_t i = 0; i < base.n; ++i) {
    std::vector<double> row(base.f.begin() + long(i * 4), base.f.begin() + long(i * 4 + 4));
    std::sort(row.begin(), row.end());
    ASSERT_GT(row[3] - row[2], 1e-5);
    r.push_back(row[3]);
  }
  std::sort(r.begin(), r.end());
  for (std::size_t i = 1; i < r.size(); ++i) ASSERT_GT(r[i] - r[i - 1], 1e-5);

  const double h = 1e-7;
  for (bool weighted : {false, true}) {
    const auto at = run(base, weighted);
    double scale = 0;
    for (double g : at.gradient) scale = std::max(scale, std::fabs(g));
    for (std::size_t e = 0; e < base.f.size(); ++e) {
      oracle::Data up = base, down = base;
      up.f[e] += h;
      down.f[e] -= h;
      const auto a = run(up, weighted), b = run(down, weighted);
      EXPECT_NEAR(at.gradient_squared[e], (a.mmce_squared - b.mmce_squared) / (2 * h), 1e-6 * scale)
          << "entry " << e << " weighted=" << weighted;
      EXPECT_NEAR(at.gradient[e], (a.mmce - b.mmce) / (2 * h), 1e-6 * scale) << "entry " << e << " weighted=" << weighted;
    }
  }
}

TEST(Mmce, LargeBatches) {
  // n = 3000 against the double loop; n = 20000 for invariance under reordering (the running sums sort).
  expect_matches_oracle(testdata::softmax_predictions(3000, 10, 23, 2.0, 1.5), true, 0.4);
  const auto d = testdata::softmax_predictions(20000, 10, 29, 2.0, 1.5);
  oracle::Data reversed = d;
  for (std::size_t i = 0; i < d.n; ++i) {
    std::copy_n(&d.f[(d.n - 1 - i) * d.k], d.k, &reversed.f[i * d.k]);
    reversed.y[i] = d.y[d.n - 1 - i];
  }
  for (bool weighted : {false, true}) {
    const auto a = run(d, weighted), b = run(reversed, weighted);
    EXPECT_GT(a.mmce_squared, 0);
    EXPECT_NEAR(a.mmce_squared, b.mmce_squared, 1e-14);
    for (std::size_t i = 0; i < d.n; ++i)
      ASSERT_NEAR(a.gradient_squared[i * d.k + argmax(d, i)],
                  b.gradient_squared[(d.n - 1 - i) * d.k + argmax(d, i)], 1e-15);
  }
}

TEST(Mmce, SeparatesCalibratedFromOverconfident) {
  // Unweighted MMCE^2 of calibrated predictions is about mean (c - r)^2 / n (the diagonal), so MMCE is
  // O(n^-1/2). (The weighted form is a training objective, not a calibration measure: for calibrated
  // predictions it tends to zero only when exactly half of them are right.)
  const auto calibrated = testdata::softmax_predictions(2000, 10, 31, 2.0, 1.0);
  const auto overconfident = testdata::softmax_predictions(2000, 10, 31, 2.0, 2.0);
  const double small = run(calibrated, false).mmce, large = run(overconfident, false).mmce;
  EXPECT_LT(small, 0.03);
  EXPECT_GT(large, 3 * small);
}

TEST(Mmce, OneSidedBatchesAreWellDefined) {
  // All right or all wrong: the weighted form has one group, with the same 1/n scale as the unweighted.
  const auto right = oracle::Data::of(2, {0.9, 0.1, 0.3, 0.7, 0.6, 0.4}, {0, 1, 0});
  const auto wrong = oracle::Data::of(2, {0.9, 0.1, 0.3, 0.7, 0.6, 0.4}, {1, 0, 1});
  for (const auto& d : {right, wrong}) {
    const auto w = run(d, true), u = run(d, false);
    EXPECT_NEAR(w.mmce_squared, u.mmce_squared, 1e-16);
    EXPECT_GT(w.mmce, 0);
    expect_matches_oracle(d, true, 0.4);
  }
  ecekde::MmceOptions no_gradient;
  no_gradient.gradient = false;
  const auto r = ecekde::mmce(ecekde::ProbsView::row_major(right.f.data(), 3, 2), ecekde::LabelsView(right.y), no_gradient);
  EXPECT_TRUE(r.gradient.empty());
  EXPECT_TRUE(r.gradient_squared.empty());
}

std::string error_of(const oracle::Data& d, double width) {
  try {
    run(d, false, width);
  } catch (const ecekde::Error& e) {
    return e.what();
  }
  return "no error";
}

// MmceStatistic (the report's resampling) against mmce() on materialised copies: a bootstrap resample's
// rows copied out, and the data with a relabelled copy's labels. Bitwise, both forms, with ties.
TEST(Mmce, PreparedStatisticEqualsTheEstimateOnCopies) {
  auto d = testdata::softmax_predictions(120, 5, 21, 2.0, 1.5);
  std::copy_n(&d.f[0], d.k, &d.f[7 * d.k]);  // a tied confidence
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  for (bool weighted : {false, true}) {
    ecekde::MmceOptions o;
    o.weighted = weighted;
    const ecekde::MmceStatistic statistic(probs, ecekde::LabelsView(d.y), o);
    EXPECT_EQ(statistic.result().mmce_squared, ecekde::mmce(probs, ecekde::LabelsView(d.y), o).mmce_squared);
    EXPECT_EQ(statistic.result().gradient, ecekde::mmce(probs, ecekde::LabelsView(d.y), o).gradient);
    for (std::size_t replicate = 0; replicate < 4; ++replicate) {
      const auto rows = ecekde::bootstrap_indices(d.n, 3, replicate);
      std::vector<double> f;
      std::vector<std::int64_t> y;
      for (std::size_t r : rows) {
        f.insert(f.end(), d.f.begin() + static_cast<std::ptrdiff_t>(r * d.k),
                 d.f.begin() + static_cast<std::ptrdiff_t>((r + 1) * d.k));
        y.push_back(d.y[r]);
      }
      EXPECT_EQ(statistic.resampled(rows),
                ecekde::mmce(ecekde::ProbsView::row_major(f.data(), rows.size(), d.k), ecekde::LabelsView(y), o).mmce_squared)
          << "resample " << replicate;
      const auto relabelled = ecekde::consistency_labels(probs, 3, replicate);
      EXPECT_EQ(statistic.relabelled(ecekde::LabelsView(relabelled)),
                ecekde::mmce(probs, ecekde::LabelsView(relabelled), o).mmce_squared)
          << "copy " << replicate;
    }
  }
  const ecekde::MmceStatistic statistic(probs, ecekde::LabelsView(d.y));
  const std::vector<std::size_t> outside{1, 120};
  EXPECT_THROW_MSG(statistic.resampled(outside), "resampled row 1: index 120 is outside [0, 120)");
  std::vector<std::int64_t> y(d.y.begin(), d.y.end());
  y[3] = -1;
  EXPECT_THROW_MSG(statistic.relabelled(ecekde::LabelsView(y)), "labels row 3: value -1 is outside [0, 5)");
}

TEST(Mmce, ErrorMessages) {
  const auto ok = oracle::Data::of(2, {0.7, 0.3, 0.4, 0.6}, {0, 0});
  EXPECT_EQ(error_of(ok, 0), "kernel_width must be a finite number > 0, got 0");
  EXPECT_EQ(error_of(ok, INFINITY), "kernel_width must be a finite number > 0, got inf");
  EXPECT_EQ(error_of(oracle::Data::of(1, {0.7, 0.4}, {0, 1}), 0.4), "mmce needs at least 2 classes, probs has 1 column");
  EXPECT_EQ(error_of(oracle::Data::of(2, {0.7, 0.3, 0.4, 0.6}, {0, 5}), 0.4), "labels row 1: value 5 is outside [0, 2)");
  EXPECT_EQ(error_of(oracle::Data::of(2, {0.7, 0.3}, {0}), 0.4), "need at least 2 samples, got 1");
  EXPECT_EQ(error_of(oracle::Data::of(2, {0.7, 0.3, -0.4, 1.4}, {0, 0}), 0.4), "probs row 1, column 0: value -0.4 is negative");
}

}  // namespace
