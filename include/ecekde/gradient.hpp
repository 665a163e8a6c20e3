// Analytic gradients of ECE^KDE with respect to the predicted probabilities.
#pragma once

#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde {

/// estimate() together with its gradient. Every entry of the probability matrix is treated as a free
/// variable (the chain rule through softmax belongs to the caller); the bandwidth is a constant (chosen
/// first, on the same data, when automatic). Conventions at non-differentiable points (docs/estimator.md, Gradients):
/// d|t|^p/dt = 0 at t = 0; top-label holds each row's argmax fixed; probabilities below DBL_MIN have
/// zero derivative through the kernel's logarithm (where it is clamped).
struct GradientResult {
  Result result;
  std::vector<double> grad_ce_pow_p;  ///< d CE_p^p / d probs, n x K row-major (K = 1 for one column)
  std::vector<double> grad_ce;        ///< d CE_p / d probs; 0 where CE_p^p = 0 and p > 1
};

GradientResult estimate_with_gradient(ProbsView probs, LabelsView labels, const EstimateOptions& options = {});

}  // namespace ecekde
