// Automatic bandwidth selection: the criterion against the oracle's leave-one-out likelihood, the row
// subset used at large n, and the refinement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/estimate_steps.hpp"
#include "ecekde/estimate.hpp"
#include "generate.hpp"
#include "oracle.hpp"

namespace {

using ecekde::BandwidthCriterion;
using ecekde::CalibrationType;

ecekde::BandwidthSelection select(const oracle::Data& d, CalibrationType type, ecekde::BandwidthOptions o) {
  ecekde::ExecutionOptions e;
  e.threads = 2;
  e.block_size = 37;
  return ecekde::select_bandwidth(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), type, o, e);
}

std::vector<double> scores_of(const oracle::Data& d, std::size_t c) {  // column c as scores
  std::vector<double> s(d.n);
  for (std::size_t j = 0; j < d.n; ++j) s[j] = d.at(j, c);
  return s;
}

double oracle_criterion(const oracle::Data& d, CalibrationType type, double h) {
  switch (type) {
    case CalibrationType::canonical: return oracle::loo_canonical(d, h);
    case CalibrationType::marginal: {
      double s = 0;
      for (std::size_t c = 0; c < d.k; ++c) s += oracle::loo_one_dimensional(scores_of(d, c), h);
      return s;
    }
    case CalibrationType::top_label: {
      std::vector<double> s(d.n);
      for (std::size_t j = 0; j < d.n; ++j) s[j] = *std::max_element(d.f.begin() + j * d.k, d.f.begin() + (j + 1) * d.k);
      return oracle::loo_one_dimensional(s, h);
    }
    case CalibrationType::binary: return oracle::loo_one_dimensional(scores_of(d, d.k - 1), h);
  }
  return NAN;
}

TEST(Bandwidth, GridScoresMatchOracleLooLikelihood) {
  const auto d = testdata::softmax_predictions(90, 3, 12, 2.0, 1.0);
  const auto b = testdata::binary_predictions(70, 13);
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label,
                    CalibrationType::binary})
    for (auto criterion : {BandwidthCriterion::loo_likelihood, BandwidthCriterion::reference}) {
      const auto& data = type == CalibrationType::binary ? b : d;
      ecekde::BandwidthOptions o;
      o.criterion = criterion;
      o.refine = false;
      const auto s = select(data, type, o);
      ASSERT_EQ(s.grid, ecekde::default_bandwidth_grid());
      ASSERT_EQ(s.rows, data.n);
      const double problems = type == CalibrationType::marginal ? static_cast<double>(data.k) : 1.0;
      for (std::size_t i = 0; i < s.grid.size(); ++i) {
        double want = oracle_criterion(data, type, s.grid[i]);
        if (criterion == BandwidthCriterion::reference) want -= problems * std::log(s.grid[i]);
        EXPECT_NEAR(s.score[i], want, 1e-10 * std::max(1.0, std::fabs(want))) << to_string(type) << " h=" << s.grid[i];
      }
      const auto best = std::max_element(s.score.begin(), s.score.end()) - s.score.begin();
      EXPECT_EQ(s.bandwidth, s.grid[static_cast<std::size_t>(best)]);
    }
}

// The reference criterion favours smaller bandwidths than the likelihood.
TEST(Bandwidth, ReferenceCriterionChoosesSmallerH) {
  const auto d = testdata::softmax_predictions(400, 4, 3, 1.0, 1.0);
  ecekde::BandwidthOptions o;
  const double loo = select(d, CalibrationType::canonical, o).bandwidth;
  o.criterion = BandwidthCriterion::reference;
  const double ref = select(d, CalibrationType::canonical, o).bandwidth;
  EXPECT_LT(ref, loo);
}

// The refinement scores trees of its next steps' points in one sweep where the dot products dominate
// (K = 70: two steps a sweep, K = 200: three). It must take exactly the steps of a golden-section search
// that scores one bandwidth at a time: written out here, each point scored by a selection over a grid of
// that one bandwidth. Bitwise: the same points, scores and answer, in the same order.
TEST(Bandwidth, RefinementTakesTheStepsOfAPlainGoldenSectionSearch) {
  for (std::size_t k : {3, 70, 200})
    for (BandwidthCriterion criterion : {BandwidthCriterion::loo_likelihood, BandwidthCriterion::reference}) {
      SCOPED_TRACE(testing::Message() << "K " << k << " criterion " << static_cast<int>(criterion));
      const auto d = testdata::softmax_predictions(90, k, 17 + k, 1.5, 1.0);
      ecekde::BandwidthOptions o;
      o.criterion = criterion;
      const auto s = select(d, CalibrationType::canonical, o);
      auto score = [&](double t) {
        ecekde::BandwidthOptions one = o;
        one.grid = {std::exp(t)};
        one.refine = false;
        return select(d, CalibrationType::canonical, one).score[0];
      };
      const auto g = static_cast<std::size_t>(std::max_element(s.score.begin(), s.score.end()) - s.score.begin());
      double a = std::log(s.grid[g == 0 ? 0 : g - 1]), b = std::log(s.grid[std::min(g + 1, s.grid.size() - 1)]);
      const double golden = (std::sqrt(5.0) - 1) / 2;
      double c = b - golden * (b - a), d2 = a + golden * (b - a);
      std::vector<double> points = {c, d2};
      double fc = score(c), fd = score(d2);
      std::vector<double> scores = {fc, fd};
      while (b - a > 0.01 * std::log(10.0)) {
        if (fc >= fd) {
          b = d2, d2 = c, fd = fc;
          c = b - golden * (b - a);
          points.push_back(c);
          scores.push_back(fc = score(c));
        } else {
          a = c, c = d2, fc = fd;
          d2 = a + golden * (b - a);
          points.push_back(d2);
          scores.push_back(fd = score(d2));
        }
      }
      ASSERT_EQ(s.refined_grid.size(), points.size());
      for (std::size_t i = 0; i < points.size(); ++i) {
        EXPECT_EQ(s.refined_grid[i], std::exp(points[i])) << i;
        EXPECT_EQ(s.refined_score[i], scores[i]) << i;
      }
      const auto best = static_cast<std::size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
      EXPECT_EQ(s.bandwidth, scores[best] > s.score[g] ? std::exp(points[best]) : s.grid[g]);
    }
}

TEST(Bandwidth, RefinementNeverWorseAndStaysInBracket) {
  const auto d = testdata::softmax_predictions(200, 3, 8, 1.5, 1.0);
  const auto s = select(d, CalibrationType::canonical, {});
  const double grid_best = *std::max_element(s.score.begin(), s.score.end());
  EXPECT_GE(s.best_score, grid_best);
  ASSERT_FALSE(s.refined_grid.empty());
  const auto g = std::max_element(s.score.begin(), s.score.end()) - s.score.begin();
  const double lo = s.grid[static_cast<std::size_t>(std::max<long>(g - 1, 0))];
  const double hi = s.grid[std::min<std::size_t>(static_cast<std::size_t>(g) + 1, s.grid.size() - 1)];
  for (double h : s.refined_grid) {
    EXPECT_GE(h, lo * (1 - 1e-12));
    EXPECT_LE(h, hi * (1 + 1e-12));
  }
  // the answer is a bandwidth that was evaluated, with its own score
  if (s.bandwidth != s.grid[static_cast<std::size_t>(g)]) {
    const auto it = std::find(s.refined_grid.begin(), s.refined_grid.end(), s.bandwidth);
    ASSERT_NE(it, s.refined_grid.end());
    EXPECT_EQ(s.refined_score[static_cast<std::size_t>(it - s.refined_grid.begin())], s.best_score);
  }
  // a user grid is sorted and deduplicated
  ecekde::BandwidthOptions o;
  o.grid = {0.5, 0.01, 0.1, 0.01};
  o.refine = false;
  EXPECT_EQ(select(d, CalibrationType::canonical, o).grid, (std::vector<double>{0.01, 0.1, 0.5}));
}

// Above max_rows the criterion is the mean over a fixed random subset of rows, each scored against all
// other samples: equal to the oracle's per-row LOO log-likelihood averaged over exactly those rows.
TEST(Bandwidth, RowSubsetCriterionMatchesOracleOnThoseRows) {
  const auto d = testdata::softmax_predictions(150, 3, 19, 2.0, 1.0);
  ecekde::BandwidthOptions o;
  o.max_rows = 40;
  o.refine = false;
  o.grid = {0.003, 0.03, 0.3};
  const auto s = select(d, CalibrationType::canonical, o);
  EXPECT_EQ(s.rows, 40u);
  const auto rows = ecekde::detail::criterion_rows(d.n, 40);
  ASSERT_EQ(rows.size(), 40u);
  ASSERT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  for (std::size_t i = 0; i < o.grid.size(); ++i) {
    double total = 0;
    for (std::size_t j : rows) {
      std::vector<double> logk;
      for (std::size_t c = 0; c < d.n; ++c)
        if (c != j) logk.push_back(oracle::log_dirichlet(&d.f[j * d.k], &d.f[c * d.k], d.k, o.grid[i]));
      const double m = *std::max_element(logk.begin(), logk.end());
      double sum = 0;
      for (double v : logk) sum += std::exp(v - m);
      total += m + std::log(sum / static_cast<double>(d.n - 1));
    }
    EXPECT_NEAR(s.score[i], total / 40, 1e-10 * std::fabs(total / 40));
  }
  // all rows when n <= max_rows, and max_rows = 0 means all rows
  o.max_rows = 0;
  EXPECT_EQ(select(d, CalibrationType::canonical, o).rows, d.n);
}

}  // namespace
