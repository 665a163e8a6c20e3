#include "zoo.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <numeric>
#include <span>
#include <stdexcept>

namespace ecekde::research {

namespace {

void softmax_in_place(std::vector<double>& z) {
  const double top = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (double& v : z) sum += v = std::isfinite(v) ? std::exp(v - top) : 0.0;
  for (double& v : z) v /= sum;
}

double safe_log(double v) { return v > 0 ? std::log(v) : -std::numeric_limits<double>::infinity(); }

// Base::gaussian_classes: every logit N(0, kLogitSd^2), the label's plus N(param, kBoostSd^2); f = softmax(z / T).
constexpr double kLogitSd = 2, kBoostSd = 2, kTemperature = 0.6;

// P(y = c | f) for Base::gaussian_classes with uniform labels. f fixes the logits up to a common shift a:
// z = z~ + a 1 with z~ = T (log f - mean log f). Given y = c the density is that of all-null logits times
// the ratio N(z_c; m, v) / N(z_c; 0, s^2), v = s^2 + t^2; integrating the shift out (a Gaussian integral)
// leaves log P(y = c | f) = alpha z~_c^2 + (m / v) z~_c + (2 alpha z~_c + m / v)^2 / (4 A) + const, with
// alpha = t^2 / (2 s^2 v) and A = K / (2 s^2) - alpha.
void gaussian_classes_posterior(std::size_t k, double separation, const double* f, double* q) {
  const double s2 = kLogitSd * kLogitSd, v = s2 + kBoostSd * kBoostSd;
  const double alpha = kBoostSd * kBoostSd / (2 * s2 * v), a = static_cast<double>(k) / (2 * s2) - alpha;
  double mean_log = 0;
  for (std::size_t c = 0; c < k; ++c) mean_log += std::log(std::max(f[c], 1e-300)) / static_cast<double>(k);
  std::vector<double> z(k);
  for (std::size_t c = 0; c < k; ++c) {
    const double u = kTemperature * (std::log(std::max(f[c], 1e-300)) - mean_log);
    const double b = 2 * alpha * u + separation / v;
    z[c] = alpha * u * u + separation / v * u + b * b / (4 * a);
  }
  softmax_in_place(z);
  std::copy(z.begin(), z.end(), q);
}

// The map's random parts, drawn once per model from its seed.
struct MapParts {
  std::vector<double> bias;  // K
  std::vector<double> w;     // K x K
  std::vector<double> places;        // local maps: count x K bump centres, or K ripple phases
  std::vector<std::size_t> classes;  // local maps: each bump's class, or a step's class
};

void draw_base(const ZooModel& m, Rng& rng, double* f);

MapParts map_parts(const ZooModel& m) {
  Rng rng = Rng::stream(m.seed, 0x7a6f6fULL);
  MapParts parts;
  if (m.map == Map::class_bias)
    for (std::size_t c = 0; c < m.k; ++c) parts.bias.push_back(m.map_param * rng.normal());
  if (m.map == Map::confusion) {
    parts.w.assign(m.k * m.k, 0.0);
    for (std::size_t a = 0; a < m.k; ++a)
      for (std::size_t b = 0; b < m.k; ++b) parts.w[a * m.k + b] = (a == b) + m.map_param * rng.normal();
  }
  if (m.map == Map::bump) {  // each centre a draw of the base itself, so that the bump sits where f lies
    parts.places.resize(m.count * m.k);
    for (std::size_t b = 0; b < m.count; ++b) {
      draw_base(m, rng, &parts.places[b * m.k]);
      parts.classes.push_back(rng.below(m.k));
    }
  }
  if (m.map == Map::step) parts.classes.push_back(rng.below(m.k));
  if (m.map == Map::ripple)
    for (std::size_t c = 0; c < m.k; ++c) parts.places.push_back(2 * std::numbers::pi * rng.uniform());
  return parts;
}

void draw_base(const ZooModel& m, Rng& rng, double* f) {
  const std::size_t K = m.k;
  std::vector<double> z(K);
  switch (m.base) {
    case Base::dirichlet:
    case Base::imbalanced: {
      double sum = 0;
      for (std::size_t c = 0; c < K; ++c) {
        const double a = m.base == Base::dirichlet
                             ? m.base_param
                             : m.base_param * static_cast<double>(K - c) / static_cast<double>(K) + 0.1;
        sum += z[c] = rng.gamma(a);
      }
      if (!(sum > 0)) {  // every gamma draw underflowed: a vertex, chosen uniformly
        std::fill(z.begin(), z.end(), 0.0);
        z[rng.below(K)] = sum = 1;
      }
      for (std::size_t c = 0; c < K; ++c) f[c] = z[c] / sum;
      return;
    }
    case Base::logits:
    case Base::peaked:
      for (std::size_t c = 0; c < K; ++c) z[c] = (m.base == Base::logits ? m.base_param : 1.0) * rng.normal();
      if (m.base == Base::peaked) z[rng.below(K)] += m.base_param;
      softmax_in_place(z);
      std::copy(z.begin(), z.end(), f);
      return;
    case Base::tempered_uniform: {
      // spacings of sorted uniforms, then temperature
      std::vector<double> u(K - 1);
      for (double& v : u) v = rng.uniform();
      std::sort(u.begin(), u.end());
      for (std::size_t c = 0; c < K; ++c) {
        const double hi = c + 1 < K ? u[c] : 1.0, lo = c > 0 ? u[c - 1] : 0.0;
        z[c] = safe_log(hi - lo) / m.base_param;
      }
      softmax_in_place(z);
      std::copy(z.begin(), z.end(), f);
      return;
    }
    case Base::truncated_logits: {
      for (std::size_t c = 0; c < K; ++c) z[c] = m.base_param * rng.normal();
      std::vector<double> sorted = z;
      const std::size_t kept = std::max<std::size_t>(2, (K + 2) / 3);
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(kept - 1), sorted.end(),
                       std::greater<>());
      const double smallest_kept = sorted[kept - 1];
      for (double& v : z)
        if (v < smallest_kept) v = -std::numeric_limits<double>::infinity();
      softmax_in_place(z);
      std::copy(z.begin(), z.end(), f);
      return;
    }
    case Base::gaussian_classes: {
      const std::size_t y = rng.below(K);
      for (std::size_t c = 0; c < K; ++c) z[c] = kLogitSd * rng.normal();
      z[y] += m.base_param + kBoostSd * rng.normal();
      for (double& v : z) v /= kTemperature;
      softmax_in_place(z);
      std::copy(z.begin(), z.end(), f);
      return;
    }
  }
}

// q = (1 - s) f + s e_t in place: a share s of the probability moved to class t (stays on the simplex).
void move_towards(std::size_t k, double s, std::size_t t, double* q) {
  for (std::size_t c = 0; c < k; ++c) q[c] *= 1 - s;
  q[t] += s;
}

// The local maps, on f already tempered (in q).
void apply_local_map(const ZooModel& m, const MapParts& parts, double* q) {
  const std::size_t K = m.k;
  if (m.map == Map::bump) {
    for (std::size_t b = 0; b < m.count; ++b) {
      double d2 = 0;
      for (std::size_t c = 0; c < K; ++c) d2 += (q[c] - parts.places[b * K + c]) * (q[c] - parts.places[b * K + c]);
      move_towards(K, m.map_param * std::exp(-d2 / (2 * m.scale * m.scale)), parts.classes[b], q);
    }
  } else if (m.map == Map::step) {
    const std::size_t j = parts.classes[0];
    if (q[j] > m.scale) move_towards(K, m.map_param, (j + 1) % K, q);
  } else {
    double sum = 0;
    for (std::size_t c = 0; c < K; ++c)
      sum += q[c] *= 1 + m.map_param * std::sin(2 * std::numbers::pi * m.scale * q[c] + parts.places[c]);
    for (std::size_t c = 0; c < K; ++c) q[c] /= sum;
  }
}

void apply_map(const ZooModel& m, const MapParts& parts, const double* f, double* q) {
  const std::size_t K = m.k;
  std::vector<double> z(K);
  switch (m.map) {
    case Map::bump:
    case Map::step:
    case Map::ripple:
      for (std::size_t c = 0; c < K; ++c) z[c] = safe_log(f[c]) / m.pre_temperature;
      softmax_in_place(z);
      std::copy(z.begin(), z.end(), q);
      apply_local_map(m, parts, q);
      return;
    case Map::identity:
      std::copy_n(f, K, q);
      return;
    case Map::temperature:
    case Map::class_bias:
      for (std::size_t c = 0; c < K; ++c)
        z[c] = m.map == Map::temperature ? safe_log(f[c]) / m.map_param : safe_log(f[c]) + parts.bias[c];
      break;
    case Map::confusion:
      for (std::size_t a = 0; a < K; ++a) {
        z[a] = 0;
        for (std::size_t b = 0; b < K; ++b) z[a] += parts.w[a * K + b] * std::log(std::max(f[b], 1e-300));
      }
      break;
    case Map::top_power: {
      const std::size_t top = static_cast<std::size_t>(std::max_element(f, f + K) - f);
      const double ft = f[top], qt = std::pow(ft, m.map_param);
      const double rest = 1 - ft, scale = rest > 0 ? (1 - qt) / rest : 0.0;
      for (std::size_t c = 0; c < K; ++c) q[c] = c == top ? qt : f[c] * scale;
      return;
    }
    case Map::mix_uniform:
      for (std::size_t c = 0; c < K; ++c) q[c] = (1 - m.map_param) * f[c] + m.map_param / static_cast<double>(K);
      return;
    case Map::posterior:
      if (m.base != Base::gaussian_classes) throw std::invalid_argument("Map::posterior needs Base::gaussian_classes");
      gaussian_classes_posterior(K, m.base_param, f, q);
      return;
    case Map::wiggle: {
      double sum = 0;
      for (std::size_t c = 0; c < K; ++c) sum += q[c] = f[c] * (1 + m.map_param * std::sin(2 * std::numbers::pi * f[c]));
      for (std::size_t c = 0; c < K; ++c) q[c] /= sum;
      return;
    }
  }
  softmax_in_place(z);
  std::copy(z.begin(), z.end(), q);
}

double pow_abs(double d, double p) { return p == 1 ? std::fabs(d) : p == 2 ? d * d : std::pow(std::fabs(d), p); }

// mean_j |m(s_j) - s_j|^p for each p, with m the local-linear fit of t on s over sorted windows of
// 2 sqrt(draws) + 1 neighbours (draws: st.size() unless st pools several classes' draws).
std::vector<double> one_dimensional_truth(std::vector<std::pair<double, double>>& st, const std::vector<double>& ps,
                                          std::size_t draws) {
  std::sort(st.begin(), st.end());
  const std::size_t N = st.size();
  const std::size_t w = std::min<std::size_t>(N, 2 * static_cast<std::size_t>(std::sqrt(static_cast<double>(draws))) + 1);
  std::vector<double> cs(N + 1, 0), ct(N + 1, 0), css(N + 1, 0), cst(N + 1, 0);
  for (std::size_t i = 0; i < N; ++i) {
    const double s = st[i].first, t = st[i].second;
    cs[i + 1] = cs[i] + s;
    ct[i + 1] = ct[i] + t;
    css[i + 1] = css[i] + s * s;
    cst[i + 1] = cst[i] + s * t;
  }
  std::vector<double> out(ps.size(), 0.0);
  const double W = static_cast<double>(w);
  // A run of equal s longer than a window (f_c = 0 of truncated predictions) is its own neighbourhood:
  // E[q | s] is the run's mean of t. A window would take the mean of the neighbours the sort put next to
  // each other by t.
  for (std::size_t begin = 0; begin < N;) {
    const double s = st[begin].first;
    std::size_t end = begin + 1;
    while (end < N && st[end].first == s) ++end;
    for (std::size_t i = begin; i < end; ++i) {
      double m = 0;
      if (end - begin > w) {
        m = (ct[end] - ct[begin]) / static_cast<double>(end - begin);
      } else {
        const std::size_t lo = std::min(i >= w / 2 ? i - w / 2 : 0, N - w), hi = lo + w;
        const double ms = (cs[hi] - cs[lo]) / W, mt = (ct[hi] - ct[lo]) / W;
        const double vs = (css[hi] - css[lo]) / W - ms * ms, cv = (cst[hi] - cst[lo]) / W - ms * mt;
        m = mt + (vs > 1e-300 ? cv / vs : 0.0) * (s - ms);
      }
      for (std::size_t a = 0; a < ps.size(); ++a) out[a] += pow_abs(m - s, ps[a]);
    }
    begin = end;
  }
  for (double& v : out) v /= static_cast<double>(N);
  return out;
}

}  // namespace

ZooData sample(const ZooModel& model, std::size_t n, std::uint64_t seed) {
  const std::size_t K = model.k;
  const MapParts parts = map_parts(model);
  ZooData d;
  d.n = n;
  d.k = K;
  d.probs.resize(n * K);
  d.calibrated.resize(n * K);
  d.labels.resize(n);
  Rng rng(seed);
  for (std::size_t j = 0; j < n; ++j) {
    double* f = d.probs.data() + j * K;
    double* q = d.calibrated.data() + j * K;
    draw_base(model, rng, f);
    apply_map(model, parts, f, q);
    const double u = rng.uniform();
    double acc = 0;
    std::size_t y = K - 1;
    for (std::size_t c = 0; c < K; ++c) {
      acc += q[c];
      if (u < acc) {
        y = c;
        break;
      }
    }
    d.labels[j] = static_cast<std::int64_t>(y);
  }
  return d;
}

std::vector<double> calibration_map(const ZooModel& model, const double* f) {
  std::vector<double> q(model.k);
  apply_map(model, map_parts(model), f, q.data());
  return q;
}

std::vector<ZooTruth> truth(const ZooModel& model, const std::vector<double>& ps, std::size_t samples,
                            std::uint64_t seed) {
  const std::size_t K = model.k, N = samples;
  const MapParts parts = map_parts(model);
  Rng rng(seed);
  std::vector<double> f(N * K), q(N * K);
  std::vector<std::vector<double>> canonical(ps.size(), std::vector<double>(N));
  for (std::size_t j = 0; j < N; ++j) {
    draw_base(model, rng, &f[j * K]);
    apply_map(model, parts, &f[j * K], &q[j * K]);
    for (std::size_t a = 0; a < ps.size(); ++a) {
      double e = 0;
      for (std::size_t c = 0; c < K; ++c) e += pow_abs(q[j * K + c] - f[j * K + c], ps[a]);
      canonical[a][j] = e;
    }
  }
  std::vector<ZooTruth> out(ps.size());
  for (std::size_t a = 0; a < ps.size(); ++a) {
    out[a].p = ps[a];
    const double mean = std::accumulate(canonical[a].begin(), canonical[a].end(), 0.0) / static_cast<double>(N);
    double var = 0;
    for (double v : canonical[a]) var += (v - mean) * (v - mean);
    out[a].canonical = mean;
    out[a].canonical_standard_error = std::sqrt(var / static_cast<double>(N - 1) / static_cast<double>(N));
  }
  std::vector<std::pair<double, double>> st(N);
  if (model.base == Base::gaussian_classes) {
    // Exchangeable classes: one map, K times its mean. The window stays that of one class's N draws: the
    // pairs that carry the error (a row's label's, f_c near 1) are 1 in K, and a window of 2 sqrt(N K)
    // spanned a quarter of them (CE_2^2 read 11% low at K = 1,000 against fine bins).
    std::vector<std::pair<double, double>> pooled(N * K);
    for (std::size_t i = 0; i < N * K; ++i) pooled[i] = {f[i], q[i]};
    const std::vector<double> v = one_dimensional_truth(pooled, ps, N);
    for (std::size_t a = 0; a < ps.size(); ++a) out[a].marginal = static_cast<double>(K) * v[a];
  } else {
    for (std::size_t c = 0; c < K; ++c) {
      for (std::size_t j = 0; j < N; ++j) st[j] = {f[j * K + c], q[j * K + c]};
      const std::vector<double> v = one_dimensional_truth(st, ps, N);
      for (std::size_t a = 0; a < ps.size(); ++a) out[a].marginal += v[a];
    }
  }
  for (std::size_t j = 0; j < N; ++j) {
    const std::size_t top = static_cast<std::size_t>(std::max_element(&f[j * K], &f[j * K] + K) - &f[j * K]);
    st[j] = {f[j * K + top], q[j * K + top]};
  }
  const std::vector<double> v = one_dimensional_truth(st, ps, N);
  for (std::size_t a = 0; a < ps.size(); ++a) out[a].top_label = v[a];
  return out;
}

std::vector<ZooModel> family(std::size_t k) {
  return {
      {"calibrated-flat", k, Base::dirichlet, 1.0, Map::identity, 0, 0},
      {"calibrated-peaked", k, Base::peaked, 4.0, Map::identity, 0, 0},
      {"calibrated-logits", k, Base::logits, 2.0, Map::identity, 0, 0},
      {"paper-section4", k, Base::tempered_uniform, 0.36, Map::temperature, 1 / 0.6, 0},
      {"flat-underconfident", k, Base::dirichlet, 1.0, Map::temperature, 0.6, 0},
      {"sparse-overconfident", k, Base::dirichlet, 0.3, Map::temperature, 1.5, 0},
      {"peaked-overconfident", k, Base::peaked, 4.0, Map::temperature, 1.5, 0},
      {"logits-underconfident", k, Base::logits, 2.0, Map::temperature, 0.7, 0},
      {"class-bias", k, Base::dirichlet, 1.0, Map::class_bias, 0.5, 3},
      {"top-class-only", k, Base::peaked, 3.0, Map::top_power, 1.5, 0},
      {"mixed-with-uniform", k, Base::dirichlet, 0.5, Map::mix_uniform, 0.2, 0},
      {"wiggle", k, Base::dirichlet, 1.0, Map::wiggle, 0.5, 0},
      {"confusion", k, Base::logits, 2.0, Map::confusion, 0.3, 5},
      {"imbalanced-overconfident", k, Base::imbalanced, 2.0, Map::temperature, 1.3, 0},
  };
}

std::vector<ZooModel> held_out(std::size_t k) {
  return {
      {"calibrated-sparse", k, Base::dirichlet, 0.3, Map::identity, 0, 0},
      {"calibrated-imbalanced", k, Base::imbalanced, 2.0, Map::identity, 0, 0},
      {"peaked-underconfident", k, Base::peaked, 5.0, Map::temperature, 0.7, 0},
      {"logits-bias", k, Base::logits, 1.5, Map::class_bias, 0.8, 11},
      {"sparse-confusion", k, Base::dirichlet, 0.5, Map::confusion, 0.5, 7},
      {"peaked-wiggle", k, Base::peaked, 3.0, Map::wiggle, 0.3, 0},
      {"imbalanced-mix", k, Base::imbalanced, 1.0, Map::mix_uniform, 0.1, 0},
      {"tempered-top", k, Base::tempered_uniform, 0.5, Map::top_power, 2.0, 0},
      {"logits-strong-over", k, Base::logits, 3.0, Map::temperature, 2.0, 0},
  };
}

std::vector<ZooModel> saturated(std::size_t k) {
  return {
      {"truncated-calibrated", k, Base::truncated_logits, 2.0, Map::identity, 0, 0},
      {"truncated-leak", k, Base::truncated_logits, 2.0, Map::mix_uniform, 0.1, 0},
      {"truncated-overconfident", k, Base::truncated_logits, 2.0, Map::temperature, 1.5, 0},
      {"truncated-class-bias", k, Base::truncated_logits, 2.0, Map::class_bias, 0.5, 3},
  };
}

std::vector<ZooModel> local_maps(std::size_t k, std::uint64_t draw) {
  Rng rng = Rng::stream(draw, 0x6c6f63616cULL);
  auto within = [&rng](double lo, double hi) { return lo + (hi - lo) * rng.uniform(); };
  // Distances between Dirichlet(1) draws shrink as 1 / sqrt(K): widths in those units.
  const double unit = std::sqrt(2.0 / static_cast<double>(k));
  auto seed = [&rng] { return rng.next(); };
  return {
      {"calibrated", k, Base::dirichlet, 1.0, Map::identity, 0, 0},
      {"bump-narrow", k, Base::dirichlet, 1.0, Map::bump, within(0.25, 0.4), seed(), within(0.15, 0.25) * unit},
      {"bump-wide", k, Base::dirichlet, 1.0, Map::bump, within(0.2, 0.33), seed(), within(0.4, 0.7) * unit},
      {"bump-sparse", k, Base::dirichlet, 0.5, Map::bump, within(0.25, 0.4), seed(), within(0.2, 0.4) * unit},
      {"bumps-three", k, Base::dirichlet, 1.0, Map::bump, within(0.2, 0.33), seed(), within(0.2, 0.35) * unit, 3},
      {"step", k, Base::dirichlet, 1.0, Map::step, within(0.15, 0.3), seed(), within(1.0, 2.5) / static_cast<double>(k)},
      {"ripple", k, Base::dirichlet, 1.0, Map::ripple, within(0.2, 0.4), seed(), within(2.0, 4.0)},
      {"tempered-bump", k, Base::dirichlet, 1.0, Map::bump, within(0.2, 0.33), seed(), within(0.25, 0.45) * unit, 1,
       within(1.2, 1.5)},
      {"tempered-step", k, Base::dirichlet, 0.7, Map::step, within(0.15, 0.3), seed(),
       within(1.0, 2.5) / static_cast<double>(k), 1, within(0.7, 0.85)},
  };
}

ZooModel imagenet_like(std::size_t k) { return {"imagenet-like", k, Base::gaussian_classes, 9.0, Map::posterior, 0, 0}; }

ZooModel model_named(const std::string& name, std::size_t k) {
  for (const ZooModel& m : family(k))
    if (m.name == name) return m;
  throw std::invalid_argument("no zoo model named " + name);
}

CellModel cell_model(std::size_t cells, std::size_t k, double gamma, std::uint64_t seed) {
  Rng rng(seed);
  CellModel m;
  m.k = k;
  double total = 0;
  for (std::size_t v = 0; v < cells; ++v) {
    double sum = 0, mapped = 0;
    for (std::size_t c = 0; c < k; ++c) sum += m.f.emplace_back(0.05 + rng.uniform());
    for (std::size_t c = 0; c < k; ++c) mapped += m.q.emplace_back(std::pow(m.f[v * k + c] /= sum, gamma));
    for (std::size_t c = 0; c < k; ++c) m.q[v * k + c] /= mapped;
    total += m.pi.emplace_back(0.2 + rng.uniform());
  }
  for (double& p : m.pi) p /= total;
  return m;
}

ZooData sample(const CellModel& model, std::size_t n, std::uint64_t seed) {
  const std::size_t K = model.k;
  ZooData d;
  d.n = n;
  d.k = K;
  Rng rng(seed);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t v = rng.categorical(model.pi);
    const auto row = static_cast<std::ptrdiff_t>(v * K);
    d.probs.insert(d.probs.end(), model.f.begin() + row, model.f.begin() + row + static_cast<std::ptrdiff_t>(K));
    d.calibrated.insert(d.calibrated.end(), model.q.begin() + row, model.q.begin() + row + static_cast<std::ptrdiff_t>(K));
    d.labels.push_back(static_cast<std::int64_t>(rng.categorical(std::span<const double>(&model.q[v * K], K))));
  }
  return d;
}

ZooTruth truth(const CellModel& model, double p) {
  ZooTruth t;
  t.p = p;
  for (std::size_t v = 0; v < model.pi.size(); ++v) {
    const double* f = &model.f[v * model.k];
    const double* q = &model.q[v * model.k];
    const auto top = static_cast<std::size_t>(std::max_element(f, f + model.k) - f);
    for (std::size_t c = 0; c < model.k; ++c) {
      const double term = model.pi[v] * std::pow(std::fabs(q[c] - f[c]), p);
      t.canonical += term;
      if (c == top) t.top_label += term;
    }
  }
  t.marginal = t.canonical;
  return t;
}

}  // namespace ecekde::research
