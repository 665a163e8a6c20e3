// The training losses of the study (LibTorch, differentiable with respect to the logits).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "ecekde/train/options.hpp"

namespace ecekde::train {

/// One evaluation of a training loss on a batch.
struct Loss {
  at::Tensor total;        ///< the scalar to minimise (dtype of the logits)
  double base = 0;         ///< its data term: XE, focal loss or MSE
  double regularizer = 0;  ///< the unweighted calibration term (ECE^KDE, MMCE_w, sharpness), 0 for none
  double used_share = 1;   ///< kde-xe-debiased: the share of rows that entered the mean (1 otherwise)
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

/// The debiased canonical CE_2^2 of the batch with the Dirichlet kernel of bandwidth h: the value of
/// ecekde::estimate with estimator paper, form debiased, p = 2 (docs/estimator.md, "debiased"), written in
/// LibTorch operations so that autograd differentiates it in the logits z (n x K, f = softmax(z); log f is
/// log_softmax(z), so saturated rows stay finite). Per row j, with kernel weights
/// w_i = Dir(f_j; f_i / h + 1) of the other rows i != j, D = sum_i w_i, S = sum_i w_i^2,
/// N_c = sum_i w_i [y_i = c] and Q_c = sum_i w_i^2 [y_i = c]:
///   U_j = sum_c ((N_c - f_jc D)^2 - Q_c (1 - 2 f_jc) - f_jc^2 S) / (D^2 - S),
/// the label noise's pairs i = k left out of the square (a U-statistic in the neighbours). The estimate is
/// the mean of U_j over the rows whose weight does not rest on a single neighbour (D^2 - S > 1e-6 D^2, the
/// library's rule; chosen on the detached weights); it can be negative. `used_rows`, when given, receives
/// how many rows entered the mean; with none it is 0 (and its gradient 0). Needs n >= 3.
at::Tensor debiased_canonical_error(const at::Tensor& logits, const at::Tensor& labels, double h,
                                    std::int64_t* used_rows = nullptr);

}  // namespace ecekde::train
