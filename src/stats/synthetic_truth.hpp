// The marginal and top-label ground truths of the synthetic model, as 1-D integrals over one class's
// score with the conditional expectation written as an exact ratio of expectations over the shape of
// the other classes (derivation: docs/validation.md, "Ground truth").
//
// For a class c write u_c = sigma(rho) (rho = log odds of u_c) and v = (u_k / (1 - u_c))_{k != c}; v is
// uniform on the (K-1)-simplex and independent of u_c ~ Beta(1, K-1). With tau = t1 t2,
// A = sum_k v_k^(1/tau), B = sum_k v_k^(1/t1):
//   logit f_c  = rho / tau - log A        logit p1_c = rho / t1 - log B
// so conditioning on f_c = s fixes rho = z + tau log A with z = tau logit s, and in the variable z
//   E[p1_c | f_c = s] = E_v[g(rho) p1_c(rho)] / E_v[g(rho)],   density of z = E_v[g(rho)],
//   g(rho) = (K-1) sigma(rho) sigma(-rho)^(K-1)   (the density of rho, times d rho / d z = 1).
// Class c holds the top score exactly when u_c >= max_k u_k, i.e. rho >= log max_k v_k; adding that
// indicator to both expectations gives E[max p1 | max f = s] and the density of max f (times 1/K).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ecekde/synthetic.hpp"

namespace ecekde::detail {

/// Gauss-Legendre nodes and weights on [-1, 1] (Newton's method on the Legendre recurrence).
struct GaussLegendre {
  std::vector<double> nodes, weights;
  static GaussLegendre make(std::size_t points);
};

/// Points of the other classes' shape v in equal jackknife groups: group g holds the first points of the
/// Halton sequence in K - 2 dimensions, shifted modulo 1 by a uniform random vector of its own
/// (randomised quasi-Monte Carlo: every group is an independent, unbiased rule, so the jackknife over
/// groups gives an honest standard error), mapped onto the simplex by stick-breaking.
struct ShapeSample {
  std::vector<double> shift;     ///< tau log A: rho = z + shift
  std::vector<double> log_b;     ///< log B
  std::vector<double> log_vmax;  ///< log max_k v_k
  std::size_t groups = 1;

  std::size_t size() const { return shift.size(); }
  /// samples points (rounded up to a multiple of groups; `groups` points when K = 2, where v = (1));
  /// the shifts are drawn from seed.
  static ShapeSample draw(const SyntheticModel& model, std::size_t samples, std::size_t groups,
                          std::uint64_t seed, int threads);
};

/// The two truths and a quadrature check.
struct ScoreIntegrals {
  TruthValue marginal, top_label;
  double class_mass = 0;  ///< integral of one class's score density: 1 up to quadrature error
  std::size_t evaluations = 0;
};

/// sum_c E|E[y_c | f_c] - f_c|^p and E|E[max p1 | max f] - max f|^p (see the file comment).
ScoreIntegrals score_integrals(const SyntheticModel& model, double p, const ShapeSample& shape, int threads);

/// Conditional expectations and densities at scores s in (0, 1): E[p1_c | f_c = s] with the density of
/// f_c, and E[max p1 | max f = s] with the density of max f. Means are NaN where the density is 0.
struct ConditionalCurves {
  std::vector<double> class_mean, class_density, top_mean, top_density;
};
ConditionalCurves conditional_curves(const SyntheticModel& model, const ShapeSample& shape,
                                     std::span<const double> scores, int threads);

}  // namespace ecekde::detail
