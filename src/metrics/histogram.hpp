// Histograms behind the binned estimators: bin edges per coordinate, and the occupied cells of the grid
// they form (one coordinate: the bins themselves; K coordinates: the binned simplex).
#pragma once

#include <algorithm>
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

/// doane_bins() of each column of an n x dim row-major array, in one pass over its rows per moment.
std::vector<std::size_t> doane_bins_of_columns(const double* x, std::size_t n, std::size_t dim);

/// BinnedResult::ce of ce_pow_p: the value itself for the maximum, sqrt(max(v, 0)) for the debiased form,
/// v^(1/p) otherwise. The increasing map that also takes a binned statistic's interval to its ce.
double binned_ce(double ce_pow_p, bool maximum, BinnedForm form, double p);

/// How a binned estimate adds up its problems' values (marginal: one per class): their sum (L_p), or their
/// largest (maximum), starting from 0.
inline double combined(double total, double value, bool maximum) {
  return maximum ? std::max(total, value) : total + value;
}

/// Doane's bin count of n scores whose central moments sum to m2 and m3 (sums of d^2 and d^3 over the
/// scores' deviations from their mean): the formula of doane_bins().
std::size_t doane_of_moments(std::size_t n, double m2, double m3);

/// B + 1 non-decreasing edges, edges[0] = 0, edges[B] = 1. Equal width: b / B (correctly rounded).
/// Equal width reads no scores (they may be empty). Equal mass: edges[b] = the score of rank floor(b n / B) (0-based) among the sorted scores, so a run
/// of equal scores that straddles a nominal boundary goes entirely to the upper bin.
std::vector<double> bin_edges(std::span<const double> scores, Binning binning, std::size_t bins);

/// The bin of score s: the largest b < B with edges[b] <= s (so s = 1 lands in the last bin).
std::uint32_t bin_of(const std::vector<double>& edges, double s);

/// The cells' label sums: per cell, the coordinates that some sample's hit names, in increasing order,
/// with how many of the cell's samples hit each. Every other sum is zero: at K = 1,000 a cell's dense row
/// of them was 8 KB, nearly all zeros, made afresh for each bootstrap replicate.
struct LabelSums {
  std::vector<std::size_t> begin;     // cell c's entries are [begin[c], begin[c + 1])
  std::vector<std::uint32_t> coord;   // the coordinate of each entry
  std::vector<double> count;          // its sum
};

/// One cell's mean labels (label sum / cell size, 0 where no hit names the coordinate), read in
/// increasing order of coordinate, each at most once.
class MeanLabels {
 public:
  MeanLabels(const LabelSums& sums, std::size_t cell, std::size_t size)
      : sums_(&sums), next_(sums.begin[cell]), end_(sums.begin[cell + 1]), size_(static_cast<double>(size)) {}

  double operator()(std::size_t d) {
    if (next_ < end_ && sums_->coord[next_] == d) return sums_->count[next_++] / size_;
    return 0.0;
  }

 private:
  const LabelSums* sums_;
  std::size_t next_, end_;
  double size_;
};

/// The occupied cells of the grid of per-coordinate bins, in lexicographic order of their bins.
struct Cells {
  std::size_t dim = 0, count = 0;
  std::vector<std::uint32_t> bins;   // count x dim (empty when not asked for: CellParts)
  std::vector<std::size_t> size;     // samples per cell
  std::vector<double> score_sum;     // count x dim (empty when not asked for)
  LabelSums labels;                  // the samples' hits per cell
  std::vector<std::size_t> cell_of;  // sample -> cell

  double mean_score(std::size_t c, std::size_t d) const { return score_sum[c * dim + d] / static_cast<double>(size[c]); }
  MeanLabels mean_labels(std::size_t c, const LabelSums& sums) const { return {sums, c, size[c]}; }
  MeanLabels mean_labels(std::size_t c) const { return mean_labels(c, labels); }
};

/// What make_cells() fills besides the cells' samples and label sums: their bins and score sums (count x
/// dim each, which a resampled per-sample estimate at K = 1,000 does not read).
struct CellParts {
  bool bins = true, score_sums = true;
};

/// Groups the samples by their bin vector (a hash map keyed by it: only occupied cells are stored).
Cells make_cells(const ScoredSamples& samples, const std::vector<std::vector<double>>& edges, CellParts parts = {});

/// A sample's cell as two independent 64-bit hashes of its bin vector: samples share a cell exactly when
/// their fingerprints are equal, unless two of the n(n - 1)/2 pairs of different cells collide in 128 bits
/// (about n^2 / 2^129: 10^-27 at n = 10^6). What the ranks of a distributed run exchange instead of bin
/// vectors (K values each).
struct CellFingerprint {
  std::uint64_t a = 0, b = 0;
  bool operator==(const CellFingerprint&) const = default;
};

/// Each sample's CellFingerprint under `edges` (one per coordinate).
std::vector<CellFingerprint> cell_fingerprints(const ScoredSamples& samples, const std::vector<std::vector<double>>& edges);

/// The cells' label sums for the samples' hits `hit` (-1: none): the data's, or those of other labels on
/// the same cells.
LabelSums label_sums(const Cells& cells, std::span<const std::int32_t> hit);

}  // namespace ecekde::detail
