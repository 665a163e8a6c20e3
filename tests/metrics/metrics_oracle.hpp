// Plain implementations of the metrics, written straight from their definitions with no shared code with
// the library: linear scans instead of binary searches, O(n^2) cell membership instead of a hash map,
// a double loop over pairs instead of running sums.
#pragma once

#include <cstddef>
#include <vector>

#include "ecekde/binned.hpp"
#include "oracle.hpp"

namespace metrics_oracle {

/// Equal width: e_b = b / B. Equal mass: e_b = sorted score of rank floor(b n / B); e_0 = 0, e_B = 1.
std::vector<double> edges(const std::vector<double>& scores, ecekde::Binning binning, std::size_t bins);
/// Number of inner edges e_1 .. e_{B-1} at or below s.
std::size_t bin_of(const std::vector<double>& edges, double s);

/// Per-coordinate scores and 0/1 labels of a calibration type (one coordinate for top-label and binary,
/// one problem per class for marginal, one problem with K coordinates for canonical).
struct Problem {
  std::vector<std::vector<double>> score;  // [sample][coordinate]
  std::vector<std::vector<double>> label;  // [sample][coordinate], 0 or 1
};
std::vector<Problem> problems(const oracle::Data& d, ecekde::CalibrationType type);

/// The binned estimate with the given bin counts per coordinate (for marginal: the same list for every
/// class, indexed by class).
double binned(const oracle::Data& d, ecekde::CalibrationType type, ecekde::Binning binning,
              const std::vector<std::size_t>& bins, ecekde::BinnedForm form, double p, bool maximum);

/// MMCE^2 and d MMCE^2 / d r_i by the double loop (sign(0) = 0).
struct Mmce {
  double squared = 0;
  std::vector<double> d_squared;  // per sample, w.r.t. its top-label confidence
};
Mmce mmce(const oracle::Data& d, bool weighted, double width);

/// Mean NLL of softmax(z / T) for row-major n x k logits z.
double nll(const std::vector<double>& z, std::size_t k, const std::vector<int>& y, double T);

}  // namespace metrics_oracle
