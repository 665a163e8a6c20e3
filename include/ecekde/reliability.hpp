// What a reliability diagram shows, computed once for every front end (the CLI's SVG, ecekde.plot's
// matplotlib): per panel the occupied bins with Wilson intervals of their label frequency, the kernel
// estimate of E[y | score] as a curve, and the panel's binned and ECE^KDE error terms.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "ecekde/binned.hpp"
#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde {

/// Options of reliability_figure() (option table: options::reliability_options()).
struct ReliabilityOptions {
  CalibrationType type = CalibrationType::top_label;  ///< top-label, binary (one panel) or marginal (one per class)
  double p = 1.0;                                     ///< order of the error terms shown
  Binning binning = Binning::equal_width;
  std::optional<std::size_t> bins = 15;  ///< bins per panel; empty = Doane's formula per panel
  std::optional<double> bandwidth;       ///< the curve's h; empty = the paper's automatic choice
  double level = 0.95;                   ///< probability of the per-bin Wilson intervals
  std::size_t curve_points = 401;        ///< points of the curve over the observed scores (>= 2)
  ExecutionOptions execution;
};

/// One diagram: a score (top-label confidence, P(y = 1), or one class's probability) against its label.
struct ReliabilityPanel {
  std::size_t bin_count = 0;              ///< bins of the binning (occupied or not)
  std::vector<ReliabilityBin> bins;       ///< occupied bins, increasing
  std::vector<double> lower, upper;       ///< Wilson interval of each occupied bin's label frequency
  std::vector<double> curve_x, curve_y;   ///< the paper's kernel estimate of E[y | score], observed range
  double ece_bin = 0;                     ///< binned CE_p^p (marginal: this class's term)
  double ece_kde = 0;                     ///< the paper's ECE^KDE CE_p^p at `bandwidth` (marginal: class term)
};

struct ReliabilityFigure {
  CalibrationType type = CalibrationType::top_label;
  double p = 1, bandwidth = 0, level = 0.95;
  std::vector<ReliabilityPanel> panels;
};

/// The data of the reliability diagram(s) of `type`. Throws Error on bad input or a type without
/// diagrams (canonical).
ReliabilityFigure reliability_figure(ProbsView probs, LabelsView labels, const ReliabilityOptions& options = {});

/// The Wilson score interval of a binomial proportion observed as `frequency` in `count` > 0 trials, at
/// two-sided probability `level`: (f + z^2/2n -/+ z sqrt(f(1-f)/n + z^2/4n^2)) / (1 + z^2/n).
std::pair<double, double> wilson_interval(double frequency, std::size_t count, double level);

}  // namespace ecekde
