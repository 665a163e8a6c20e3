// Reproducible test predictions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "ecekde/random.hpp"
#include "oracle.hpp"

namespace testdata {

/// n rows of k zero probabilities and zero labels, for the generators below to fill.
inline oracle::Data zeroed(std::size_t n, std::size_t k) {
  return oracle::Data::of(k, std::vector<double>(n * k, 0.0), std::vector<std::int64_t>(n, 0));
}

/// n softmax predictions over k classes from normal logits with standard deviation `spread`; labels are
/// drawn from softmax(logits / temperature): temperature 1 = calibrated, < 1 = the model is
/// underconfident, > 1 = overconfident.
inline oracle::Data softmax_predictions(std::size_t n, std::size_t k, std::uint64_t seed, double spread = 2.0,
                                        double temperature = 1.0) {
  ecekde::Rng rng(seed);
  oracle::Data d = zeroed(n, k);
  std::vector<double> logit(k), truth(k);
  for (std::size_t r = 0; r < n; ++r) {
    for (auto& z : logit) z = spread * rng.normal();
    const double m = *std::max_element(logit.begin(), logit.end());
    double s = 0, st = 0;
    for (std::size_t c = 0; c < k; ++c) {
      d.f[r * k + c] = std::exp(logit[c] - m);
      truth[c] = std::exp((logit[c] - m) / temperature);
      s += d.f[r * k + c];
      st += truth[c];
    }
    for (std::size_t c = 0; c < k; ++c) {
      d.f[r * k + c] /= s;
      truth[c] /= st;
    }
    d.y[r] = static_cast<std::int64_t>(rng.categorical(truth));
  }
  return d;
}

/// K classes, a third of the rows relabelled to classes 0-4: the positives' counts differ, most classes'
/// are small (marginal's criterion sample beyond kCriterionProblems classes).
inline oracle::Data many_classes(std::size_t n, std::size_t k) {
  oracle::Data d = softmax_predictions(n, k, 31, 2.0, 1.6);
  for (std::size_t j = 0; j < d.n; j += 3) d.y[j] = static_cast<std::int64_t>(j % 5);
  return d;
}

/// Sets all but the `kept` largest probabilities of rows [first, n) to exactly 0 and renormalises them:
/// truncated (top-k) outputs, or probabilities that underflowed. Labels are left as they are.
inline void truncate(oracle::Data& d, std::size_t kept, std::size_t first = 0) {
  std::vector<double> sorted(d.k);
  for (std::size_t j = first; j < d.n; ++j) {
    double* f = d.f.data() + j * d.k;
    std::copy_n(f, d.k, sorted.begin());
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    double sum = 0;
    for (std::size_t c = 0; c < d.k; ++c) sum += f[c] = f[c] >= sorted[kept - 1] ? f[c] : 0.0;
    for (std::size_t c = 0; c < d.k; ++c) f[c] /= sum;
  }
}

/// Redraws d's labels from q = (1 - mix) f + mix / K, which moves each class's probability by a function of
/// that probability alone, so E[y_c | f_c] = q_c. Returns the true marginal (and canonical) CE_1 of the
/// rows, E sum_c |q_c - f_c| as the mean over their own predictions (no estimator involved).
inline double mix_with_uniform(oracle::Data& d, double mix, std::uint64_t seed) {
  ecekde::Rng rng(seed);
  std::vector<double> q(d.k);
  double truth = 0;
  for (std::size_t j = 0; j < d.n; ++j) {
    for (std::size_t c = 0; c < d.k; ++c) {
      q[c] = (1 - mix) * d.f[j * d.k + c] + mix / static_cast<double>(d.k);
      truth += std::fabs(q[c] - d.f[j * d.k + c]) / static_cast<double>(d.n);
    }
    d.y[j] = static_cast<std::int64_t>(rng.categorical(q));
  }
  return truth;
}

/// One column P(y = 1) with labels drawn from p^(1/temperature) style miscalibration (temperature 1 =
/// calibrated).
inline oracle::Data binary_predictions(std::size_t n, std::uint64_t seed, double temperature = 1.0) {
  ecekde::Rng rng(seed);
  oracle::Data d = zeroed(n, 1);
  for (std::size_t r = 0; r < n; ++r) {
    const double z = 2 * rng.normal();
    const double p = 1 / (1 + std::exp(-z)), t = 1 / (1 + std::exp(-z / temperature));
    d.f[r] = p;
    d.y[r] = rng.uniform() < t ? 1 : 0;
  }
  return d;
}

/// n points from Dirichlet(concentration, ..., concentration), labels drawn from the points themselves
/// (calibrated) or from their square, renormalised (overconfident).
inline oracle::Data dirichlet_predictions(std::size_t n, std::size_t k, std::uint64_t seed, double concentration,
                                          bool calibrated) {
  ecekde::Rng rng(seed);
  oracle::Data d = zeroed(n, k);
  std::vector<double> truth(k);
  for (std::size_t r = 0; r < n; ++r) {
    double s = 0, st = 0;
    for (std::size_t c = 0; c < k; ++c) s += d.f[r * k + c] = std::max(rng.gamma(concentration), 1e-300);
    for (std::size_t c = 0; c < k; ++c) {
      d.f[r * k + c] /= s;
      st += truth[c] = calibrated ? d.f[r * k + c] : d.f[r * k + c] * d.f[r * k + c];
    }
    for (double& t : truth) t /= st;
    d.y[r] = static_cast<std::int64_t>(rng.categorical(truth));
  }
  return d;
}

}  // namespace testdata
