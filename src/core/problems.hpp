// The kernel problems behind each calibration type. Every type reduces to one or more problems
// "points x_j on a simplex with integer labels": canonical is one problem on f with labels y; binary,
// top-label and each marginal class are one-dimensional problems on x = (s, 1 - s) with 0/1 labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/inputs.hpp"
#include "core/sweep.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

/// Points sorted by label, so that each class is a contiguous run of centres.
struct LabelledPoints {
  KernelPoints points;
  std::size_t classes = 0;               // L
  std::vector<std::size_t> class_begin;  // L + 1 run boundaries
  std::vector<std::size_t> original;     // sorted position -> input row
  bool one_dimensional = false;          // x = (s, 1 - s), labels 0/1; the error compares r_1 with s

  /// Sorts rows of the row-major n x dim array x by label (stable) and prepares them.
  static LabelledPoints make(const std::vector<double>& x, std::size_t dim,
                             const std::vector<std::int32_t>& labels, std::size_t classes,
                             bool one_dimensional);

  /// The class of centre i (sorted position).
  std::size_t label(std::size_t i) const;
};

/// The column of row j's largest probability; ties go to the lowest index.
std::size_t top_index(const CheckedPredictions& pred, std::size_t j);

/// The problems of `type` on validated predictions, in a fixed order (marginal: class 0, 1, ...).
std::vector<LabelledPoints> make_problems(const CheckedPredictions& pred, CalibrationType type);

/// Checks that `type` applies to predictions with k columns.
void check_type_applies(CalibrationType type, std::size_t k);

/// What each problem's mean per-row error is multiplied by before summing over problems.
double problem_weight(CalibrationType type);

}  // namespace ecekde::detail
