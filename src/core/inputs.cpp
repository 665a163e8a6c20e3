#include "core/inputs.hpp"

#include <algorithm>
#include <cmath>

#include "core/messages.hpp"

namespace ecekde::detail {

double row_sum_tolerance(ProbsView probs) {
  // float32 entries carry up to 2^-24 relative rounding each, so K of them may miss 1 by K * 2^-24
  if (probs.dtype() == ProbsView::DType::float32)
    return std::max(kRowSumTolerance, static_cast<double>(probs.cols()) * 0x1p-24);
  return kRowSumTolerance;
}

std::vector<double> read_probabilities(ProbsView probs, bool renormalize, RowsAt at) {
  const std::size_t n = probs.rows(), k = probs.cols();
  if (k == 0) fail("probs has no columns");
  if (n < 2 && !at.slice) fail_with("need at least 2 samples, got ", n);
  const double tolerance = row_sum_tolerance(probs);
  std::vector<double> f(n * k);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t row = at.first + r;
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) {
      const double v = probs(r, c);
      if (!std::isfinite(v)) fail_with("probs row ", row, ", column ", c, ": value ", v, " is not finite");
      if (v < 0) fail_with("probs row ", row, ", column ", c, ": value ", v, " is negative");
      f[r * k + c] = v;
      sum += v;
    }
    if (k == 1) {
      if (f[r] > 1) fail_with("probs row ", row, ": value ", f[r], " is above 1 (one column holds P(y = 1))");
      continue;
    }
    if (std::fabs(sum - 1) <= tolerance) continue;
    if (!renormalize)
      fail_with("probs row ", row, " sums to ", sum, ", not 1 (tolerance ", tolerance,
                "); use renormalize to rescale rows");
    if (!(sum > 0)) fail_with("probs row ", row, " sums to 0 and cannot be renormalized");
    for (std::size_t c = 0; c < k; ++c) f[r * k + c] /= sum;
  }
  return f;
}

std::vector<std::int32_t> read_labels(LabelsView labels, std::size_t rows, std::size_t classes, RowsAt at) {
  if (labels.size() != rows)
    fail_with("labels has ", labels.size(), " entries but probs has ", rows, " rows");
  std::vector<std::int32_t> y(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t v = labels[r];
    if (v < 0 || v >= static_cast<std::int64_t>(classes))
      fail_with("labels row ", at.first + r, ": value ", v, " is outside [0, ", classes, ")");
    y[r] = static_cast<std::int32_t>(v);
  }
  return y;
}

CheckedPredictions read_predictions(ProbsView probs, LabelsView labels, bool renormalize, RowsAt at) {
  CheckedPredictions out;
  out.f = read_probabilities(probs, renormalize, at);
  out.n = probs.rows();
  out.k = probs.cols();
  out.y = read_labels(labels, out.n, out.k == 1 ? 2 : out.k, at);
  return out;
}

void check_p(double p) {
  if (!(std::isfinite(p) && p >= 1)) fail_with("p must be a finite number >= 1, got ", p);
}

void check_bandwidth(double h) {
  if (!(std::isfinite(h) && h > 0)) fail_with("bandwidth must be a finite number > 0, got ", h);
}

}  // namespace ecekde::detail
