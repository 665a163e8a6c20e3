// Reliability diagrams: per-bin label frequency against mean score with an interval band per bin, the bin
// counts as a histogram strip, the diagonal, and a smooth curve (ECE^KDE's estimate of E[y | score]).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ecekde/binned.hpp"

namespace ecekde::plot {

/// One diagram: a score (top-label confidence, or one class's probability) against its 0/1 label.
struct ReliabilityPanel {
  std::string title;     ///< rich_text markup, e.g. "class 3"
  std::string subtitle;  ///< rich_text markup, e.g. the estimates
  std::string x_label, y_label;
  std::vector<ReliabilityBin> bins;      ///< occupied bins, increasing (BinnedResult::diagrams)
  std::vector<double> curve_x, curve_y;  ///< the smooth curve's points (may be empty)
};

struct ReliabilityFigure {
  std::string title;        ///< rich_text markup
  std::string curve_label;  ///< legend text of the smooth curve
  double level = 0.95;      ///< coverage of the per-bin Wilson score intervals
  std::vector<ReliabilityPanel> panels;
};

/// The Wilson score interval for a binomial proportion observed as `frequency` in `count` > 0 trials,
/// with z the standard normal quantile of the two-sided level:
/// (f + z^2/2n -/+ z sqrt(f(1-f)/n + z^2/4n^2)) / (1 + z^2/n).
std::pair<double, double> wilson_interval(double frequency, std::size_t count, double z);

/// The standard normal quantile: Phi^{-1}(probability), probability in (0, 1).
double normal_quantile(double probability);

/// The figure as an SVG document: one panel, or a grid of panels with a shared legend.
std::string reliability_svg(const ReliabilityFigure& figure);

}  // namespace ecekde::plot
