// The estimators built on the kernel regression's accuracy: the loo-regression bandwidth criterion and
// the debiased (p = 2) form, against plain O(n^2) and O(n^3) oracles written from their definitions, and
// the property the debiased form exists for (no label-noise term in its expectation).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/estimate_steps.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/synthetic.hpp"
#include "expect_error.hpp"
#include "generate.hpp"
#include "oracle.hpp"

namespace {

using ecekde::BandwidthCriterion;
using ecekde::CalibrationType;
using ecekde::KdeForm;

// One kernel problem written out: points x_j on a simplex (dim = K, or (s, 1 - s)), the label vector t_j
// the regression averages and the prediction g_j it is compared with (canonical: e_{y_j} and f_j;
// one-dimensional: (b_j) and (s_j)).
struct Problem {
  std::size_t n = 0, dim = 0;
  std::vector<double> x;
  std::vector<std::vector<double>> t, g;
};

Problem one_dimensional(const std::vector<double>& s, const std::vector<int>& b) {
  Problem p;
  p.n = s.size();
  p.dim = 2;
  for (std::size_t j = 0; j < p.n; ++j) {
    p.x.push_back(s[j]);
    p.x.push_back(1 - s[j]);
    p.t.push_back({static_cast<double>(b[j])});
    p.g.push_back({s[j]});
  }
  return p;
}

std::vector<Problem> problems_of(const oracle::Data& d, CalibrationType type) {
  std::vector<Problem> out;
  std::vector<double> s(d.n);
  std::vector<int> b(d.n);
  switch (type) {
    case CalibrationType::canonical: {
      Problem p;
      p.n = d.n;
      p.dim = d.k;
      p.x = d.f;
      for (std::size_t j = 0; j < d.n; ++j) {
        std::vector<double> e(d.k, 0.0);
        e[static_cast<std::size_t>(d.y[j])] = 1;
        p.t.push_back(e);
        p.g.emplace_back(d.f.begin() + static_cast<std::ptrdiff_t>(j * d.k),
                         d.f.begin() + static_cast<std::ptrdiff_t>((j + 1) * d.k));
      }
      out.push_back(p);
      break;
    }
    case CalibrationType::marginal:
      for (std::size_t c = 0; c < d.k; ++c) {
        for (std::size_t j = 0; j < d.n; ++j) {
          s[j] = d.at(j, c);
          b[j] = d.y[j] == static_cast<std::int64_t>(c);
        }
        out.push_back(one_dimensional(s, b));
      }
      break;
    case CalibrationType::top_label:
      for (std::size_t j = 0; j < d.n; ++j) {
        std::size_t top = 0;
        for (std::size_t c = 1; c < d.k; ++c)
          if (d.at(j, c) > d.at(j, top)) top = c;
        s[j] = d.at(j, top);
        b[j] = d.y[j] == static_cast<std::int64_t>(top);
      }
      out.push_back(one_dimensional(s, b));
      break;
    case CalibrationType::binary:
      for (std::size_t j = 0; j < d.n; ++j) {
        s[j] = d.at(j, d.k - 1);
        b[j] = static_cast<int>(d.y[j]);
      }
      out.push_back(one_dimensional(s, b));
      break;
  }
  return out;
}

// Kernel weights of row j relative to its largest (0 at i = j).
std::vector<double> weights(const Problem& p, std::size_t j, double h) {
  std::vector<double> logk(p.n, -INFINITY);
  for (std::size_t i = 0; i < p.n; ++i)
    if (i != j) logk[i] = oracle::log_dirichlet(&p.x[j * p.dim], &p.x[i * p.dim], p.dim, h);
  const double m = *std::max_element(logk.begin(), logk.end());
  std::vector<double> w(p.n);
  for (std::size_t i = 0; i < p.n; ++i) w[i] = i == j ? 0.0 : std::exp(logk[i] - m);
  return w;
}

// Mean over `rows` of the leave-one-out Brier score ||t_j - r_j||^2.
double brier(const Problem& p, double h, const std::vector<std::size_t>& rows) {
  double total = 0;
  for (std::size_t j : rows) {
    const auto w = weights(p, j, h);
    double den = 0;
    for (double v : w) den += v;
    for (std::size_t c = 0; c < p.t[j].size(); ++c) {
      double num = 0;
      for (std::size_t i = 0; i < p.n; ++i) num += w[i] * p.t[i][c];
      total += std::pow(p.t[j][c] - num / den, 2);
    }
  }
  return total / static_cast<double>(rows.size());
}

// The debiased form literally: mean over rows of sum_{i != k} w_i w_k <t_i - g_j, t_k - g_j> /
// sum_{i != k} w_i w_k, leaving out rows whose pair sum is at most 1e-6 (sum w)^2. Returns the mean and
// the number of rows left out.
std::pair<double, std::size_t> debiased(const Problem& p, double h) {
  double total = 0;
  std::size_t used = 0;
  for (std::size_t j = 0; j < p.n; ++j) {
    const auto w = weights(p, j, h);
    double num = 0, pairs = 0, den = 0;
    for (std::size_t i = 0; i < p.n; ++i) {
      den += w[i];
      for (std::size_t k = 0; k < p.n; ++k) {
        if (k == i) continue;
        pairs += w[i] * w[k];
        for (std::size_t c = 0; c < p.g[j].size(); ++c) num += w[i] * w[k] * (p.t[i][c] - p.g[j][c]) * (p.t[k][c] - p.g[j][c]);
      }
    }
    if (pairs <= 1e-6 * den * den) continue;
    total += num / pairs;
    ++used;
  }
  return {total / static_cast<double>(used), p.n - used};
}

ecekde::ExecutionOptions odd_execution() {
  ecekde::ExecutionOptions e;
  e.threads = 2;
  e.block_size = 37;
  return e;
}

ecekde::ProbsView view(const oracle::Data& d) { return ecekde::ProbsView::row_major(d.f.data(), d.n, d.k); }

std::vector<std::size_t> all_rows(std::size_t n) {
  std::vector<std::size_t> r(n);
  for (std::size_t i = 0; i < n; ++i) r[i] = i;
  return r;
}

constexpr CalibrationType kTypes[] = {CalibrationType::canonical, CalibrationType::marginal,
                                      CalibrationType::top_label, CalibrationType::binary};

TEST(LooRegression, GridScoresMatchOracleBrierScore) {
  const auto d = testdata::softmax_predictions(90, 3, 12, 2.0, 1.5);
  const auto bin = testdata::binary_predictions(70, 13, 1.5);
  for (auto type : kTypes) {
    const auto& data = type == CalibrationType::binary ? bin : d;
    ecekde::BandwidthOptions o;
    o.criterion = BandwidthCriterion::loo_regression;
    o.refine = false;
    const auto s = ecekde::select_bandwidth(view(data), data.y, type, o, odd_execution());
    EXPECT_EQ(s.criterion, BandwidthCriterion::loo_regression);
    ASSERT_EQ(s.grid, ecekde::default_bandwidth_grid());
    for (std::size_t i = 0; i < s.grid.size(); ++i) {
      double want = 0;
      for (const Problem& p : problems_of(data, type)) want -= brier(p, s.grid[i], all_rows(data.n));
      // the accuracy of docs/estimator.md (Numerical rules): the kernel's log-scores are O(1/h), so input rounding grows like 1/h
      const double tolerance = (1e-12 + 2e-16 / s.grid[i]) * std::max(1.0, std::fabs(want));
      EXPECT_NEAR(s.score[i], want, tolerance) << to_string(type) << " h=" << s.grid[i];
    }
    const auto best = std::max_element(s.score.begin(), s.score.end()) - s.score.begin();
    EXPECT_EQ(s.bandwidth, s.grid[static_cast<std::size_t>(best)]);
  }
}

TEST(LooRegression, RowSubsetMatchesOracleOnThoseRows) {
  const auto d = testdata::softmax_predictions(150, 4, 19, 2.0, 1.5);
  ecekde::BandwidthOptions o;
  o.criterion = BandwidthCriterion::loo_regression;
  o.max_rows = 40;
  o.refine = false;
  o.grid = {0.003, 0.03, 0.3};
  const auto rows = ecekde::detail::criterion_rows(d.n, 40);
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal}) {
    const auto s = ecekde::select_bandwidth(view(d), d.y, type, o, odd_execution());
    EXPECT_EQ(s.rows, 40u);
    for (std::size_t i = 0; i < o.grid.size(); ++i) {
      double want = 0;
      for (const Problem& p : problems_of(d, type)) want -= brier(p, o.grid[i], rows);
      EXPECT_NEAR(s.score[i], want, 1e-12 * std::fabs(want)) << to_string(type);
    }
  }
}

TEST(LooRegression, EstimateUsesTheSelectionAndSelectionNeedsLabels) {
  const auto d = testdata::softmax_predictions(120, 3, 5, 2.0, 1.5);
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.bandwidth_selection.criterion = BandwidthCriterion::loo_regression;
  const auto r = ecekde::estimate(view(d), d.y, o);
  ASSERT_TRUE(r.selection.has_value());
  EXPECT_EQ(r.selection->criterion, BandwidthCriterion::loo_regression);
  const auto s = ecekde::select_bandwidth(view(d), d.y, CalibrationType::canonical, o.bandwidth_selection);
  EXPECT_EQ(s.bandwidth, r.bandwidth);
  EXPECT_FALSE(s.refined_grid.empty());
  EXPECT_GE(s.best_score, *std::max_element(s.score.begin(), s.score.end()));
  EXPECT_THROW_MSG(ecekde::select_bandwidth(view(d), CalibrationType::canonical, o.bandwidth_selection),
                   "bandwidth criterion loo-regression needs the labels: pass them to select_bandwidth");
  // the labelled overload gives the likelihood criteria unchanged (up to the order of summation: the
  // centres are sorted by label)
  const auto with = ecekde::select_bandwidth(view(d), d.y, CalibrationType::top_label, {});
  const auto without = ecekde::select_bandwidth(view(d), CalibrationType::top_label, {});
  ASSERT_EQ(with.score.size(), without.score.size());
  for (std::size_t i = 0; i < with.score.size(); ++i)
    EXPECT_NEAR(with.score[i], without.score[i], 1e-12 * std::max(1.0, std::fabs(without.score[i])));
}

TEST(LooRegression, NamesRoundTrip) {
  EXPECT_EQ(to_string(BandwidthCriterion::loo_regression), "loo-regression");
  EXPECT_EQ(ecekde::parse_name<ecekde::BandwidthCriterion>("loo-regression"), BandwidthCriterion::loo_regression);
  EXPECT_EQ(ecekde::parse_name<ecekde::BandwidthCriterion>("loo_regression"), BandwidthCriterion::loo_regression);
  EXPECT_EQ(to_string(KdeForm::plug_in), "plug-in");
  EXPECT_EQ(to_string(KdeForm::debiased), "debiased");
  EXPECT_EQ(ecekde::parse_name<ecekde::KdeForm>("plug_in"), KdeForm::plug_in);
  EXPECT_EQ(ecekde::parse_name<ecekde::KdeForm>("debiased"), KdeForm::debiased);
  EXPECT_THROW_MSG(ecekde::parse_name<ecekde::KdeForm>("unbiased"), "unknown estimate form 'unbiased' (expected plug-in or debiased)");
}

// On calibrated predictions the likelihood's small bandwidth leaves the plug-in estimate dominated by
// label noise; the regression's bandwidth removes most of it (docs/validation.md has the full study).
TEST(LooRegression, CalibratedModelScoresFarLowerThanWithTheLikelihoodBandwidth) {
  const auto data = ecekde::generate_synthetic({4, 0.6, 1.0}, 800, 3);
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  const double likelihood = ecekde::estimate(data.probs_view(), data.labels_view(), o).ce_pow_p;
  o.bandwidth_selection.criterion = BandwidthCriterion::loo_regression;
  const auto regression = ecekde::estimate(data.probs_view(), data.labels_view(), o);
  EXPECT_LT(regression.ce_pow_p, 0.5 * likelihood);
}

TEST(Debiased, MatchesTheOraclePairSums) {
  const auto d = testdata::softmax_predictions(40, 3, 21, 2.0, 1.5);
  const auto bin = testdata::binary_predictions(45, 22, 1.5);
  for (auto type : kTypes) {
    const auto& data = type == CalibrationType::binary ? bin : d;
    for (double h : {0.003, 0.05, 0.5}) {
      ecekde::EstimateOptions o;
      o.estimator = ecekde::Estimator::paper;
      o.type = type;
      o.p = 2;
      o.bandwidth = h;
      o.form = KdeForm::debiased;
      o.execution = odd_execution();
      const auto r = ecekde::estimate(view(data), data.y, o);
      double want = 0;
      std::size_t excluded = 0;
      std::vector<double> per_class;
      for (const Problem& p : problems_of(data, type)) {
        const auto [v, e] = debiased(p, h);
        per_class.push_back((type == CalibrationType::binary ? 2 : 1) * v);
        want += per_class.back();
        excluded += e;
      }
      EXPECT_NEAR(r.ce_pow_p, want, 1e-11) << to_string(type) << " h=" << h;
      EXPECT_EQ(r.excluded_rows, excluded);
      EXPECT_DOUBLE_EQ(r.ce, std::sqrt(std::max(r.ce_pow_p, 0.0)));  // pow(x, 1/2): within an ulp of sqrt
      if (type == CalibrationType::marginal) {
        ASSERT_EQ(r.class_ce_pow_p.size(), per_class.size());
        for (std::size_t c = 0; c < per_class.size(); ++c) EXPECT_NEAR(r.class_ce_pow_p[c], per_class[c], 1e-11);
      }
    }
  }
  // binary on two columns is canonical on them (both coordinates' U-statistics are equal)
  std::vector<double> two(2 * bin.n);
  for (std::size_t j = 0; j < bin.n; ++j) {
    two[2 * j] = 1 - bin.f[j];
    two[2 * j + 1] = bin.f[j];
  }
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.p = 2;
  o.bandwidth = 0.05;
  o.form = KdeForm::debiased;
  const auto canonical = ecekde::estimate(ecekde::ProbsView::row_major(two.data(), bin.n, 2), bin.y, o);
  o.type = CalibrationType::binary;
  EXPECT_NEAR(canonical.ce_pow_p, ecekde::estimate(view(bin), bin.y, o).ce_pow_p, 1e-12);
}

// Given the predictions, E[U_jc] = sum_{i != k} w_i w_k m_ic m_kc / sum_{i != k} w_i w_k with
// m_ic = E[y_ic | f_i] - f_jc: no label-noise term. Labels are redrawn from the synthetic model's known
// E[y | f]; the mean of the debiased estimate matches that expectation, while the plug-in's exceeds it by
// the noise.
TEST(Debiased, ExpectationGivenThePredictionsHasNoNoiseTerm) {
  const std::size_t n = 30, K = 3, reps = 3000;
  const double h = 0.05;
  const auto data = ecekde::generate_synthetic({K, 0.6, 0.6}, n, 8);
  oracle::Data d;
  d.n = n;
  d.k = K;
  d.f = data.probs;
  d.y.assign(n, 0);
  Problem p = problems_of(d, CalibrationType::canonical).front();
  double expected = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const auto w = weights(p, j, h);
    double num = 0, pairs = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k) {
        if (k == i) continue;
        pairs += w[i] * w[k];
        for (std::size_t c = 0; c < K; ++c)
          num += w[i] * w[k] * (data.calibrated[i * K + c] - d.at(j, c)) * (data.calibrated[k * K + c] - d.at(j, c));
      }
    expected += num / pairs / static_cast<double>(n);
  }
  ecekde::Rng rng(99);
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.p = 2;
  o.bandwidth = h;
  double sum = 0, sum2 = 0, plug_in = 0;
  for (std::size_t r = 0; r < reps; ++r) {
    for (std::size_t j = 0; j < n; ++j)
      d.y[j] = static_cast<std::int64_t>(rng.categorical(std::span<const double>(&data.calibrated[j * K], K)));
    o.form = KdeForm::debiased;
    const double v = ecekde::estimate(view(d), d.y, o).ce_pow_p;
    sum += v;
    sum2 += v * v;
    o.form = KdeForm::plug_in;
    plug_in += ecekde::estimate(view(d), d.y, o).ce_pow_p;
  }
  const double mean = sum / reps, se = std::sqrt((sum2 / reps - mean * mean) / reps);
  EXPECT_NEAR(mean, expected, 4 * se) << "se " << se;
  EXPECT_GT(plug_in / reps, expected + 20 * se);
}

// Rows whose weight rests on one neighbour are left out: a tight cluster of three and a far pair.
TEST(Debiased, RowsWithOneNeighbourAreLeftOut) {
  const std::vector<double> f = {0.5, 0.3, 0.2,  0.5001, 0.2999, 0.2,  0.4999, 0.3001, 0.2,
                                 0.1, 0.1, 0.8,  0.1001, 0.0999, 0.8};
  const std::vector<std::int64_t> y = {0, 1, 0, 2, 2};
  const auto v = ecekde::ProbsView::row_major(f.data(), 5, 3);
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.p = 2;
  o.bandwidth = 1e-3;
  o.form = KdeForm::debiased;
  const auto r = ecekde::estimate(v, y, o);
  EXPECT_EQ(r.excluded_rows, 2u);
  oracle::Data d{5, 3, f, y};
  EXPECT_NEAR(r.ce_pow_p, debiased(problems_of(d, CalibrationType::canonical).front(), 1e-3).first, 1e-9);
  // without any usable row there is nothing to average: two samples have one neighbour each
  EXPECT_THROW_MSG(ecekde::estimate(ecekde::ProbsView::row_major(f.data(), 2, 3), std::vector<std::int64_t>{0, 1}, o),
                   "the debiased form needs rows with at least two neighbours of non-negligible kernel weight; at "
                   "bandwidth 0.001 every row's weight rests on a single neighbour (choose a larger bandwidth)");
}

TEST(Debiased, OnlyForPTwoAndOnlyInEstimate) {
  const auto d = testdata::softmax_predictions(30, 3, 2);
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.form = KdeForm::debiased;
  o.bandwidth = 0.1;
  EXPECT_THROW_MSG(ecekde::estimate(view(d), d.y, o), "the debiased form estimates CE_2^2 and needs p = 2, got p = 1");
  o.p = 2;
  EXPECT_THROW_MSG(ecekde::estimate_with_gradient(view(d), d.y, o),
                   "estimate_with_gradient supports only the plug-in form, got form debiased");
  EXPECT_THROW_MSG(ecekde::bootstrap_kde(view(d), d.y, o), "bootstrap_kde supports only the plug-in form, got form debiased");
  EXPECT_THROW_MSG(ecekde::calibration_test_kde(view(d), d.y, o),
                   "calibration_test_kde supports only the plug-in form, got form debiased");
}

}  // namespace
