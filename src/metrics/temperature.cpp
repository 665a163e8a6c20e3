// Temperature scaling. In the inverse temperature b = 1/T the mean NLL
//   L(b) = mean_i [log sum_c exp(b z_ic) - b z_iy]
// is convex: L'(b) = mean_i [E_p z_i - z_iy] and L''(b) = mean_i Var_p z_i >= 0 with p = softmax(b z_i).
// So L' is increasing and the fit is its root. The search runs in u = log b = -log T (scale-free, T can
// span decades): Newton steps on L'(e^u), whose u-derivative is b L''(b), kept inside a bracket
// [lo, hi] with L' < 0 at lo and > 0 at hi, and replaced by bisection when they leave it or stall.
#include "ecekde/temperature.hpp"

#include <algorithm>
#include <cmath>

#include "core/inputs.hpp"
#include "core/numeric.hpp"
#include "core/messages.hpp"

namespace ecekde {

namespace {

struct Logits {
  std::size_t n = 0, k = 0;
  std::vector<double> z;     // n x k
  std::vector<double> zmax;  // per row
};

Logits read_logits(ProbsView logits) {
  Logits out;
  out.n = logits.rows();
  out.k = logits.cols();
  if (out.k < 2) detail::fail_with("temperature scaling needs logits with at least 2 columns (classes), got ", out.k);
  if (out.n < 1) detail::fail_with("temperature scaling needs at least 1 sample, got 0");
  out.z.resize(out.n * out.k);
  out.zmax.assign(out.n, -INFINITY);
  for (std::size_t r = 0; r < out.n; ++r)
    for (std::size_t c = 0; c < out.k; ++c) {
      const double v = logits(r, c);
      if (!std::isfinite(v)) detail::fail_with("logits row ", r, ", column ", c, ": value ", v, " is not finite");
      out.z[r * out.k + c] = v;
      out.zmax[r] = std::max(out.zmax[r], v);
    }
  return out;
}

struct Nll {
  double value = 0, d1 = 0, d2 = 0;  // L(b), L'(b), L''(b)
};

Nll mean_nll(const Logits& in, const std::vector<std::int32_t>& y, double b) {
  const std::size_t n = in.n, k = in.k;
  std::vector<double> value(n), d1(n), d2(n), w(k);
  for (std::size_t i = 0; i < n; ++i) {
    const double* z = &in.z[i * k];
    double s = 0, mean = 0;
    for (std::size_t c = 0; c < k; ++c) {
      w[c] = std::exp(b * (z[c] - in.zmax[i]));  // <= 1: log-sum-exp shifted by the row maximum
      s += w[c];
      mean += w[c] * z[c];
    }
    mean /= s;
    double var = 0;
    for (std::size_t c = 0; c < k; ++c) var += w[c] * (z[c] - mean) * (z[c] - mean);
    const double zy = z[static_cast<std::size_t>(y[i])];
    value[i] = b * (in.zmax[i] - zy) + std::log(s);  // both terms >= 0: no cancellation
    d1[i] = mean - zy;
    d2[i] = var / s;
  }
  const double nd = static_cast<double>(n);
  return {detail::accurate_sum(value) / nd, detail::accurate_sum(d1) / nd, detail::accurate_sum(d2) / nd};
}

void check_interval(const TemperatureOptions& o) {
  if (!(std::isfinite(o.min_temperature) && o.min_temperature > 0))
    detail::fail_with("min_temperature must be a finite number > 0, got ", o.min_temperature);
  if (!(std::isfinite(o.max_temperature) && o.max_temperature > o.min_temperature))
    detail::fail_with("max_temperature must be a finite number above min_temperature (", o.min_temperature,
                      "), got ", o.max_temperature);
}

}  // namespace

TemperatureFit fit_temperature(ProbsView logits, LabelsView labels, const TemperatureOptions& options) {
  check_interval(options);
  const Logits in = read_logits(logits);
  if (labels.size() != in.n)
    detail::fail_with("labels has ", labels.size(), " entries but logits has ", in.n, " rows");
  const std::vector<std::int32_t> y = detail::read_labels(labels, in.n, in.k);

  TemperatureFit fit;
  auto evaluate = [&](double u) {
    ++fit.iterations;
    return mean_nll(in, y, std::exp(u));
  };
  double lo = -std::log(options.max_temperature), hi = -std::log(options.min_temperature);
  const Nll at_lo = evaluate(lo), at_hi = evaluate(hi);
  auto finish = [&](double temperature, const Nll& at, bool bound) {
    fit.temperature = temperature;
    fit.nll = at.value;
    fit.at_bound = bound;
    fit.nll_at_one = mean_nll(in, y, 1.0).value;
    return fit;
  };
  // L' is increasing: both signs at the ends mean it is 0 throughout (every row's logits are equal),
  // and any T fits; otherwise a non-negative L' at the low end puts the minimum at T_max, etc.
  if (at_lo.d1 >= 0 && at_hi.d1 <= 0) return finish(1.0, mean_nll(in, y, 1.0), false);
  if (at_lo.d1 >= 0) return finish(options.max_temperature, at_lo, true);
  if (at_hi.d1 <= 0) return finish(options.min_temperature, at_hi, true);

  constexpr double kTolerance = 1e-11;  // in log T
  constexpr int kMaxEvaluations = 200;
  double u = std::clamp(0.0, lo, hi), last_step = hi - lo;
  Nll at = evaluate(u);
  while (fit.iterations < kMaxEvaluations) {
    const double phi = at.d1;
    if (phi == 0) break;
    (phi < 0 ? lo : hi) = u;
    // Newton only when it lands strictly inside the bracket and shrinks faster than bisection would.
    const double slope = std::exp(u) * at.d2;  // d L'(e^u) / du
    const double newton = slope > 0 ? u - phi / slope : u;
    const bool take_newton = newton > lo && newton < hi && std::fabs(newton - u) <= 0.5 * std::fabs(last_step);
    const double next = take_newton ? newton : 0.5 * (lo + hi);
    last_step = next - u;
    u = next;
    at = evaluate(u);
    if (std::fabs(last_step) < kTolerance || hi - lo < kTolerance) break;
  }
  return finish(std::exp(-u), at, false);
}

std::vector<double> apply_temperature(ProbsView logits, double temperature) {
  if (!(std::isfinite(temperature) && temperature > 0))
    detail::fail_with("temperature must be a finite number > 0, got ", temperature);
  const Logits in = read_logits(logits);
  std::vector<double> out(in.n * in.k);
  for (std::size_t i = 0; i < in.n; ++i) {
    double s = 0;
    for (std::size_t c = 0; c < in.k; ++c) {
      out[i * in.k + c] = std::exp((in.z[i * in.k + c] - in.zmax[i]) / temperature);
      s += out[i * in.k + c];
    }
    for (std::size_t c = 0; c < in.k; ++c) out[i * in.k + c] /= s;
  }
  return out;
}

}  // namespace ecekde
