// estimate() for ranks that each pass only their own rows (ExecutionOptions::own_rows; ring.hpp).
#pragma once

#include "ecekde/estimate.hpp"

namespace ecekde::detail {

/// The paper's canonical estimate from each rank's own rows, the same Result on every rank. Throws, on
/// every rank, for the options it does not support, ranks that disagree, and bad rows on any rank.
Result own_rows_estimate(ProbsView probs, LabelsView labels, const EstimateOptions& options);

}  // namespace ecekde::detail
