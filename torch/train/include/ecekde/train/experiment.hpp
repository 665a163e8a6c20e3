// One run of the training study: load Fashion-MNIST, train, fit a temperature on the validation split,
// evaluate validation and test before and after it, and write the result. No LibTorch in this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ecekde/train/evaluate.hpp"
#include "ecekde/train/fashion_mnist.hpp"
#include "ecekde/train/options.hpp"
#include "ecekde/train/trainer.hpp"

namespace ecekde::train {

struct ExperimentOptions {
  TrainOptions train;
  std::string data_dir = std::string(kFashionMnistDir);
  std::size_t train_size = 0;       ///< use the first N examples of the training split; 0 = all
  std::size_t eval_size = 0;        ///< use the first N of validation and test; 0 = all (for quick runs)
  std::int64_t binary_negative = 0; ///< binary objectives: class relabelled 0 (T-shirt/top) ...
  std::int64_t binary_positive = 6; ///< ... and class relabelled 1 (Shirt)
  /// Test metrics; validation metrics use the same without bootstrap, and ECE^KDE only before T.
  EvaluationOptions evaluation;
};

/// Metrics before and after temperature scaling.
template <class M>
struct BeforeAfter {
  M before, after;
};

struct ExperimentResult {
  TrainedPredictions predictions;
  std::vector<std::int64_t> validation_labels, test_labels;
  double temperature = 1;            ///< fitted on the validation logits by NLL (ecekde::fit_temperature)
  bool temperature_at_bound = false;
  std::optional<BeforeAfter<Metrics>> validation, test;               ///< multiclass objectives
  std::optional<BeforeAfter<BinaryMetrics>> binary_validation, binary_test;  ///< binary objectives
  double evaluation_seconds = 0;
};

/// Runs one experiment; writes a progress line per epoch to `progress` (if not null), each starting
/// with `tag`.
ExperimentResult run_experiment(const ExperimentOptions& options, std::ostream* progress = nullptr,
                                const std::string& tag = "");

/// Writes the options and the result as JSON (the study's per-run record).
void write_result_json(const std::string& path, const ExperimentOptions& options, const ExperimentResult& result);

/// The first n examples of `data` (all of them for n = 0); throws ecekde::Error naming `option` when n
/// exceeds data.size() ("--train-size 60000 exceeds the 50000 training examples").
Dataset take_first(const Dataset& data, std::size_t n, const std::string& option, const std::string& what);

/// Writes the test probabilities before temperature scaling, PREFIX_probs.npy (float32, n x K; binary:
/// n values P(y = 1)), the labels, PREFIX_labels.npy (int64, n), and the test logits, PREFIX_logits.npy
/// (float32, shaped like the probabilities).
void save_test_predictions(const std::string& prefix, const ExperimentResult& result);

/// The one-line progress report of an epoch.
std::string format_epoch(const EpochRecord& record, int epochs);

}  // namespace ecekde::train
