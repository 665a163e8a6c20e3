// Synthetic predictions whose calibration error is known: the generator of the paper's Section 4
// ("Synthetic experiments") and the true canonical, marginal and top-label CE_p^p. How the truths are
// computed and how they were validated: docs/validation.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/random.hpp"

namespace ecekde {

/// The generative model, with T_t(q) = softmax(log q / t) (temperature scaling of a probability vector):
///   u  ~ uniform on the simplex of K classes (Dirichlet(1, ..., 1), by the Kraemer algorithm)
///   p1 = T_t1(u)                  a calibrated model: the labels are drawn from it
///   y  ~ Categorical(p1)
///   f  = T_t2(p1) = T_{t1 t2}(u)  the predictions; t2 = 1 leaves them calibrated
/// T_t2 is a bijection of the open simplex, so E[y | f] = p1.
struct SyntheticModel {
  std::size_t classes = 4;  ///< K >= 2
  double t1 = 0.6;          ///< > 0; t1 < 1 pushes p1 towards the faces of the simplex
  double t2 = 0.6;          ///< > 0; t2 < 1 makes f overconfident, t2 > 1 underconfident
};

/// n samples of the model, row-major.
struct SyntheticData {
  std::size_t n = 0, k = 0;
  std::vector<double> probs;         ///< n x K: the predictions f
  std::vector<double> calibrated;    ///< n x K: p1 = E[y | f]
  std::vector<std::int64_t> labels;  ///< n: y in [0, K)

  ProbsView probs_view() const { return ProbsView::row_major(probs.data(), n, k); }
  LabelsView labels_view() const { return LabelsView(labels); }
};

/// Draws n >= 1 samples. The same (model, n, seed) gives the same data for any thread count.
SyntheticData generate_synthetic(const SyntheticModel& model, std::size_t n, std::uint64_t seed,
                                 int threads = 0);

/// Writes a point uniform on the simplex to out (size K >= 1): the spacings of K - 1 sorted uniforms
/// on [0, 1) (the Kraemer algorithm).
void uniform_simplex(Rng& rng, std::span<double> out);

/// out = T_t(q) = softmax(log q / t), i.e. q_c^(1/t) / sum_k q_k^(1/t), computed in log space so that no
/// t underflows; entries of q equal to 0 stay 0. q: non-negative, not all 0; t > 0; out may be q.
void temperature_scale(std::span<const double> q, double t, std::span<double> out);

/// A computed truth and how far it may be off.
struct TruthValue {
  double value = 0;
  double standard_error = 0;    ///< Monte Carlo standard error (jackknife for marginal and top-label)
  double quadrature_error = 0;  ///< estimated error of the 1-D quadrature (0 for plain Monte Carlo)
};

/// Accuracy settings of synthetic_ground_truth().
struct GroundTruthOptions {
  double p = 1;                             ///< order of the norm, any real p >= 1
  std::size_t canonical_samples = 1 << 22;  ///< Monte Carlo samples for the canonical value
  /// Points of the other classes' shape for the marginal and top-label integrals: a randomised
  /// quasi-Monte Carlo rule, jackknife_groups independently shifted copies of a Halton point set
  /// (rounded up to a multiple of jackknife_groups; for K = 2 the shape is fixed and one point per group
  /// is used).
  std::size_t inner_samples = 1 << 16;
  std::size_t jackknife_groups = 32;  ///< >= 2; the standard error comes from their jackknife
  std::uint64_t seed = 0;
  int threads = 0;  ///< 0 = every hardware thread
};

/// The true calibration errors of the model, in the conventions of ecekde::estimate().
struct GroundTruth {
  double p = 1;
  TruthValue canonical;  ///< E ||E[y | f] - f||_p^p = E ||p1 - f||_p^p
  TruthValue marginal;   ///< sum_c E |E[y_c | f_c] - f_c|^p
  TruthValue top_label;  ///< E |P(y = argmax f | max f) - max f|^p
};

/// Computes the three truths: canonical by Monte Carlo over u; marginal and top-label by a 1-D
/// Gauss-Legendre integral over the conditioning score with the conditional expectation written as an
/// exact ratio of expectations over the other classes' shape, those by randomised quasi-Monte Carlo
/// (docs/validation.md). Defaults take about a second for K = 4 on 2 cores.
GroundTruth synthetic_ground_truth(const SyntheticModel& model, const GroundTruthOptions& options = {});

}  // namespace ecekde
