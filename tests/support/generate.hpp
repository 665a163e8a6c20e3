// Reproducible test predictions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ecekde/random.hpp"
#include "oracle.hpp"

namespace testdata {

/// n softmax predictions over k classes from normal logits with standard deviation `spread`; labels are
/// drawn from softmax(logits / temperature): temperature 1 = calibrated, < 1 = the model is
/// underconfident, > 1 = overconfident.
inline oracle::Data softmax_predictions(std::size_t n, std::size_t k, std::uint64_t seed, double spread = 2.0,
                                        double temperature = 1.0) {
  ecekde::Rng rng(seed);
  oracle::Data d;
  d.n = n;
  d.k = k;
  d.f.resize(n * k);
  d.y.resize(n);
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

/// One column P(y = 1) with labels drawn from p^(1/temperature) style miscalibration (temperature 1 =
/// calibrated).
inline oracle::Data binary_predictions(std::size_t n, std::uint64_t seed, double temperature = 1.0) {
  ecekde::Rng rng(seed);
  oracle::Data d;
  d.n = n;
  d.k = 1;
  d.f.resize(n);
  d.y.resize(n);
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
  oracle::Data d;
  d.n = n;
  d.k = k;
  d.f.resize(n * k);
  d.y.resize(n);
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
