#include "stats/synthetic_truth.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/numeric.hpp"
#include "core/parallel.hpp"
#include "core/messages.hpp"

namespace ecekde::detail {

namespace {

constexpr std::size_t kRulePoints = 12;  // Gauss-Legendre points per panel
constexpr int kBisections = 40;          // root refinement: panel width / 2^40
constexpr int kGradingLevels = 16;       // panels of width 2^-1 ... 2^-16 on each side of a kink

double sigmoid(double x) {
  const double e = std::exp(-std::fabs(x));
  return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

double ipow(double x, std::size_t k) {
  double out = 1;
  for (; k; k >>= 1, x *= x)
    if (k & 1) out *= x;
  return out;
}

// log sum_k exp(a_k), ignoring -inf entries.
double log_sum_exp(std::span<const double> a) {
  const double m = *std::max_element(a.begin(), a.end());
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double v : a) s += std::exp(v - m);
  return m + std::log(s);
}

// The van der Corput radical inverse of j in base b: the j-th coordinate of a Halton sequence.
double radical_inverse(std::size_t j, unsigned base) {
  double out = 0, scale = 1.0 / base;
  for (; j; j /= base, scale /= base) out += static_cast<double>(j % base) * scale;
  return out;
}

std::vector<unsigned> first_primes(std::size_t count) {
  std::vector<unsigned> primes;
  for (unsigned c = 2; primes.size() < count; ++c) {
    bool prime = true;
    for (unsigned p : primes) prime = prime && c % p != 0;
    if (prime) primes.push_back(c);
  }
  return primes;
}

// Per-group sums at one node z, laid out [group][quantity].
enum Quantity { kClassDen, kClassNum, kTopDen, kTopNum, kQuantities };

void node_sums(const SyntheticModel& model, const ShapeSample& shape, double z, double* out) {
  const std::size_t k = model.classes;
  const double b = 1 / model.t1, km1 = static_cast<double>(k - 1);
  const std::size_t per_group = shape.size() / shape.groups;
  for (std::size_t g = 0; g < shape.groups; ++g) {
    double den = 0, num = 0, top_den = 0, top_num = 0;
    for (std::size_t m = g * per_group; m < (g + 1) * per_group; ++m) {
      // sigma(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so exp never overflows.
      const double rho = z + shape.shift[m];
      const double t = std::exp(-std::fabs(rho)), inv = 1 / (1 + t);
      const double s_plus = rho >= 0 ? inv : t * inv, s_minus = rho >= 0 ? t * inv : inv;
      const double weight = km1 * s_plus * ipow(s_minus, k - 1);  // density of rho
      const double w = b * rho - shape.log_b[m];
      const double e = std::exp(-std::fabs(w)), q = 1 / (1 + e);
      const double p1 = w >= 0 ? q : e * q;
      const double top = rho >= shape.log_vmax[m] ? weight : 0.0;
      den += weight;
      num += weight * p1;
      top_den += top;
      top_num += top * p1;
    }
    double* o = out + g * kQuantities;
    o[kClassDen] = den;
    o[kClassNum] = num;
    o[kTopDen] = top_den;
    o[kTopNum] = top_num;
  }
}

std::vector<double> all_node_sums(const SyntheticModel& model, const ShapeSample& shape,
                                  std::span<const double> z, int threads) {
  const std::size_t width = shape.groups * kQuantities;
  std::vector<double> out(z.size() * width);
  parallel_for(z.size(), threads, [&](std::size_t i, int) { node_sums(model, shape, z[i], &out[i * width]); });
  return out;
}

// Sums of every group, and of every group but one (the jackknife replicates); replicate 0 is the full
// sample, replicate 1 + g leaves group g out.
struct Replicates {
  std::size_t count;
  std::vector<double> samples;  // per replicate
  std::vector<double> sums;     // [replicate][quantity]

  Replicates(const double* group_sums, std::size_t groups, std::size_t per_group)
      : count(groups + 1), samples(count), sums(count * kQuantities, 0.0) {
    for (std::size_t g = 0; g < groups; ++g)
      for (int q = 0; q < kQuantities; ++q) sums[q] += group_sums[g * kQuantities + q];
    samples[0] = static_cast<double>(groups * per_group);
    for (std::size_t g = 0; g < groups; ++g) {
      samples[1 + g] = static_cast<double>((groups - 1) * per_group);
      for (int q = 0; q < kQuantities; ++q)
        sums[(1 + g) * kQuantities + q] = sums[q] - group_sums[g * kQuantities + q];
    }
  }
  double at(std::size_t r, Quantity q) const { return sums[r * kQuantities + q]; }
};

// den * |num / den - s|^p, the integrand of one truth in the variable z (den = 0 contributes 0).
double integrand(double den, double num, double samples, double s, double p) {
  if (den <= 0) return 0;
  return den / samples * pow_abs(num / den - s, p);
}

// The sign function whose roots are the kinks of |.|^p.
double gap(double den, double num, double s) { return den > 0 ? num / den - s : 0; }

bool even_integer(double p) { return p == std::floor(p) && std::fmod(p, 2.0) == 0; }

// Roots of the class and top-label gaps between consecutive breakpoints, by bisection.
std::vector<double> kinks(const SyntheticModel& model, const ShapeSample& shape, const std::vector<double>& grid,
                          int threads) {
  const double tau = model.t1 * model.t2;
  const std::size_t width = shape.groups * kQuantities;
  const auto gaps_at = [&](std::span<const double> z) {
    const std::vector<double> sums = all_node_sums(model, shape, z, threads);
    std::vector<std::array<double, 2>> out(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
      const Replicates r(&sums[i * width], shape.groups, shape.size() / shape.groups);
      const double s = sigmoid(z[i] / tau);
      out[i] = {gap(r.at(0, kClassDen), r.at(0, kClassNum), s), gap(r.at(0, kTopDen), r.at(0, kTopNum), s)};
    }
    return out;
  };
  const auto at_grid = gaps_at(grid);
  std::vector<double> roots;
  for (int which = 0; which < 2; ++which) {
    for (std::size_t i = 0; i < grid.size(); ++i) {
      if (at_grid[i][which] == 0 && i > 0 && i + 1 < grid.size()) roots.push_back(grid[i]);
      if (i + 1 == grid.size()) break;
      double lo = grid[i], hi = grid[i + 1];
      double g_lo = at_grid[i][which];
      const double g_hi = at_grid[i + 1][which];
      if (g_lo == 0 || g_hi == 0 || (g_lo > 0) == (g_hi > 0)) continue;
      for (int it = 0; it < kBisections; ++it) {
        const double mid = 0.5 * (lo + hi);
        const double g_mid = gaps_at(std::span<const double>(&mid, 1))[0][which];
        if ((g_mid > 0) == (g_lo > 0)) {
          lo = mid;
          g_lo = g_mid;
        } else {
          hi = mid;
        }
      }
      roots.push_back(0.5 * (lo + hi));
    }
  }
  return roots;
}

}  // namespace

GaussLegendre GaussLegendre::make(std::size_t points) {
  GaussLegendre rule;
  rule.nodes.resize(points);
  rule.weights.resize(points);
  const double n = static_cast<double>(points);
  for (std::size_t i = 0; i < (points + 1) / 2; ++i) {
    double x = std::cos(std::numbers::pi * (static_cast<double>(i) + 0.75) / (n + 0.5)), dp = 0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = x;
      for (std::size_t k = 2; k <= points; ++k) {
        const double kk = static_cast<double>(k);
        const double p2 = ((2 * kk - 1) * x * p1 - (kk - 1) * p0) / kk;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (x * p1 - p0) / (x * x - 1);
      const double dx = p1 / dp;
      x -= dx;
      if (std::fabs(dx) < 1e-16) break;
    }
    rule.nodes[i] = -x;
    rule.nodes[points - 1 - i] = x;
    rule.weights[i] = rule.weights[points - 1 - i] = 2 / ((1 - x * x) * dp * dp);
  }
  return rule;
}

ShapeSample ShapeSample::draw(const SyntheticModel& model, std::size_t samples, std::size_t groups,
                              std::uint64_t seed, int threads) {
  ECEKDE_ASSERT(groups >= 1);
  ShapeSample shape;
  shape.groups = groups;
  const std::size_t k = model.classes;
  const std::size_t total = k == 2 ? groups : (samples + groups - 1) / groups * groups;
  shape.shift.assign(total, 0.0);
  shape.log_b.assign(total, 0.0);
  shape.log_vmax.assign(total, 0.0);
  if (k == 2) return shape;  // v = (1)
  const double tau = model.t1 * model.t2;
  const std::size_t dims = k - 2, per_group = total / groups;
  const std::vector<unsigned> bases = first_primes(dims);
  // One uniform random shift per group (Cranley-Patterson rotation of the Halton points).
  std::vector<double> shifts(groups * dims);
  Rng rng(seed);
  for (double& u : shifts) u = rng.uniform();
  parallel_for(groups, threads, [&](std::size_t g, int) {
    std::vector<double> v(k - 1), log_v(k - 1), scaled(k - 1);
    for (std::size_t j = 0; j < per_group; ++j) {
      // Stick-breaking, a smooth map of K - 2 uniforms onto the uniform (K-1)-simplex (smooth maps keep
      // the quasi-Monte Carlo gain): the fraction of what is left taken by v_d is Beta(1, K-2-d),
      // inverted as 1 - (1 - u)^(1 / (K-2-d)).
      double rest = 1;
      for (std::size_t d = 0; d < dims; ++d) {
        double u = radical_inverse(j + 1, bases[d]) + shifts[g * dims + d];
        if (u >= 1) u -= 1;
        const double keep = std::exp(std::log1p(-u) / static_cast<double>(dims - d));
        v[d] = rest * (1 - keep);
        rest *= keep;
      }
      v[k - 2] = rest;
      const std::size_t m = g * per_group + j;
      for (std::size_t c = 0; c + 1 < k; ++c) log_v[c] = std::log(v[c]);
      for (std::size_t c = 0; c + 1 < k; ++c) scaled[c] = log_v[c] / tau;
      shape.shift[m] = tau * log_sum_exp(scaled);
      for (std::size_t c = 0; c + 1 < k; ++c) scaled[c] = log_v[c] / model.t1;
      shape.log_b[m] = log_sum_exp(scaled);
      shape.log_vmax[m] = *std::max_element(log_v.begin(), log_v.end());
    }
  });
  return shape;
}

ScoreIntegrals score_integrals(const SyntheticModel& model, double p, const ShapeSample& shape, int threads) {
  const double tau = model.t1 * model.t2, kd = static_cast<double>(model.classes);
  const std::size_t groups = shape.groups, per_group = shape.size() / groups;

  // z range: the density of rho is below (K-1) e^rho and (K-1) e^(-(K-1) rho), so rho in
  // [-40, 40 / (K-1)] loses less than 1e-16, and rho = z + shift.
  const auto [lo_shift, hi_shift] = std::minmax_element(shape.shift.begin(), shape.shift.end());
  const double z_lo = -40 - *hi_shift, z_hi = 40 / (kd - 1) - *lo_shift;
  // Panels of width 1 where the features are (|z| <= 12), 4 in the exponential tails.
  std::vector<double> grid{z_lo};
  for (double z = std::ceil(z_lo); z < z_hi; z += std::fabs(z) < 12 ? 1 : 4)
    if (z > grid.back()) grid.push_back(z);
  grid.push_back(z_hi);
  // Points where an integrand is not smooth become panel ends, with panels graded geometrically towards
  // them where the integrand behaves like |z - point|^a with a fractional a:
  //  - the roots of d = E[y|f] - f, where |d|^p has a kink unless p is even (beside a root
  //    |d|^p ~ |z - root|^p, analytic for integer p);
  //  - the lowest top score 1/K (z = -tau log(K-1)), where the density of max f starts.
  std::vector<double> breaks = grid;
  const auto add_break = [&](double point, std::initializer_list<double> graded_sides) {
    breaks.push_back(point);
    for (int level = 1; level <= kGradingLevels; ++level)
      for (double side : graded_sides) breaks.push_back(point + side * std::ldexp(1.0, -level));
  };
  if (model.classes > 2) add_break(-tau * std::log(kd - 1), {1.0});  // no top-label mass below
  if (!even_integer(p))
    for (double root : kinks(model, shape, grid, threads))
      p == std::floor(p) ? add_break(root, {}) : add_break(root, {-1.0, 1.0});
  std::sort(breaks.begin(), breaks.end());
  breaks.erase(std::unique(breaks.begin(), breaks.end()), breaks.end());
  breaks.erase(std::remove_if(breaks.begin(), breaks.end(), [&](double b) { return b < z_lo || b > z_hi; }),
               breaks.end());

  // Nodes of the coarse rule (one Gauss-Legendre rule per panel) and of the fine rule (one per half).
  const GaussLegendre rule = GaussLegendre::make(kRulePoints);
  std::vector<double> z, weight;
  std::vector<int> fine;
  const auto add_panel = [&](double a, double b, int is_fine) {
    for (std::size_t i = 0; i < kRulePoints; ++i) {
      z.push_back(0.5 * (a + b) + 0.5 * (b - a) * rule.nodes[i]);
      weight.push_back(0.5 * (b - a) * rule.weights[i]);
      fine.push_back(is_fine);
    }
  };
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i) {
    const double a = breaks[i], b = breaks[i + 1], mid = 0.5 * (a + b);
    add_panel(a, b, 0);
    add_panel(a, mid, 1);
    add_panel(mid, b, 1);
  }
  const std::vector<double> sums = all_node_sums(model, shape, z, threads);

  // integral[rule][truth][replicate]
  const std::size_t reps = groups + 1;
  std::vector<double> integral(2 * 2 * reps, 0.0), mass(2, 0.0);
  for (std::size_t i = 0; i < z.size(); ++i) {
    const Replicates r(&sums[i * groups * kQuantities], groups, per_group);
    const double s = sigmoid(z[i] / tau);
    for (std::size_t rep = 0; rep < reps; ++rep) {
      const double n = r.samples[rep];
      integral[(fine[i] * 2 + 0) * reps + rep] += weight[i] * integrand(r.at(rep, kClassDen), r.at(rep, kClassNum), n, s, p);
      integral[(fine[i] * 2 + 1) * reps + rep] += weight[i] * integrand(r.at(rep, kTopDen), r.at(rep, kTopNum), n, s, p);
    }
    mass[fine[i]] += weight[i] * r.at(0, kClassDen) / r.samples[0];
  }

  ScoreIntegrals out;
  out.evaluations = z.size();
  out.class_mass = mass[1];
  for (int truth = 0; truth < 2; ++truth) {
    const double* coarse = &integral[(0 * 2 + truth) * reps];
    const double* fine_rule = &integral[(1 * 2 + truth) * reps];
    double mean = 0, spread = 0;
    for (std::size_t g = 1; g < reps; ++g) mean += fine_rule[g];
    mean /= static_cast<double>(groups);
    for (std::size_t g = 1; g < reps; ++g) spread += (fine_rule[g] - mean) * (fine_rule[g] - mean);
    TruthValue& t = truth == 0 ? out.marginal : out.top_label;
    t.value = kd * fine_rule[0];
    t.standard_error = kd * std::sqrt(spread * static_cast<double>(groups - 1) / static_cast<double>(groups));
    t.quadrature_error = kd * std::fabs(fine_rule[0] - coarse[0]);
  }
  return out;
}

ConditionalCurves conditional_curves(const SyntheticModel& model, const ShapeSample& shape,
                                     std::span<const double> scores, int threads) {
  const double tau = model.t1 * model.t2, kd = static_cast<double>(model.classes);
  std::vector<double> z(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) z[i] = tau * std::log(scores[i] / (1 - scores[i]));
  const std::vector<double> sums = all_node_sums(model, shape, z, threads);
  ConditionalCurves out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const Replicates r(&sums[i * shape.groups * kQuantities], shape.groups, shape.size() / shape.groups);
    const double jacobian = tau / (scores[i] * (1 - scores[i])), n = r.samples[0];
    const double den = r.at(0, kClassDen), top_den = r.at(0, kTopDen);
    out.class_density.push_back(den / n * jacobian);
    out.class_mean.push_back(den > 0 ? r.at(0, kClassNum) / den : nan);
    out.top_density.push_back(kd * top_den / n * jacobian);
    out.top_mean.push_back(top_den > 0 ? r.at(0, kTopNum) / top_den : nan);
  }
  return out;
}

}  // namespace ecekde::detail
