// Training a network on a Dataset and predicting with it. The interface holds no LibTorch types, so
// that front ends compile without its headers; the implementation (trainer.cpp) uses LibTorch.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "ecekde/train/fashion_mnist.hpp"
#include "ecekde/train/options.hpp"

namespace ecekde::train {

/// What one epoch did. Loss terms are means over the epoch's batches.
struct EpochRecord {
  int epoch = 0;                   ///< 1-based
  double loss = 0;                 ///< the objective
  double base = 0;                 ///< its data term (XE, focal loss, MSE)
  double regularizer = 0;          ///< its unweighted calibration term (0 for none)
  double bandwidth = 0;            ///< mean per-batch bandwidth of the regulariser (0 for none)
  double used_share = 1;           ///< kde-xe-debiased: mean share of a batch's rows in its mean (else 1)
  double train_accuracy = 0;       ///< on the training batches, in training mode, as they were seen
  bool validated = true;           ///< false: validation skipped this epoch (TrainOptions::validate_every)
  double validation_accuracy = 0;  ///< after the epoch, in evaluation mode (NaN when not validated)
  double validation_loss = 0;      ///< validation NLL (binary: MSE) after the epoch (NaN when not validated)
  double seconds = 0;              ///< wall time of the epoch's training steps (validation excluded)
};

/// A trained network's outputs.
struct TrainedPredictions {
  std::size_t columns = 0;                  ///< logits per example: classes, or 1 for a binary objective
  std::vector<double> validation_logits;    ///< validation.size() x columns, row-major
  std::vector<double> test_logits;          ///< test.size() x columns
  std::vector<EpochRecord> history;
  std::size_t parameters = 0;               ///< trainable parameters of the network
};

using EpochCallback = std::function<void(const EpochRecord&)>;

/// Trains a network by `options` on `train` (binary objectives: 0/1 labels, e.g. from binary_task) and
/// predicts `validation` and `test`. Deterministic for a given seed and thread count. Calls
/// `on_epoch` after every epoch. Throws ecekde::Error on bad options, too few training examples for one
/// batch, or a loss that is not finite.
TrainedPredictions train_and_predict(const Dataset& train, const Dataset& validation, const Dataset& test,
                                     const TrainOptions& options, const EpochCallback& on_epoch = {});

/// Per-step wall times of two objectives on the same network and batches, measured alternately so that
/// a changing machine load affects both alike.
struct StepTimes {
  std::vector<double> first, second;  ///< seconds of each timed step
};

/// Runs `warmup` untimed and then `steps` timed training steps of `first` and of `second` (each its own
/// network, from the same seed), alternating. Only the objectives of the two options may differ.
StepTimes time_steps(const Dataset& train, const TrainOptions& first, const TrainOptions& second, int steps,
                     int warmup = 5);

}  // namespace ecekde::train
