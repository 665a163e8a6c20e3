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
  std::vector<ReliabilityBin> bins;      ///< occupied bins, increasing (ecekde::ReliabilityPanel::bins)
  std::vector<double> lower, upper;      ///< each bin's interval band (ecekde::ReliabilityPanel)
  std::vector<double> curve_x, curve_y;  ///< the smooth curve's points (may be empty)
};

struct ReliabilityFigure {
  std::string title;        ///< rich_text markup
  std::string curve_label;  ///< legend text of the smooth curve
  double level = 0.95;      ///< coverage of the per-bin intervals (for the legend)
  std::vector<ReliabilityPanel> panels;
};

/// The figure as an SVG document: one panel, or a grid of panels with a shared legend.
std::string reliability_svg(const ReliabilityFigure& figure);

}  // namespace ecekde::plot
