// Test-set metrics of the training study, computed with the ecekde library from logits (no LibTorch).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ecekde/binned.hpp"

namespace ecekde::train {

/// Options of evaluate().
struct EvaluationOptions {
  std::size_t ece_bins = 15;         ///< equal-mass bins of the top-label ECE^bin
  std::size_t bootstrap = 100;       ///< resamples of its percentile interval; 0 = no interval
  double level = 0.95;               ///< central probability of that interval
  std::uint64_t seed = 0;            ///< of the resampling
  std::size_t diagram_bins = 15;     ///< equal-width bins of the top-label reliability diagram
  bool kde = true;                   ///< estimate ECE^KDE (the costly part: O(n^2) per bandwidth)
  int threads = 0;                   ///< 0 = every hardware thread
};

/// Metrics of n predictions of K classes.
struct Metrics {
  double accuracy = 0;          ///< fraction whose argmax (ties: lowest class) equals the label
  double nll = 0;               ///< mean -log p_y
  double brier = 0;             ///< mean over samples of sum_k (p_k - [y = k])^2 (in [0, 2])
  double ece_kde = NAN;         ///< canonical L1 ECE^KDE (Eq. 9 of the paper), LOO-likelihood bandwidth
  double ece_kde_bandwidth = NAN; ///< the bandwidth chosen for it (both NaN when not estimated)
  double ece_bin = 0;           ///< top-label L1 ECE^bin, equal-mass bins, classic per-bin form
  double ece_bin_lower = 0;     ///< percentile bootstrap interval of ece_bin (equal to it without resamples)
  double ece_bin_upper = 0;
  std::vector<ReliabilityBin> reliability;  ///< top-label, equal-width bins, occupied bins only
};

/// Metrics of softmax(logits / temperature), logits n x K row-major.
Metrics evaluate(std::span<const double> logits, std::span<const std::int64_t> labels, double temperature = 1,
                 const EvaluationOptions& options = {});

/// softmax(logits / temperature) row by row, n x K row-major.
std::vector<double> softmax(std::span<const double> logits, std::size_t k, double temperature = 1);

/// Metrics of a binary classifier's P(y = 1).
struct BinaryMetrics {
  double accuracy = 0;         ///< fraction with (f > 1/2) == y
  double mse = 0;              ///< mean (f - y)^2, the risk of Eq. 6
  double ce2 = 0;              ///< L2 ECE^KDE of the one-column problem: (mean_j (E^[y|f_j] - f_j)^2)^(1/2)
  double ce2_bandwidth = 0;    ///< its LOO-likelihood Beta-kernel bandwidth
};

/// Metrics of the probabilities p (each in [0, 1]) against 0/1 labels.
BinaryMetrics evaluate_binary(std::span<const double> p, std::span<const std::int64_t> labels, int threads = 0);

}  // namespace ecekde::train
