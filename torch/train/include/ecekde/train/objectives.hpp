// The training losses of the study (LibTorch, differentiable with respect to the logits).
#pragma once

#include <ATen/core/Tensor.h>

#include "ecekde/train/options.hpp"

namespace ecekde::train {

/// One evaluation of a training loss on a batch.
struct Loss {
  at::Tensor total;        ///< the scalar to minimise (dtype of the logits)
  double base = 0;         ///< its data term: XE, focal loss or MSE
  double regularizer = 0;  ///< the unweighted calibration term (ECE^KDE, MMCE_w, sharpness), 0 for none
  double bandwidth = 0;    ///< the kernel bandwidth the regulariser used (0 for none or MMCE)
};

/// The loss `options.objective` of `logits` (n x K; n x 1 or n for the binary objectives) against
/// `labels` (n class indices, int64; 0/1 for the binary ones). Regularisers are computed in float64 from
/// the softmax (sigmoid) of the logits; `threads` is passed to the ECE^KDE operator. Throws ecekde::Error
/// or c10::Error on bad input.
Loss compute_loss(const at::Tensor& logits, const at::Tensor& labels, const ObjectiveOptions& options,
                  int threads = 1);

/// MMCE_w of ecekde::mmce (weighted, Laplacian kernel of width `width`) as a differentiable tensor:
/// forward and gradient come from the library (the argmax of each row is held fixed).
at::Tensor mmce_weighted(const at::Tensor& probs, const at::Tensor& labels, double width = 0.4);

/// The partially debiased estimate of E[E[y|f]^2] (Eq. 7 of the paper) with the Beta kernel of
/// bandwidth h, differentiable in the logits z (f = sigmoid(z); log f and log(1 - f) are taken from z
/// directly, so saturated predictions stay finite). Per row j the leave-one-out sums over i != j form
///   ((sum_i k_ji y_i)^2 - sum_i k_ji^2 y_i) / ((sum_i k_ji)^2 - sum_i k_ji^2),
/// a ratio in [0, 1] (0 where a row has fewer than two neighbours of non-zero weight); the estimate is
/// their mean. Needs n >= 3.
at::Tensor debiased_sharpness(const at::Tensor& logits, const at::Tensor& labels, double h);

}  // namespace ecekde::train
