// ECE^KDE as a LibTorch autograd operator: the calibration error of a batch of predicted probabilities,
// differentiable with respect to the probabilities (docs/torch.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <ATen/core/Tensor.h>

#include "ecekde/estimate.hpp"

namespace ecekde::torch {

struct CalibrationErrorOptions {
  ecekde::CalibrationType type = ecekde::CalibrationType::canonical;
  double p = 1.0;                              ///< order of the norm, p >= 1
  std::optional<double> bandwidth;             ///< fixed h; empty = LOO-likelihood choice on the detached batch
  ecekde::BandwidthOptions bandwidth_selection;
  bool root = false;                           ///< false: CE_p^p (what the paper trains with); true: CE_p
  int threads = 0;                             ///< 0 = all cores
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
