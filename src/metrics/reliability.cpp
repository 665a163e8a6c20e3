// reliability_figure(): binned statistics, Wilson intervals, the kernel curve and the error terms of each
// reliability diagram, from the library's binned estimator, kernel regression and ECE^KDE; simplex_figure():
// the same estimators' view of three classes.
#include "ecekde/reliability.hpp"

#include <algorithm>
#include <cmath>

#include "core/crossfit.hpp"
#include "core/messages.hpp"
#include "ecekde/kernel_regression.hpp"

namespace ecekde {

std::pair<double, double> wilson_interval(double frequency, std::size_t count, double level) {
  const double z = detail::normal_quantile(level);
  const double n = static_cast<double>(count), z2 = z * z;
  const double centre = (frequency + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(frequency * (1 - frequency) / n + z2 / (4 * n * n));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

ReliabilityFigure reliability_figure(ProbsView probs, LabelsView labels, const ReliabilityOptions& options) {
  if (options.type == CalibrationType::canonical)
    detail::fail_with("reliability diagrams are for top-label, binary or marginal, got canonical");
  if (!(options.level > 0 && options.level < 1)) detail::fail_with("level must be in (0, 1), got ", options.level);
  if (options.curve_points < 2) detail::fail_with("curve_points must be >= 2, got ", options.curve_points);
  BinnedOptions b;
  b.type = options.type;
  b.p = options.p;
  b.binning = options.binning;
  b.bins = options.bins;
  const BinnedResult binned = binned_calibration_error(probs, labels, b);

  EstimateOptions e;
  e.estimator = Estimator::paper;
  e.type = options.type;
  e.p = options.p;
  e.bandwidth = options.bandwidth;
  e.execution = options.execution;
  const Result kde = estimate(probs, labels, e);

  ReliabilityFigure figure;
  figure.type = options.type;
  figure.p = options.p;
  figure.bandwidth = kde.bandwidth;
  figure.level = options.level;
  const std::size_t panels = binned.diagrams.size();
  // Each panel's observed score range, and one curve grid over all of them (one kernel regression).
  std::vector<double> lo(panels, 1.0), hi(panels, 0.0);
  for (std::size_t i = 0; i < probs.rows(); ++i)
    for (std::size_t c = 0; c < panels; ++c) {
      double s = probs(i, c);
      if (options.type == CalibrationType::top_label) {
        s = 0;
        for (std::size_t k = 0; k < probs.cols(); ++k) s = std::max(s, probs(i, k));
      } else if (options.type == CalibrationType::binary) {
        s = probs(i, probs.cols() - 1);
      }
      lo[c] = std::min(lo[c], s);
      hi[c] = std::max(hi[c], s);
    }
  const double all_lo = *std::min_element(lo.begin(), lo.end()), all_hi = *std::max_element(hi.begin(), hi.end());
  std::vector<double> grid(options.curve_points);
  for (std::size_t q = 0; q < grid.size(); ++q)
    grid[q] = all_lo + (all_hi - all_lo) * static_cast<double>(q) / static_cast<double>(grid.size() - 1);
  grid.back() = all_hi;  // exactly, so that the panel holding the largest score keeps its last point
  e.bandwidth = kde.bandwidth;
  const KernelRegression curve =
      kernel_regression(probs, labels, ProbsView::row_major(grid.data(), grid.size(), 1), e);
  const std::size_t columns = curve.columns;

  for (std::size_t c = 0; c < panels; ++c) {
    ReliabilityPanel panel;
    panel.bin_count = binned.edges[c].size() - 1;
    panel.bins = binned.diagrams[c];
    for (const ReliabilityBin& bin : panel.bins) {
      const auto [l, u] = wilson_interval(bin.mean_label, bin.count, options.level);
      panel.lower.push_back(l);
      panel.upper.push_back(u);
    }
    const std::size_t column = options.type == CalibrationType::marginal ? c : columns - 1;
    for (std::size_t q = 0; q < grid.size(); ++q)
      if (grid[q] >= lo[c] && grid[q] <= hi[c]) {
        panel.curve_x.push_back(grid[q]);
        panel.curve_y.push_back(curve.expectation[q * columns + column]);
      }
    const bool marginal = options.type == CalibrationType::marginal;
    panel.ece_bin = marginal ? binned.class_ce_pow_p[c] : binned.ce_pow_p;
    panel.ece_kde = marginal ? kde.class_ce_pow_p[c] : kde.ce_pow_p;
    figure.panels.push_back(std::move(panel));
  }
  return figure;
}

std::vector<std::array<double, 3>> simplex_grid(std::size_t m) {
  std::vector<std::array<double, 3>> out;
  const double M = static_cast<double>(m);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t i = 0; i + j < m; ++i) {
      const double a = static_cast<double>(i), b = static_cast<double>(j);
      auto centroid = [&](double di, double dj) {
        const double f1 = (a + di) / M, f2 = (b + dj) / M;
        return std::array<double, 3>{1 - f1 - f2, f1, f2};
      };
      out.push_back(centroid(1.0 / 3, 1.0 / 3));
      if (i + j + 2 <= m) out.push_back(centroid(2.0 / 3, 2.0 / 3));
    }
  return out;
}

SimplexFigure simplex_figure(ProbsView probs, LabelsView labels, const SimplexOptions& options) {
  if (probs.cols() != 3) detail::fail_with("the simplex figure needs 3 classes, probs has ", probs.cols(), " columns");
  if (options.bins < 1) detail::fail_with("bins must be >= 1, got ", options.bins);
  if (options.grid < 1) detail::fail_with("grid must be >= 1, got ", options.grid);
  SimplexFigure figure;
  figure.p = options.p;
  figure.grid = options.grid;
  BinnedOptions b;
  b.type = CalibrationType::canonical;
  b.p = options.p;
  b.bins = options.bins;
  figure.binned = binned_calibration_error(probs, labels, b);

  EstimateOptions e;
  e.estimator = Estimator::paper;
  e.type = CalibrationType::canonical;
  e.p = options.p;
  e.bandwidth = options.bandwidth;
  e.execution = options.execution;
  const Result kde = estimate(probs, labels, e);
  figure.bandwidth = kde.bandwidth;
  figure.ece_kde = kde.ce_pow_p;

  figure.points = simplex_grid(options.grid);
  e.bandwidth = kde.bandwidth;
  const KernelRegression density = kernel_regression(
      probs, labels, ProbsView::row_major(figure.points.front().data(), figure.points.size(), 3), e);
  for (std::size_t q = 0; q < figure.points.size(); ++q)
    figure.log_density.push_back(density.log_density[q * density.columns]);
  return figure;
}

}  // namespace ecekde
