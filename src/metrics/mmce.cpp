// MMCE^2 = sum_ij u_i u_j k(r_i, r_j) with u_i = a_i (c_i - r_i): a_i = 1/n (unweighted), or 1/m for the
// m correct and 1/(n - m) for the n - m wrong predictions (weighted; Kumar et al. 2018, Section 4).
//
// With the Laplacian kernel the row sums T_i = sum_j u_j k_ij and D_i = sum_j u_j k_ij sign(r_i - r_j)
// are running sums over the sorted confidences: for distinct values v_0 < v_1 < ... with weight U_g,
//   below_g = exp(-(v_g - v_{g-1}) / w) (below_{g-1} + U_{g-1}),   above_g likewise from the top,
//   T = below + U_g + above,   D = below - above,
// so the whole estimate and its gradient cost one sort. The factors are <= 1: nothing overflows.
//
// Gradient (argmax fixed, so only r_i = probs(i, argmax_i) moves):
//   d MMCE^2 / d r_i = 2 (-a_i T_i - u_i D_i / w),
// using sign(0) = 0 for pairs with equal confidences (the kernel's kink: 0 is the mean of the one-sided
// derivatives, and the symmetric choice keeps the gradient of tied samples equal).
#include "ecekde/mmce.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/inputs.hpp"
#include "core/numeric.hpp"
#include "core/messages.hpp"

namespace ecekde {

namespace {

struct RowSums {
  std::vector<double> total, signed_total;  // T_i, D_i
};

RowSums laplacian_row_sums(const std::vector<double>& r, const std::vector<double>& u, double width) {
  const std::size_t n = r.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r[a] < r[b]; });

  // Groups of equal confidence: [start[g], start[g + 1]) in `order`.
  std::vector<std::size_t> start{0};
  for (std::size_t s = 1; s < n; ++s)
    if (r[order[s]] != r[order[s - 1]]) start.push_back(s);
  start.push_back(n);
  const std::size_t groups = start.size() - 1;
  std::vector<double> value(groups), weight(groups, 0.0), below(groups, 0.0), above(groups, 0.0);
  for (std::size_t g = 0; g < groups; ++g) {
    value[g] = r[order[start[g]]];
    for (std::size_t s = start[g]; s < start[g + 1]; ++s) weight[g] += u[order[s]];
  }
  for (std::size_t g = 1; g < groups; ++g)
    below[g] = std::exp(-(value[g] - value[g - 1]) / width) * (below[g - 1] + weight[g - 1]);
  for (std::size_t g = groups - 1; g-- > 0;)
    above[g] = std::exp(-(value[g + 1] - value[g]) / width) * (above[g + 1] + weight[g + 1]);

  RowSums sums{std::vector<double>(n), std::vector<double>(n)};
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t s = start[g]; s < start[g + 1]; ++s) {
      sums.total[order[s]] = below[g] + weight[g] + above[g];
      sums.signed_total[order[s]] = below[g] - above[g];
    }
  return sums;
}

// MMCE (and its gradients when asked) of top-label confidences r, their correctness and their classes.
MmceResult mmce_of(const std::vector<double>& r, const std::vector<bool>& correct, std::span<const std::size_t> top,
                   std::size_t k, const MmceOptions& options) {
  const std::size_t n = r.size();
  const double width = options.kernel_width;
  MmceResult res;
  res.n = n;
  res.k = k;
  for (std::size_t i = 0; i < n; ++i) res.correct += correct[i];

  // a_i; in the weighted form a group with no members has no terms, so its count is never divided by.
  const double nd = static_cast<double>(n);
  std::vector<double> a(n), u(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double group = correct[i] ? static_cast<double>(res.correct) : nd - static_cast<double>(res.correct);
    a[i] = 1 / (options.weighted ? group : nd);
    u[i] = a[i] * ((correct[i] ? 1.0 : 0.0) - r[i]);
  }

  const RowSums sums = laplacian_row_sums(r, u, width);
  std::vector<double> terms(n);
  for (std::size_t i = 0; i < n; ++i) terms[i] = u[i] * sums.total[i];
  res.mmce_squared = detail::accurate_sum(terms);
  res.mmce = std::sqrt(std::max(res.mmce_squared, 0.0));
  if (!options.gradient) return res;

  res.gradient_squared.assign(n * k, 0.0);
  res.gradient.assign(n * k, 0.0);
  // d sqrt(S) = dS / (2 sqrt(S)); at S = 0 the zero vector is a subgradient of the norm.
  const double chain = res.mmce > 0 ? 1 / (2 * res.mmce) : 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = 2 * (-a[i] * sums.total[i] - u[i] * sums.signed_total[i] / width);
    res.gradient_squared[i * k + top[i]] = g;
    res.gradient[i * k + top[i]] = g * chain;
  }
  return res;
}

// MMCE^2 alone, for a resample or a relabelled copy (no gradients, so no classes needed).
double mmce_squared_of(const std::vector<double>& r, const std::vector<bool>& correct, const MmceOptions& options) {
  MmceOptions value_only = options;
  value_only.gradient = false;
  return mmce_of(r, correct, {}, 0, value_only).mmce_squared;
}

}  // namespace

namespace {

void check_width(double width) {
  if (!(std::isfinite(width) && width > 0))
    detail::fail_with("kernel_width must be a finite number > 0, got ", width);
}

}  // namespace

MmceStatistic::MmceStatistic(ProbsView probs, LabelsView labels, const MmceOptions& options) : options_(options) {
  check_width(options.kernel_width);
  if (probs.cols() == 1) detail::fail_with("mmce needs at least 2 classes, probs has 1 column");
  const detail::CheckedPredictions pred = detail::read_predictions(probs, labels, false);
  const std::size_t n = pred.n, k = pred.k;
  k_ = k;
  r_.resize(n);
  top_.assign(n, 0);
  std::vector<bool> correct(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 1; c < k; ++c)
      if (pred(i, c) > pred(i, top_[i])) top_[i] = c;  // ties go to the lowest index
    r_[i] = pred(i, top_[i]);
    correct[i] = static_cast<std::size_t>(pred.y[i]) == top_[i];
  }
  result_ = mmce_of(r_, correct, top_, k, options);
  correct_ = std::move(correct);
}

MmceStatistic::MmceStatistic(std::span<const double> confidence, std::span<const std::uint8_t> hits, std::size_t k,
                             const MmceOptions& options)
    : options_(options), k_(k), r_(confidence.begin(), confidence.end()), correct_(hits.begin(), hits.end()) {
  check_width(options.kernel_width);
  if (options.gradient) detail::fail_with("an MMCE of confidences and hits has no gradient (options.gradient)");
  if (hits.size() != confidence.size())
    detail::fail_with("hits has ", hits.size(), " entries for ", confidence.size(), " confidences");
  result_ = mmce_of(r_, correct_, {}, k, options);
}

double MmceStatistic::resampled(std::span<const std::size_t> rows) const {
  const std::size_t n = r_.size();
  if (rows.size() < 2) detail::fail_with("need at least 2 samples, got ", rows.size());
  std::vector<double> r(rows.size());
  std::vector<bool> correct(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] >= n) detail::fail_with("resampled row ", i, ": index ", rows[i], " is outside [0, ", n, ")");
    r[i] = r_[rows[i]];
    correct[i] = correct_[rows[i]];
  }
  return mmce_squared_of(r, correct, options_);
}

double MmceStatistic::relabelled(LabelsView labels) const {
  const std::vector<std::int32_t> y = detail::read_labels(labels, r_.size(), k_);
  std::vector<bool> correct(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) correct[i] = static_cast<std::size_t>(y[i]) == top_[i];
  return mmce_squared_of(r_, correct, options_);
}

double MmceStatistic::relabelled_hits(std::span<const std::uint8_t> hits) const {
  if (hits.size() != r_.size()) detail::fail_with("hits has ", hits.size(), " entries for ", r_.size(), " samples");
  return mmce_squared_of(r_, std::vector<bool>(hits.begin(), hits.end()), options_);
}

MmceResult mmce(ProbsView probs, LabelsView labels, const MmceOptions& options) {
  return MmceStatistic(probs, labels, options).result();
}

}  // namespace ecekde
