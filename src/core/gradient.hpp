// Internal entry points of the gradient (for the torch operator, training code and tests).
#pragma once

#include <vector>

#include "core/estimate_steps.hpp"
#include "ecekde/gradient.hpp"

namespace ecekde::detail {

struct ProblemGradient {
  double value = 0;          // weight * mean row error
  std::vector<double> grad;  // n x dim, input order: d value / d x_jk
};

/// One problem's weighted mean error and its gradient with respect to every feature x_jk.
ProblemGradient problem_gradient(const LabelledPoints& lp, double h, double p, double weight,
                                 const SweepPlan& plan);

struct ValueGradient {
  double ce_pow_p = 0;
  std::vector<double> class_values;  // one per problem
  std::vector<double> grad;          // n x k row-major, input order
};

/// CE_p^p of `type` and its gradient with respect to every entry of pred.f, each a free variable
/// (no validation: pred may lie off the simplex, as finite differences need).
ValueGradient value_and_gradient(const CheckedPredictions& pred, const std::vector<LabelledPoints>& problems,
                                 CalibrationType type, double h, double p, const SweepPlan& plan);

/// The GradientResult of an estimate and its CE_p^p gradient: adds the gradient of CE_p.
GradientResult with_gradient(Result r, std::vector<double> grad_ce_pow_p);

/// estimate_with_gradient() from each rank's own rows: the canonical type on the ring (two passes; the
/// second carries each block's centre sums round and back home). Each rank gets the value (the same on every
/// rank, within 1e-12 relative of one process's) and the gradient's rows of its own rows.
GradientResult own_rows_gradient(ProbsView probs, LabelsView labels, const EstimateOptions& options);

}  // namespace ecekde::detail
