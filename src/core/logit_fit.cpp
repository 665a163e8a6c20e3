#include "core/logit_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/messages.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

namespace {

// Row j's probabilities (softmax of its logits) under theta; returns log P_j(y).
double row_probabilities(const LogitDesign& d, std::span<const double> theta, const double* offset,
                         const double* x, double* prob, int y) {
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < d.L; ++c) {
    double z = offset[c];
    for (std::size_t k = 0; k < d.D; ++k) z += x[c * d.D + k] * theta[k];
    if (d.class_bias) z += theta[d.D + c];
    prob[c] = z;
    top = std::max(top, z);
  }
  double sum = 0;
  for (std::size_t c = 0; c < d.L; ++c) sum += prob[c] = std::exp(prob[c] - top);
  for (std::size_t c = 0; c < d.L; ++c) prob[c] /= sum;
  return y < 0 ? 0 : std::log(std::max(prob[static_cast<std::size_t>(y)], std::numeric_limits<double>::min()));
}

// The penalised objective at theta; with grad/hess given, also its gradient and Hessian (P x P).
double objective(const LogitDesign& d, std::span<const int> labels, std::span<const std::size_t> rows,
                 double lambda, std::span<const double> theta, double* grad, double* hess) {
  const std::size_t P = d.parameters(), L = d.L, D = d.D;
  std::vector<double> offset(L), x(L * D), prob(L), mu(D);
  if (grad) std::fill_n(grad, P, 0.0);
  if (hess) std::fill_n(hess, P * P, 0.0);
  double nll = 0;
  for (std::size_t j : rows) {
    d.row(j, offset.data(), x.data());
    const int y = labels[j];
    nll -= row_probabilities(d, theta, offset.data(), x.data(), prob.data(), y);
    if (!grad) continue;
    std::fill(mu.begin(), mu.end(), 0.0);
    for (std::size_t c = 0; c < L; ++c)
      for (std::size_t k = 0; k < D; ++k) mu[k] += prob[c] * x[c * D + k];
    for (std::size_t k = 0; k < D; ++k) grad[k] += mu[k] - x[static_cast<std::size_t>(y) * D + k];
    if (d.class_bias) {
      for (std::size_t c = 0; c < L; ++c) grad[D + c] += prob[c];
      grad[D + static_cast<std::size_t>(y)] -= 1;
    }
    // Hessian of -log softmax: sum_c P_c x_c x_c^T - mu mu^T over the extended features (x_c, e_c).
    for (std::size_t a = 0; a < D; ++a) {
      for (std::size_t b = 0; b <= a; ++b) {
        double s = 0;
        for (std::size_t c = 0; c < L; ++c) s += prob[c] * x[c * D + a] * x[c * D + b];
        hess[a * P + b] += s - mu[a] * mu[b];
      }
      if (d.class_bias)
        for (std::size_t c = 0; c < L; ++c) hess[(D + c) * P + a] += prob[c] * (x[c * D + a] - mu[a]);
    }
    if (d.class_bias)
      for (std::size_t c = 0; c < L; ++c)
        for (std::size_t e = 0; e <= c; ++e) hess[(D + c) * P + D + e] += (c == e ? prob[c] : 0) - prob[c] * prob[e];
  }
  const double m = static_cast<double>(rows.size());
  double penalty = 0;
  for (double t : theta) penalty += t * t;
  if (grad)
    for (std::size_t a = 0; a < P; ++a) grad[a] = grad[a] / m + lambda * theta[a];
  if (hess)
    for (std::size_t a = 0; a < P; ++a) {
      for (std::size_t b = 0; b <= a; ++b) hess[a * P + b] /= m;
      hess[a * P + a] += lambda;
    }
  return nll / m + 0.5 * lambda * penalty;
}

// Solves H s = g in place (g becomes s) for symmetric positive definite H given by its lower triangle.
void cholesky_solve(std::vector<double>& H, std::vector<double>& g, std::size_t P) {
  for (std::size_t a = 0; a < P; ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      double s = H[a * P + b];
      for (std::size_t k = 0; k < b; ++k) s -= H[a * P + k] * H[b * P + k];
      if (a == b) {
        H[a * P + a] = std::sqrt(std::max(s, 1e-300));
      } else {
        H[a * P + b] = s / H[b * P + b];
      }
    }
  }
  for (std::size_t a = 0; a < P; ++a) {
    for (std::size_t k = 0; k < a; ++k) g[a] -= H[a * P + k] * g[k];
    g[a] /= H[a * P + a];
  }
  for (std::size_t a = P; a-- > 0;) {
    for (std::size_t k = a + 1; k < P; ++k) g[a] -= H[k * P + a] * g[k];
    g[a] /= H[a * P + a];
  }
}

}  // namespace

std::vector<double> fit_logit(const LogitDesign& design, std::span<const int> labels,
                              std::span<const std::size_t> rows, double lambda, const RunControl* control) {
  ECEKDE_ASSERT(lambda > 0 && !rows.empty());
  const std::size_t P = design.parameters();
  std::vector<double> theta(P, 0.0), grad(P), hess(P * P), step(P), trial(P);
  double value = objective(design, labels, rows, lambda, theta, grad.data(), hess.data());
  for (int iteration = 0; iteration < 100; ++iteration) {
    WorkLedger::check(control);
    step = grad;
    cholesky_solve(hess, step, P);
    double decrease = 0;
    for (std::size_t a = 0; a < P; ++a) decrease += grad[a] * step[a];
    if (decrease < 1e-20) break;  // the Newton decrement: converged to rounding
    double t = 1, next = value;
    for (int halving = 0; halving < 60; ++halving, t /= 2) {
      for (std::size_t a = 0; a < P; ++a) trial[a] = theta[a] - t * step[a];
      next = objective(design, labels, rows, lambda, trial, nullptr, nullptr);
      if (next <= value - 0.25 * t * decrease) break;
    }
    if (!(next < value)) break;
    theta = trial;
    value = objective(design, labels, rows, lambda, theta, grad.data(), hess.data());
  }
  return theta;
}

void predict_logit(const LogitDesign& design, std::span<const double> theta, std::size_t j, double* out) {
  std::vector<double> offset(design.L), x(design.L * design.D);
  design.row(j, offset.data(), x.data());
  row_probabilities(design, theta, offset.data(), x.data(), out, -1);
}

}  // namespace ecekde::detail
