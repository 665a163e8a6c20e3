// The consistency-resampling draws of the calibration test: a label drawn from each row's prediction, in
// Rng::categorical's order, found by a binary search in the row's running sums.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "ecekde/random.hpp"

namespace ecekde::detail {

/// A row's running sums of its k probabilities, added up in Rng::categorical's order, so that the first
/// class whose sum exceeds the uniform is the class the linear scan returns: the same draws, found by a
/// binary search in O(log K) instead of O(K) per label (at K = 1,000, most of a binned stage's test).
/// One column (P(y = 1)) is kept as it is. `out` may be `p`.
inline void running_sums(const double* p, std::size_t k, double* out) {
  if (k == 1) {
    out[0] = p[0];
    return;
  }
  double acc = 0;
  for (std::size_t c = 0; c + 1 < k; ++c) out[c] = acc += p[c];
}

/// The label that the uniform u draws from a row's running sums (one column: Bernoulli(P(y = 1))).
inline std::int64_t label_of_uniform(const double* running, std::size_t k, double u) {
  if (k == 1) return u < running[0] ? 1 : 0;
  return std::upper_bound(running, running + k - 1, u) - running;
}

/// A label drawn from a row's running sums with the next uniform of rng.
inline std::int64_t draw_label(const double* running, std::size_t k, Rng& rng) {
  return label_of_uniform(running, k, rng.uniform());
}

/// The uniforms that draw `label` from a row's running sums: label_of_uniform(running, k, u) == label
/// exactly when lower <= u < upper.
inline std::pair<double, double> uniforms_drawing(const double* running, std::size_t k, std::size_t label) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (k == 1) return label == 1 ? std::pair{-inf, running[0]} : std::pair{running[0], inf};
  return {label > 0 ? running[label - 1] : -inf, label + 1 < k ? running[label] : inf};
}

}  // namespace ecekde::detail
