// MMCE, the maximum mean calibration error of Kumar, Sarawagi & Jain (ICML 2018): a kernel measure of
// top-label calibration, with its gradient so that training can use it as a regulariser.
// See docs/metrics.md.
#pragma once

#include <cstddef>
#include <vector>

#include "ecekde/data.hpp"

namespace ecekde {

/// Options of mmce().
struct MmceOptions {
  /// false: MMCE^2 = (1/n^2) sum_ij (c_i - r_i)(c_j - r_j) k(r_i, r_j).
  /// true: the weighted MMCE_w^2, which normalises correct and wrong predictions by their own counts.
  bool weighted = false;
  double kernel_width = 0.4;  ///< w of the Laplacian kernel k(r, r') = exp(-|r - r'| / w)
  bool gradient = true;       ///< also compute the gradients (n x K each)
};

/// MMCE and its gradients.
struct MmceResult {
  double mmce_squared = 0;  ///< MMCE^2 (or MMCE_w^2): a squared RKHS norm, >= 0 up to rounding
  double mmce = 0;          ///< sqrt(max(mmce_squared, 0)): the value the paper reports and trains with
  std::size_t n = 0, k = 0;
  std::size_t correct = 0;  ///< samples whose argmax equals the label
  /// d mmce / d probs, n x K row-major in the input's row order; only the argmax column of a row is
  /// non-zero (the argmax is held fixed). All zero when mmce is 0.
  std::vector<double> gradient;
  /// d mmce_squared / d probs, laid out as gradient.
  std::vector<double> gradient_squared;
};

/// MMCE of the predictions `probs` (n x K, K >= 2, rows summing to 1) against `labels`, on the top-label
/// confidences r_i = max_c probs(i, c) and correctness c_i = 1[argmax_c probs(i, c) = labels_i] (ties to
/// the lowest class). O(n log n): the Laplacian kernel's sums are running sums over sorted confidences.
/// Throws Error with a one-line message on bad input.
MmceResult mmce(ProbsView probs, LabelsView labels, const MmceOptions& options = {});

}  // namespace ecekde
