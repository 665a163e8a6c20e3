// A test of the hypothesis "the predictions are calibrated" by consistency resampling (Broecker & Smith
// 2007; Vaicenavicius et al. 2019): under the hypothesis, labels drawn from the predictions themselves
// are distributed like the observed labels, so the observed statistic is compared with the statistic on
// many relabelled copies of the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde {

struct CalibrationTestOptions {
  std::size_t replicates = 100;  ///< relabelled copies (B)
  std::uint64_t seed = 0;        ///< copy b draws its labels with Rng::stream(seed, b)
};

struct CalibrationTestResult {
  double statistic = 0;            ///< on the observed labels
  double p_value = 1;              ///< (1 + #{null >= statistic}) / (B + 1)
  std::vector<double> null_values; ///< the statistic on each relabelled copy, in replicate order
  double bandwidth = 0;            ///< ECE^KDE only: the (fixed) bandwidth used for every copy
};

/// ECE^KDE (CE_p^p of options.type) as the statistic. Only the labels change between copies, so all
/// copies share one sweep; the bandwidth depends on the predictions only and is the same for all.
CalibrationTestResult calibration_test_kde(ProbsView probs, LabelsView labels, const EstimateOptions& options = {},
                                           const CalibrationTestOptions& test = {});

/// Any statistic of (probs, labels), e.g. a binned ECE; copies are evaluated in parallel on execution.threads
/// threads, so the statistic must be thread-safe.
CalibrationTestResult calibration_test(ProbsView probs, LabelsView labels,
                                       const std::function<double(ProbsView, LabelsView)>& statistic,
                                       const CalibrationTestOptions& test = {}, const ExecutionOptions& execution = {});

/// The labels of relabelled copy `replicate`: label i ~ Categorical(probs row i) (one column: Bernoulli).
std::vector<std::int64_t> consistency_labels(ProbsView probs, std::uint64_t seed, std::size_t replicate);

}  // namespace ecekde
