// MMCE, the maximum mean calibration error of Kumar, Sarawagi & Jain (ICML 2018): a kernel measure of
// top-label calibration, with its gradient so that training can use it as a regulariser.
// See docs/metrics.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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

/// MMCE prepared for resampling, as BinnedStatistic: the input is read, checked and reduced to each
/// sample's confidence, top-label class and correctness once, so that the statistic of a bootstrap resample
/// or a relabelled copy costs O(n log n) instead of a copy and a check of the n x K input. Each value is
/// bitwise mmce(...).mmce_squared of the resampled rows or of the data with the other labels. Thread-safe.
class MmceStatistic {
 public:
  /// Throws Error with a one-line message on bad input, as mmce().
  MmceStatistic(ProbsView probs, LabelsView labels, const MmceOptions& options = {});
  /// MMCE without gradients from each sample's top-label confidence and hits[i] = 1 where its label is its
  /// top class, as the ranks of a distributed run gather them; k is the input's column count (result().k).
  /// The values are bitwise those of the predictions themselves.
  MmceStatistic(std::span<const double> confidence, std::span<const std::uint8_t> hits, std::size_t k,
                const MmceOptions& options);
  /// MMCE (with its gradients if the options ask) on the data as given.
  const MmceResult& result() const { return result_; }
  /// mmce_squared on these rows of the data, repeats allowed (a bootstrap resample).
  double resampled(std::span<const std::size_t> rows) const;
  /// mmce_squared of the data with these labels instead of its own (a relabelled copy).
  double relabelled(LabelsView labels) const;
  /// mmce_squared of the data whose labels hit their top class where hits[i] = 1.
  double relabelled_hits(std::span<const std::uint8_t> hits) const;

 private:
  MmceOptions options_;
  std::size_t k_ = 0;
  std::vector<double> r_;          // top-label confidence
  std::vector<std::size_t> top_;   // top-label class
  std::vector<bool> correct_;      // top_ equals the label
  MmceResult result_;
};

}  // namespace ecekde
