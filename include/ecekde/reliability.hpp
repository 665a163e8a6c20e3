// What a reliability diagram shows, computed once for every front end (the CLI's SVG, ecekde.plot's
// matplotlib): per panel the occupied bins with Wilson intervals of their label frequency, the kernel
// estimate of E[y | score] as a curve, and the panel's binned and ECE^KDE error terms. The same for the
// simplex view of three classes: the binned histogram's cells and the kernel density of the predictions.
#pragma once

#include <array>
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

/// Options of simplex_figure() (option table: options::simplex_options()).
struct SimplexOptions {
  double p = 1.0;                   ///< order of the error terms shown
  std::size_t bins = 10;            ///< equal-width bins per class of the binned histogram (>= 1)
  std::optional<double> bandwidth;  ///< the Dirichlet kernel's h; empty = the paper's automatic choice
  std::size_t grid = 48;            ///< segments per side of the triangular grid of the density (>= 1)
  ExecutionOptions execution;
};

/// What the simplex view of three classes shows (cf. Figure 1 of the paper): the canonical binned
/// estimate on equal-width bins (its cells are the histogram) and the paper's Dirichlet kernel density of
/// the predictions, read at the centroids of a triangular grid, with both error terms.
struct SimplexFigure {
  double p = 1, bandwidth = 0;
  BinnedResult binned;  ///< canonical, options.bins equal-width bins per class: edges, cells, ce_pow_p
  double ece_kde = 0;   ///< the paper's canonical CE_p^p at `bandwidth`
  std::size_t grid = 0;
  std::vector<std::array<double, 3>> points;  ///< simplex_grid(grid)
  std::vector<double> log_density;  ///< log kernel density at each point, per unit of (f_0, f_1) area
};

/// The centroids of the m^2 triangles that cut the simplex of three classes into a grid of m segments per
/// side. Lattice point (i, j) is ((m - i - j) / m, i / m, j / m); for each j, then each i, the upward
/// triangle (i, j), (i + 1, j), (i, j + 1), then the downward one (i + 1, j), (i, j + 1), (i + 1, j + 1)
/// where it lies inside.
std::vector<std::array<double, 3>> simplex_grid(std::size_t m);

/// The data of the simplex view of `probs` (n x 3). Throws Error on bad input or another number of classes.
SimplexFigure simplex_figure(ProbsView probs, LabelsView labels, const SimplexOptions& options = {});

/// The Wilson score interval of a binomial proportion observed as `frequency` in `count` > 0 trials, at
/// two-sided probability `level`: (f + z^2/2n -/+ z sqrt(f(1-f)/n + z^2/4n^2)) / (1 + z^2/n).
std::pair<double, double> wilson_interval(double frequency, std::size_t count, double level);

}  // namespace ecekde
