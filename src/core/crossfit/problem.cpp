#include "core/crossfit/problem.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/ring.hpp"

namespace ecekde::detail {

bool any_saturated(std::span<const LabelledPoints> problems, Communicator* ranks) {
  std::vector<double> count{0.0};
  for (const LabelledPoints& lp : problems)
    count[0] += static_cast<double>(std::count_if(lp.points.x_t.begin(), lp.points.x_t.end(), saturated));
  combine_shares(ranks, count);
  return count[0] > 0;
}

LogitSpline::LogitSpline(std::vector<double> values, bool saturated, Communicator* ranks) : saturated_(saturated) {
  std::vector<double> count{static_cast<double>(values.size())};
  combine_shares(ranks, count);
  if (count[0] == 0) {  // every value saturated: the basis is 0 wherever it is evaluated
    for (std::size_t q = 0; q < kKnots; ++q) knots_[q] = 1e-6 * static_cast<double>(q);
    return;
  }
  std::array<std::size_t, kKnots> at{};
  for (std::size_t q = 0; q < kKnots; ++q)
    at[q] = static_cast<std::size_t>((0.05 + 0.9 * static_cast<double>(q) / (kKnots - 1)) * (count[0] - 1));
  const std::vector<double> knots = order_statistics(ranks, values, at);  // reorders values
  std::copy(knots.begin(), knots.end(), knots_.begin());
  for (std::size_t q = 1; q < kKnots; ++q) knots_[q] = std::max(knots_[q], knots_[q - 1] + 1e-6);
  scale_.fill(1.0);
  std::array<double, kFunctions> sum{}, sum_sq{}, b{};
  for (double t : values) {
    basis(t, b.data());
    for (std::size_t f = 0; f < kFunctions; ++f) sum[f] += b[f], sum_sq[f] += b[f] * b[f];
  }
  if (ranks) {
    std::vector<double> sums(sum.begin(), sum.end());
    sums.insert(sums.end(), sum_sq.begin(), sum_sq.end());
    ranks->all_sum(sums);
    std::copy_n(sums.begin(), kFunctions, sum.begin());
    std::copy_n(sums.begin() + kFunctions, kFunctions, sum_sq.begin());
  }
  const double m = count[0];
  for (std::size_t f = 0; f < kFunctions; ++f) {
    const double var = sum_sq[f] / m - (sum[f] / m) * (sum[f] / m);
    scale_[f] = var > 0 ? 1 / std::sqrt(var) : 1.0;
  }
}

Problem make_problem(const LabelledPoints& lp) {
  Problem pr;
  pr.lp = &lp;
  pr.depth = lp.one_dimensional ? 1 : lp.classes;
  pr.map = lp.one_dimensional ? "beta" : "structured";
  pr.labels.resize(lp.points.n);
  for (std::size_t j = 0; j < lp.points.n; ++j) pr.labels[j] = static_cast<int>(lp.label(j));
  return pr;
}

}  // namespace ecekde::detail
