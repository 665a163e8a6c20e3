// Histograms behind the binned estimators: bin edges per coordinate, and the occupied cells of the grid
// they form (one coordinate: the bins themselves; K coordinates: the binned simplex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ecekde/binned.hpp"

namespace ecekde::detail {

/// n samples with `dim` scores each, and per sample the one coordinate whose label is 1 (or -1 when
/// none is: a wrong top-label prediction, a negative binary or one-class sample).
struct ScoredSamples {
  std::size_t n = 0, dim = 0;
  std::vector<double> score;      // n x dim, row-major
  std::vector<std::int32_t> hit;  // n

  double at(std::size_t i, std::size_t d) const { return score[i * dim + d]; }
};

/// B + 1 non-decreasing edges, edges[0] = 0, edges[B] = 1. Equal width: b / B (correctly rounded).
/// Equal mass: edges[b] = the score of rank floor(b n / B) (0-based) among the sorted scores, so a run
/// of equal scores that straddles a nominal boundary goes entirely to the upper bin.
std::vector<double> bin_edges(std::span<const double> scores, Binning binning, std::size_t bins);

/// The bin of score s: the largest b < B with edges[b] <= s (so s = 1 lands in the last bin).
std::uint32_t bin_of(const std::vector<double>& edges, double s);

/// The occupied cells of the grid of per-coordinate bins, in lexicographic order of their bins.
struct Cells {
  std::size_t dim = 0, count = 0;
  std::vector<std::uint32_t> bins;   // count x dim
  std::vector<std::size_t> size;     // samples per cell
  std::vector<double> score_sum;     // count x dim
  std::vector<double> label_sum;     // count x dim: samples of the cell whose hit is d
  std::vector<std::size_t> cell_of;  // sample -> cell

  double mean_score(std::size_t c, std::size_t d) const { return score_sum[c * dim + d] / static_cast<double>(size[c]); }
  double mean_label(std::size_t c, std::size_t d) const { return label_sum[c * dim + d] / static_cast<double>(size[c]); }
};

/// Groups the samples by their bin vector (a hash map keyed by it: only occupied cells are stored).
Cells make_cells(const ScoredSamples& samples, const std::vector<std::vector<double>>& edges);

/// The cells' label sums (count x dim) for the samples' hits `hit` (-1: none): the data's, or those of
/// other labels on the same cells.
std::vector<double> label_sums(const Cells& cells, std::span<const std::int32_t> hit);

}  // namespace ecekde::detail
