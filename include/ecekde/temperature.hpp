// Temperature scaling (Guo et al. 2017): one T > 0 that divides every logit, fitted by the mean negative
// log-likelihood on validation data. See docs/metrics.md.
#pragma once

#include <cstddef>
#include <vector>

#include "ecekde/data.hpp"

namespace ecekde {

/// Options of fit_temperature().
struct TemperatureOptions {
  double min_temperature = 1e-3;  ///< the search interval [min, max] for T
  double max_temperature = 1e3;
};

/// A fitted temperature.
struct TemperatureFit {
  double temperature = 1;  ///< the T minimising the mean NLL of softmax(logits / T) within the interval
  double nll = 0;          ///< mean NLL at that T
  double nll_at_one = 0;   ///< mean NLL at T = 1 (the unscaled model)
  int iterations = 0;      ///< NLL evaluations of the search
  /// The minimum lies at (or beyond) an end of the interval: the NLL still decreases toward it, e.g.
  /// T -> 0 when every prediction is right, T -> infinity when the logits are worse than uniform.
  bool at_bound = false;
};

/// Fits T on `logits` (n x K, n >= 1, K >= 2, finite; log-probabilities work alike, since a per-row
/// constant does not change the softmax) and `labels` in [0, K). Throws Error on bad input.
TemperatureFit fit_temperature(ProbsView logits, LabelsView labels, const TemperatureOptions& options = {});

/// softmax(logits / T) row by row: n x K probabilities, row-major. Throws Error on bad input.
std::vector<double> apply_temperature(ProbsView logits, double temperature);

}  // namespace ecekde
