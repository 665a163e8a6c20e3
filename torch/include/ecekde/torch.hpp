// ECE^KDE as a LibTorch autograd operator: the calibration error of a batch of predicted probabilities,
// differentiable with respect to the probabilities (docs/torch.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <ATen/core/Tensor.h>

#include "ecekde/estimate.hpp"

namespace ecekde::torch {

/// The library's estimate options (type, p, bandwidth: fixed, or chosen on the detached batch by
/// bandwidth_selection; execution) and whether to take the root. The operator is the paper's
/// differentiable estimator whatever estimate.estimator says; its form must be plug-in.
struct CalibrationErrorOptions {
  ecekde::EstimateOptions estimate;
  bool root = false;  ///< false: CE_p^p (what the paper trains with); true: CE_p
};

/// The ECE^KDE estimate of `type` for the predictions `probs` (n x K; K = 1 holds P(y = 1) for the
/// binary type, and a 1-D tensor of n values is read as that one column) against `labels` (n class
/// indices, int64 or int32). probs: float32 or float64 on the CPU, any strides; every entry is a free
/// variable (no projection onto the simplex); rows must sum to 1 within ecekde::estimate's tolerance.
/// Returns a 0-d tensor of probs' dtype; its backward gives d/d probs (labels get no gradient), and
/// second derivatives raise an error. Throws c10::Error carrying ecekde's message on bad input.
at::Tensor calibration_error(const at::Tensor& probs, const at::Tensor& labels,
                             const CalibrationErrorOptions& options = {});

/// The bandwidth calibration_error would use for this batch: options.bandwidth when set, otherwise the
/// automatic choice of options.bandwidth_selection on probs (detached; labels are not used).
double select_bandwidth(const at::Tensor& probs, const CalibrationErrorOptions& options = {});

/// The dispatcher schema of operator `name` (calibration_error, select_bandwidth), its option arguments
/// named, typed and defaulted by the library's option table.
std::string operator_schema(std::string_view name);

}  // namespace ecekde::torch
