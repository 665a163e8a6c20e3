#include "ecekde/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/inputs.hpp"
#include "core/numeric.hpp"
#include "core/parallel.hpp"
#include "core/messages.hpp"
#include "stats/synthetic_truth.hpp"

namespace ecekde {

namespace {

constexpr std::size_t kRowsPerStream = 4096;  // rows drawn from one random stream

void check_model(const SyntheticModel& model) {
  if (model.classes < 2) detail::fail_with("synthetic model: classes must be >= 2, got ", model.classes);
  if (!(std::isfinite(model.t1) && model.t1 > 0))
    detail::fail_with("synthetic model: t1 must be a finite number > 0, got ", model.t1);
  if (!(std::isfinite(model.t2) && model.t2 > 0))
    detail::fail_with("synthetic model: t2 must be a finite number > 0, got ", model.t2);
}

// One draw of (p1, f) from u.
struct Row {
  std::vector<double> u, p1, f;
  explicit Row(std::size_t k) : u(k), p1(k), f(k) {}
  void draw(Rng& rng, const SyntheticModel& model) {
    uniform_simplex(rng, u);
    temperature_scale(u, model.t1, p1);
    temperature_scale(p1, model.t2, f);
  }
};

}  // namespace

void uniform_simplex(Rng& rng, std::span<double> out) {
  const std::size_t k = out.size();
  if (k == 0) return;
  // The K - 1 sorted uniforms go to out[0, K-1); the spacings overwrite them from the top down.
  for (std::size_t c = 0; c + 1 < k; ++c) out[c] = rng.uniform();
  std::sort(out.begin(), out.end() - 1);
  out[k - 1] = 1;
  for (std::size_t c = k - 1; c > 0; --c) out[c] -= out[c - 1];
}

void temperature_scale(std::span<const double> q, double t, std::span<double> out) {
  ECEKDE_ASSERT(q.size() == out.size() && t > 0);
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < q.size(); ++c) {
    out[c] = q[c] > 0 ? std::log(q[c]) / t : -std::numeric_limits<double>::infinity();
    top = std::max(top, out[c]);
  }
  ECEKDE_ASSERT(std::isfinite(top));
  double sum = 0;
  for (double& v : out) sum += (v = std::exp(v - top));
  for (double& v : out) v /= sum;
}

SyntheticData generate_synthetic(const SyntheticModel& model, std::size_t n, std::uint64_t seed, int threads) {
  check_model(model);
  if (n < 1) detail::fail_with("generate_synthetic: n must be >= 1, got ", n);
  const std::size_t k = model.classes;
  SyntheticData data;
  data.n = n;
  data.k = k;
  data.probs.resize(n * k);
  data.calibrated.resize(n * k);
  data.labels.resize(n);
  const std::size_t streams = (n + kRowsPerStream - 1) / kRowsPerStream;
  detail::parallel_for(streams, threads, [&](std::size_t stream, int) {
    Rng rng = Rng::stream(seed, stream);
    Row row(k);
    for (std::size_t r = stream * kRowsPerStream; r < std::min(n, (stream + 1) * kRowsPerStream); ++r) {
      row.draw(rng, model);
      std::copy(row.f.begin(), row.f.end(), data.probs.begin() + static_cast<std::ptrdiff_t>(r * k));
      std::copy(row.p1.begin(), row.p1.end(), data.calibrated.begin() + static_cast<std::ptrdiff_t>(r * k));
      data.labels[r] = static_cast<std::int64_t>(rng.categorical(row.p1));
    }
  });
  return data;
}

GroundTruth synthetic_ground_truth(const SyntheticModel& model, const GroundTruthOptions& options) {
  check_model(model);
  detail::check_p(options.p);
  if (options.canonical_samples < 2)
    detail::fail_with("ground truth: canonical_samples must be >= 2, got ", options.canonical_samples);
  if (options.jackknife_groups < 2)
    detail::fail_with("ground truth: jackknife_groups must be >= 2, got ", options.jackknife_groups);
  if (options.inner_samples < 1)
    detail::fail_with("ground truth: inner_samples must be >= 1, got ", options.inner_samples);
  const int threads = detail::resolve_threads(options.threads);

  GroundTruth truth;
  truth.p = options.p;

  // Canonical: plain Monte Carlo over u, with streams 2 * s (the shape sample uses odd streams).
  const std::size_t n = options.canonical_samples, k = model.classes;
  const std::size_t streams = (n + kRowsPerStream - 1) / kRowsPerStream;
  std::vector<double> sum(streams), sum2(streams);
  detail::parallel_for(streams, threads, [&](std::size_t stream, int) {
    Rng rng = Rng::stream(options.seed, 2 * stream);
    Row row(k);
    double s = 0, s2 = 0;
    for (std::size_t r = stream * kRowsPerStream; r < std::min(n, (stream + 1) * kRowsPerStream); ++r) {
      row.draw(rng, model);
      double d = 0;
      for (std::size_t c = 0; c < k; ++c) d += detail::pow_abs(row.p1[c] - row.f[c], options.p);
      s += d;
      s2 += d * d;
    }
    sum[stream] = s;
    sum2[stream] = s2;
  });
  const double nd = static_cast<double>(n);
  const double mean = detail::accurate_sum(sum) / nd;
  const double var = std::max(0.0, (detail::accurate_sum(sum2) - nd * mean * mean) / (nd - 1));
  truth.canonical = {mean, std::sqrt(var / nd), 0};

  const detail::ShapeSample shape = detail::ShapeSample::draw(
      model, options.inner_samples, options.jackknife_groups, options.seed ^ 0x5bd1e995u, threads);
  const detail::ScoreIntegrals integrals = detail::score_integrals(model, options.p, shape, threads);
  truth.marginal = integrals.marginal;
  truth.top_label = integrals.top_label;
  return truth;
}

}  // namespace ecekde
