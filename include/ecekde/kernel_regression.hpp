// The kernel estimates behind ECE^KDE read at arbitrary points: the density of the predictions and the
// estimate of E[y | f = x], i.e. the calibration map the estimator compares f with.
#pragma once

#include <cstddef>
#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde {

struct KernelRegression {
  CalibrationType type = CalibrationType::canonical;
  double bandwidth = 0;
  std::size_t queries = 0;
  std::size_t columns = 0;               ///< canonical: K; marginal: K (one per class); top-label, binary: 1
  std::vector<double> log_density;       ///< queries x columns: log (1/n) sum_i k_h(x_q; x_i)
  std::vector<double> expectation;       ///< queries x columns: sum_i k_h(x_q; x_i) y_i / sum_i k_h(x_q; x_i)
};

/// Reads the kernel estimates of `type` at `queries`, using every sample (no point is left out).
/// canonical: queries are Q x K points on the simplex; expectation row q is the estimate of E[y | f = x_q]
/// (its log density is repeated in every column). marginal, top-label, binary: queries are Q x 1 scores in
/// [0, 1]; column c of the result is the estimate of E[1[y = c] | f_c = s] (marginal), of
/// P(y = argmax f | max f = s) (top-label: the smooth reliability curve) or of P(y = 1 | p = s) (binary).
/// The bandwidth is options.bandwidth, or chosen on the data as estimate() would.
KernelRegression kernel_regression(ProbsView probs, LabelsView labels, ProbsView queries,
                                   const EstimateOptions& options = {});

}  // namespace ecekde
