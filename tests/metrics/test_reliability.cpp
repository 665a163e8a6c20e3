// reliability_figure() and simplex_figure(): what every front end draws equals the library's binned
// estimator, kernel regression and ECE^KDE read directly; the Wilson interval against hand-computed values.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "ecekde/binned.hpp"
#include "ecekde/kernel_regression.hpp"
#include "ecekde/reliability.hpp"
#include "expect_error.hpp"
#include "generate.hpp"

namespace {

using ecekde::CalibrationType;

TEST(Reliability, WilsonInterval) {
  const double level = std::erf(1.96 / std::sqrt(2.0));  // z = 1.96 exactly
  // 7 of 20: centre (0.35 + 0.09604) / 1.19208, half 1.96 / 1.19208 * sqrt(0.011375 + 0.0024010).
  const auto [lo, hi] = ecekde::wilson_interval(0.35, 20, level);
  EXPECT_NEAR(lo, 0.18119, 1e-5);
  EXPECT_NEAR(hi, 0.56714, 1e-5);
  // 0 of 10 and 10 of 10 stay inside [0, 1] and have width > 0.
  EXPECT_EQ(ecekde::wilson_interval(0, 10, level).first, 0);
  EXPECT_GT(ecekde::wilson_interval(0, 10, level).second, 0.2);
  EXPECT_EQ(ecekde::wilson_interval(1, 10, level).second, 1);
}

TEST(Reliability, FigureIsTheLibrarysEstimatesReadDirectly) {
  const oracle::Data d = testdata::softmax_predictions(300, 4, 11, 2.0, 1.5);
  const ecekde::ProbsView probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  const ecekde::LabelsView labels(d.y);
  for (CalibrationType type : {CalibrationType::top_label, CalibrationType::marginal}) {
    SCOPED_TRACE(std::string(ecekde::to_string(type)));
    ecekde::ReliabilityOptions o;
    o.type = type;
    o.p = 2;
    o.bins = 8;
    o.curve_points = 31;
    const ecekde::ReliabilityFigure f = ecekde::reliability_figure(probs, labels, o);

    ecekde::BinnedOptions b;
    b.type = type;
    b.p = 2;
    b.bins = 8;
    const ecekde::BinnedResult binned = ecekde::binned_calibration_error(probs, labels, b);
    ecekde::EstimateOptions e;
    e.estimator = ecekde::Estimator::paper;
    e.type = type;
    e.p = 2;
    const ecekde::Result kde = ecekde::estimate(probs, labels, e);
    EXPECT_EQ(f.bandwidth, kde.bandwidth);  // automatic: the paper's choice
    ASSERT_EQ(f.panels.size(), binned.diagrams.size());
    for (std::size_t c = 0; c < f.panels.size(); ++c) {
      const ecekde::ReliabilityPanel& panel = f.panels[c];
      ASSERT_EQ(panel.bins.size(), binned.diagrams[c].size());
      EXPECT_EQ(panel.bin_count, 8u);
      for (std::size_t i = 0; i < panel.bins.size(); ++i) {
        EXPECT_EQ(panel.bins[i].mean_label, binned.diagrams[c][i].mean_label);
        EXPECT_LE(panel.lower[i], panel.bins[i].mean_label);
        EXPECT_GE(panel.upper[i], panel.bins[i].mean_label);
      }
      const bool marginal = type == CalibrationType::marginal;
      EXPECT_EQ(panel.ece_bin, marginal ? binned.class_ce_pow_p[c] : binned.ce_pow_p);
      EXPECT_DOUBLE_EQ(panel.ece_kde, marginal ? kde.class_ce_pow_p[c] : kde.ce_pow_p);
      // The curve is the kernel regression at its points, inside the panel's observed scores.
      ASSERT_GE(panel.curve_x.size(), 2u);
      e.bandwidth = f.bandwidth;
      const ecekde::KernelRegression k = ecekde::kernel_regression(
          probs, labels, ecekde::ProbsView::row_major(panel.curve_x.data(), panel.curve_x.size(), 1), e);
      for (std::size_t q = 0; q < panel.curve_x.size(); ++q)
        EXPECT_NEAR(panel.curve_y[q], k.expectation[q * k.columns + (marginal ? c : 0)], 1e-12);
    }
  }
}

TEST(Reliability, BadOptionsAreOneLineErrors) {
  const oracle::Data d = testdata::softmax_predictions(40, 3, 12);
  const ecekde::ProbsView probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  ecekde::ReliabilityOptions o;
  o.type = CalibrationType::canonical;
  EXPECT_THROW_MSG(ecekde::reliability_figure(probs, ecekde::LabelsView(d.y), o),
                   "reliability diagrams are for top-label, binary or marginal, got canonical");
  o.type = CalibrationType::top_label;
  o.curve_points = 1;
  EXPECT_THROW_MSG(ecekde::reliability_figure(probs, ecekde::LabelsView(d.y), o), "curve_points must be >= 2, got 1");
}

TEST(Simplex, GridCentroids) {
  const std::vector<std::array<double, 3>> g = ecekde::simplex_grid(6);
  ASSERT_EQ(g.size(), 36u);
  for (const std::array<double, 3>& f : g) {
    EXPECT_NEAR(f[0] + f[1] + f[2], 1, 1e-15);
    for (double v : f) EXPECT_GT(v, 0);
  }
  EXPECT_NEAR(g[0][1], 1.0 / 18, 1e-15);  // first upward triangle (0, 0)
}

TEST(Simplex, FigureIsTheLibrarysEstimatesReadDirectly) {
  const oracle::Data d = testdata::softmax_predictions(200, 3, 13, 2.0, 1.5);
  const ecekde::ProbsView probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  const ecekde::LabelsView labels(d.y);
  ecekde::SimplexOptions o;
  o.p = 2;
  o.bins = 4;
  o.grid = 5;
  const ecekde::SimplexFigure f = ecekde::simplex_figure(probs, labels, o);

  ecekde::BinnedOptions b;
  b.type = CalibrationType::canonical;
  b.p = 2;
  b.bins = 4;
  const ecekde::BinnedResult binned = ecekde::binned_calibration_error(probs, labels, b);
  EXPECT_EQ(f.binned.ce_pow_p, binned.ce_pow_p);
  EXPECT_EQ(f.binned.cells.size(), binned.cells.size());
  ecekde::EstimateOptions e;
  e.estimator = ecekde::Estimator::paper;
  e.p = 2;
  const ecekde::Result kde = ecekde::estimate(probs, labels, e);
  EXPECT_EQ(f.bandwidth, kde.bandwidth);  // automatic: the paper's choice
  EXPECT_DOUBLE_EQ(f.ece_kde, kde.ce_pow_p);
  ASSERT_EQ(f.points, ecekde::simplex_grid(5));
  e.bandwidth = f.bandwidth;
  const ecekde::KernelRegression k =
      ecekde::kernel_regression(probs, labels, ecekde::ProbsView::row_major(f.points.front().data(), 25, 3), e);
  ASSERT_EQ(f.log_density.size(), 25u);
  for (std::size_t q = 0; q < 25; ++q) EXPECT_EQ(f.log_density[q], k.log_density[q * k.columns]);

  const oracle::Data four = testdata::softmax_predictions(40, 4, 12);
  EXPECT_THROW_MSG(ecekde::simplex_figure(ecekde::ProbsView::row_major(four.f.data(), four.n, four.k),
                                          ecekde::LabelsView(four.y)),
                   "the simplex figure needs 3 classes, probs has 4 columns");
  o.grid = 0;
  EXPECT_THROW_MSG(ecekde::simplex_figure(probs, labels, o), "grid must be >= 1, got 0");
}

}  // namespace
