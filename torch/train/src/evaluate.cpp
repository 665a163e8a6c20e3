#include "ecekde/train/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ecekde/bootstrap.hpp"
#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::train {

namespace {

std::size_t check_shapes(std::span<const double> logits, std::span<const std::int64_t> labels) {
  if (labels.empty()) fail("evaluation needs at least one prediction");
  if (logits.size() % labels.size() != 0 || logits.size() / labels.size() < 2)
    fail("logits hold " + std::to_string(logits.size()) + " values, not n x K with K >= 2 for the " +
         std::to_string(labels.size()) + " labels");
  return logits.size() / labels.size();
}

std::size_t argmax(const double* row, std::size_t k) {
  return static_cast<std::size_t>(std::max_element(row, row + k) - row);
}

}  // namespace

std::vector<double> softmax(std::span<const double> logits, std::size_t k, double temperature) {
  std::vector<double> p(logits.size());
  for (std::size_t r = 0; r < logits.size() / k; ++r) {
    const double* z = &logits[r * k];
    const double top = *std::max_element(z, z + k);
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) sum += p[r * k + c] = std::exp((z[c] - top) / temperature);
    for (std::size_t c = 0; c < k; ++c) p[r * k + c] /= sum;
  }
  return p;
}

Metrics evaluate(std::span<const double> logits, std::span<const std::int64_t> labels, double temperature,
                 const EvaluationOptions& options) {
  const std::size_t k = check_shapes(logits, labels), n = labels.size();
  if (!(temperature > 0 && std::isfinite(temperature)))
    fail("temperature must be a finite number > 0, got " + std::to_string(temperature));
  const std::vector<double> p = softmax(logits, k, temperature);
  const ProbsView probs = ProbsView::row_major(p.data(), n, k);
  const LabelsView y(labels.data(), n);

  Metrics m;
  double correct = 0, nll = 0, brier = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double* row = &p[i * k];
    const double* z = &logits[i * k];
    const auto label = static_cast<std::size_t>(labels[i]);
    if (labels[i] < 0 || label >= k) fail("label " + std::to_string(labels[i]) + " of row " + std::to_string(i) +
                                          " is not in [0, " + std::to_string(k) + ")");
    correct += argmax(row, k) == label;
    // -log softmax(z / T)_y computed from the logits, so a confident mistake costs its true value.
    const double top = *std::max_element(z, z + k);
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) sum += std::exp((z[c] - top) / temperature);
    nll += std::log(sum) - (z[label] - top) / temperature;
    for (std::size_t c = 0; c < k; ++c) brier += (row[c] - (c == label)) * (row[c] - (c == label));
  }
  m.accuracy = correct / static_cast<double>(n);
  m.nll = nll / static_cast<double>(n);
  m.brier = brier / static_cast<double>(n);

  if (options.kde) {
    EstimateOptions kde;
    kde.estimator = Estimator::paper;
    kde.execution.threads = options.threads;
    const Result r = estimate(probs, y, kde);
    m.ece_kde = r.ce;
    m.ece_kde_bandwidth = r.bandwidth;
  }

  BinnedOptions bin;
  bin.binning = Binning::equal_mass;
  bin.bins = options.ece_bins;
  m.ece_bin = m.ece_bin_lower = m.ece_bin_upper = binned_calibration_error(probs, y, bin).ce;
  if (options.bootstrap > 0) {
    // Equal-mass edges are recomputed on every resample, as a fresh evaluation would.
    const auto statistic = [&](std::span<const std::size_t> rows) {
      std::vector<double> rp(rows.size() * k);
      std::vector<std::int64_t> ry(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        std::copy_n(&p[rows[i] * k], k, &rp[i * k]);
        ry[i] = labels[rows[i]];
      }
      return binned_calibration_error(ProbsView::row_major(rp.data(), rows.size(), k), LabelsView(ry), bin).ce;
    };
    BootstrapOptions b;
    b.replicates = options.bootstrap;
    b.level = options.level;
    b.seed = options.seed;
    const Interval interval = bootstrap(n, statistic, b, {.threads = options.threads});
    m.ece_bin_lower = interval.lower;
    m.ece_bin_upper = interval.upper;
  }

  BinnedOptions diagram;
  diagram.bins = options.diagram_bins;
  m.reliability = binned_calibration_error(probs, y, diagram).diagrams.at(0);
  return m;
}

BinaryMetrics evaluate_binary(std::span<const double> p, std::span<const std::int64_t> labels, int threads) {
  if (p.size() != labels.size() || p.empty())
    fail("binary evaluation needs as many probabilities as labels (at least one), got " + std::to_string(p.size()) +
         " and " + std::to_string(labels.size()));
  BinaryMetrics m;
  double correct = 0, se = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (labels[i] != 0 && labels[i] != 1)
      fail("label " + std::to_string(labels[i]) + " of row " + std::to_string(i) + " is not 0 or 1");
    correct += (p[i] > 0.5) == (labels[i] == 1);
    se += (p[i] - static_cast<double>(labels[i])) * (p[i] - static_cast<double>(labels[i]));
  }
  m.accuracy = correct / static_cast<double>(p.size());
  m.mse = se / static_cast<double>(p.size());
  EstimateOptions kde;
  kde.estimator = Estimator::paper;
  kde.type = CalibrationType::binary;
  kde.p = 2;
  kde.execution.threads = threads;
  const Result r = estimate(ProbsView::column(p), LabelsView(labels.data(), labels.size()), kde);
  // The library's binary type counts both classes, (f - E[y|f])^2 twice: halve it for the one-column CE_2.
  m.ce2 = std::sqrt(r.ce_pow_p / 2);
  m.ce2_bandwidth = r.bandwidth;
  return m;
}

}  // namespace ecekde::train
