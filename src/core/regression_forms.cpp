// The loo-regression bandwidth criterion and the debiased form of the estimate (regression_forms.hpp).
#include "core/regression_forms.hpp"

#include <cmath>

#include "core/estimate_steps.hpp"
#include "core/numeric.hpp"
#include "core/regression_reducers.hpp"
#include "core/messages.hpp"

namespace ecekde::detail {

namespace {

// Squared error of the leave-one-out regression at one row, from its class sums N (label-sorted problem):
// sum_c (1[y = c] - N_c / D)^2, or (1[y = 1] - N_1 / D)^2 for a one-dimensional problem.
double brier(const LabelledPoints& lp, std::size_t label, const double* sums) {
  double den = 0;
  for (std::size_t c = 0; c < lp.classes; ++c) den += sums[c];
  auto sq = [&](std::size_t c) {
    const double d = (label == c ? 1.0 : 0.0) - sums[c] / den;
    return d * d;
  };
  if (lp.one_dimensional) return sq(1);
  double e = 0;
  for (std::size_t c = 0; c < lp.classes; ++c) e += sq(c);
  return e;
}

}  // namespace

std::vector<double> regression_scores(const std::vector<LabelledPoints>& problems,
                                      std::span<const double> bandwidths, std::span<const std::size_t> rows,
                                      const SweepPlan& plan) {
  const std::size_t H = bandwidths.size(), R = rows.size();
  std::vector<double> scores(H, 0.0);
  for (const auto& lp : problems) {
    const std::size_t n = lp.points.n, L = lp.classes;
    std::vector<std::vector<double>> offsets(H, std::vector<double>(n));
    std::vector<double> inv_h(H);
    for (std::size_t b = 0; b < H; ++b) {
      lp.points.centre_offsets(bandwidths[b], offsets[b], plan.threads);
      inv_h[b] = 1 / bandwidths[b];
    }
    std::vector<double> errors(H * R);  // bandwidth-major, so each bandwidth's column is contiguous
    if (R == n) {
      auto finish = [&](std::size_t j, const double* sums) {
        for (std::size_t b = 0; b < H; ++b) errors[b * R + j] = brier(lp, lp.label(j), sums + b * L);
      };
      sweep(lp.points, plan, BandwidthClassSums(lp, *plan.kernels, offsets, inv_h, finish));
    } else {
      const RowSubset subset = row_subset(lp, rows);
      auto finish = [&](std::size_t r, const double* sums) {
        for (std::size_t b = 0; b < H; ++b) errors[b * R + r] = brier(lp, lp.label(subset.self[r]), sums + b * L);
      };
      sweep(subset.points, lp.points, plan, BandwidthClassSums(lp, *plan.kernels, offsets, inv_h, finish, subset.self));
    }
    for (std::size_t b = 0; b < H; ++b)
      scores[b] -= accurate_sum(std::span<const double>(errors).subspan(b * R, R)) / static_cast<double>(R);
  }
  return scores;
}

DebiasedMean debiased_mean_error(const LabelledPoints& lp, double h, const SweepPlan& plan) {
  const KernelPoints& x = lp.points;
  const std::size_t n = x.n, L = lp.classes;
  std::vector<double> offsets(n), terms(n);
  std::vector<char> used(n);
  x.centre_offsets(h, offsets, plan.threads);
  // Row j, class c, with D = sum_i w_i, S = sum_i w_i^2 and d_ic = 1[y_i = c] - f_jc:
  //   sum_{i != k} w_i w_k d_ic d_kc = (N_c - f_jc D)^2 - (Q_c (1 - 2 f_jc) + f_jc^2 S)   (y_ic^2 = y_ic)
  //   sum_{i != k} w_i w_k           = D^2 - S
  auto finish = [&](std::size_t j, const double* sums, const double* squares) {
    double den = 0, sq = 0;
    for (std::size_t c = 0; c < L; ++c) {
      den += sums[c];
      sq += squares[c];
    }
    const double pairs = den * den - sq;
    if (!(pairs > kSinglePairShare * den * den)) return;
    auto pair_sum = [&](std::size_t c, double f) {
      const double dev = sums[c] - f * den;
      return dev * dev - (squares[c] * (1 - 2 * f) + f * f * sq);
    };
    double numerator = 0;
    if (lp.one_dimensional) {
      numerator = pair_sum(1, x.x(j, 0));
    } else {
      for (std::size_t c = 0; c < L; ++c) numerator += pair_sum(c, x.x(j, c));
    }
    terms[lp.original[j]] = numerator / pairs;
    used[lp.original[j]] = 1;
  };
  sweep(x, plan, ClassSquareSums(lp, *plan.kernels, offsets, 1 / h, finish));
  DebiasedMean out;
  std::vector<double> kept;  // in input order, so the sum does not depend on the label sort
  kept.reserve(n);
  for (std::size_t r = 0; r < n; ++r)
    if (used[r]) kept.push_back(terms[r]);
  out.excluded_rows = n - kept.size();
  if (kept.empty())
    fail_with("the debiased form needs rows with at least two neighbours of non-negligible kernel weight; at "
              "bandwidth ", h, " every row's weight rests on a single neighbour (choose a larger bandwidth)");
  out.value = accurate_sum(kept) / static_cast<double>(kept.size());
  return out;
}

}  // namespace ecekde::detail
