// The three-class simplex view of the paper's Figure 1: (a) the predictions on the simplex with the bin
// grid of the binned estimator, (b) the binned simplex histogram (samples per cell), (c) the density of
// the predictions estimated with the Dirichlet kernel of ECE^KDE.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ecekde/binned.hpp"

namespace ecekde::plot {

/// A point of the simplex of three classes: (f_0, f_1, f_2), summing to 1.
using Simplex3 = std::array<double, 3>;

/// The polygon of the simplex where every class c lies in [edges[c][b_c], edges[c][b_c + 1]], b = bins:
/// a canonical binned cell (a triangle when every class has the same equal-width bins). Empty if the
/// cell does not meet the simplex.
std::vector<Simplex3> cell_polygon(const std::vector<std::vector<double>>& edges, const std::vector<std::uint32_t>& bins);

struct SimplexFigure {
  std::string title;                      ///< rich_text markup
  std::array<std::string, 3> class_names; ///< shown at the corners (f = e_c)
  // (a) the predictions
  std::vector<Simplex3> points;           ///< drawn as dots, coloured by label
  std::vector<std::size_t> point_labels;  ///< 0, 1, 2
  std::string scatter_subtitle;
  // (b) the binned histogram: the cells and bin edges of a canonical BinnedResult
  std::vector<std::vector<double>> edges;
  std::vector<SimplexCell> cells;
  std::string histogram_subtitle;
  // (c) the kernel density: log density at ecekde::simplex_grid(grid), the order simplex_svg reads it in
  std::size_t grid = 0;
  std::vector<double> log_density;
  std::string density_subtitle;
};

/// The figure as an SVG document, three panels side by side.
std::string simplex_svg(const SimplexFigure& figure);

}  // namespace ecekde::plot
