// Figure 3 of the paper: the bias of the sharpness term E[y | f]^2 at one location (f = 0.17, Beta kernel,
// bandwidth 0.5) as a function of n, for the partially debiased ratio of Eq. 7, the paper's debiasing
// (Appendix D) and the complete second-order correction. Setup, protocols and results:
// docs/validation.md ("Figure 3").
//
// Data: the binary case of the synthetic model, u ~ U(0, 1), p1 = T_t1(u) the calibrated score, y ~
// Bernoulli(p1), f = T_t2(p1) = sigmoid(logit(p1) / t2) the uncalibrated score (the paper's "sigmoidal
// function applied to the calibrated data"). At the location the estimators see X_i = k(0.17; f_i) and
// Y_i = X_i y_i and estimate R = (E[X y] / E[X])^2, the sharpness term at the fixed bandwidth.
//
// Usage: ecekde_figure3 [--reps N] [--samples-per-n S] [--truth-samples T] [--seed S] [--threads T]
//                       [--out FILE.csv]
// Every size n runs max(reps, S / n) repetitions; the first `reps` of them form the paper's protocol.
#include <math.h>  // lgamma_r: lgamma writes the global signgam, which threads would race on

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "debias.hpp"
#include "ecekde/error.hpp"
#include "ecekde/synthetic.hpp"
#include "stats/synthetic_truth.hpp"

namespace {

using ecekde::RatioDebiasing;

struct Setup {
  double t1 = 0.6, t2 = 0.6, location = 0.17, bandwidth = 0.5;
};

double log_gamma(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

// The Beta kernel of the paper (alpha = f / h + 1, beta = (1 - f) / h + 1) centred at f, read at `at`.
double beta_kernel(double at, double f, double h) {
  const double a = f / h + 1, b = (1 - f) / h + 1;
  return std::exp(log_gamma(a + b) - log_gamma(a) - log_gamma(b) + (a - 1) * std::log(at) +
                  (b - 1) * std::log1p(-at));
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// Draws (X, y) = (k(location; f), y): the K = 2 synthetic model in closed form. With z = logit(u_1),
// T_t(u) = (sigmoid(-z / t), sigmoid(z / t)), so p1 = sigmoid(z / t1) and f = sigmoid(z / (t1 t2)).
// check_against_library() confirms the closed form against ecekde::temperature_scale.
class Sampler {
 public:
  explicit Sampler(const Setup& s)
      : s_(s), log_norm_(log_gamma(1 / s.bandwidth + 2)), log_at_(std::log(s.location)),
        log_rest_(std::log1p(-s.location)) {}

  void draw(ecekde::Rng& rng, double& k, bool& positive) const {
    const double u = rng.uniform();
    const double z = std::log(u) - std::log1p(-u);
    positive = rng.uniform() < sigmoid(z / s_.t1);
    k = kernel(sigmoid(z / (s_.t1 * s_.t2)));
  }

  // beta_kernel(location, f, bandwidth) with the parts that do not depend on f computed once.
  double kernel(double f) const {
    const double h = s_.bandwidth;
    return std::exp(log_norm_ - log_gamma(f / h + 1) - log_gamma((1 - f) / h + 1) + (f / h) * log_at_ +
                    ((1 - f) / h) * log_rest_);
  }

  void check_against_library() const {
    for (double u : {1e-9, 0.01, 0.3, 0.5, 0.77, 1 - 1e-9}) {
      const double z = std::log(u) - std::log1p(-u), q[2] = {1 - u, u};
      double p1[2], f[2];
      ecekde::temperature_scale(q, s_.t1, p1);
      ecekde::temperature_scale(p1, s_.t2, f);
      const double f_closed = sigmoid(z / (s_.t1 * s_.t2));
      if (std::fabs(p1[1] - sigmoid(z / s_.t1)) > 1e-14 || std::fabs(f[1] - f_closed) > 1e-14)
        ecekde::fail("closed-form sampler disagrees with temperature_scale at u = " + std::to_string(u));
      if (std::fabs(kernel(f_closed) - beta_kernel(s_.location, f_closed, s_.bandwidth)) > 1e-13 * kernel(f_closed))
        ecekde::fail("kernel shortcut disagrees with the Beta density");
    }
  }

 private:
  Setup s_;
  double log_norm_, log_at_, log_rest_;
};

// Moments of (X, Y) = (k(loc; f), k(loc; f) y) by Gauss-Legendre quadrature over z = logit(u) (u ~ U(0,1)
// has density sigma(z) sigma(-z) in z): E[X^a y] = E[X^a p1] for a >= 1, since y^2 = y.
struct Population {
  double mu_x, mu_y, var_x, var_y, cov_xy, m30, m21;
  double target() const { return mu_y * mu_y / (mu_x * mu_x); }
  // E[plain ratio] = R + b1 / n + b2 / n^2 + O(1/n^3) (docs/validation.md).
  double b1() const {
    const double r = target(), ra = cov_xy / (mu_x * mu_y), rb = var_x / (mu_x * mu_x);
    return 4 * r * (rb - ra);
  }
  double b2() const {
    const double r = target(), ra = cov_xy / (mu_x * mu_y), rb = var_x / (mu_x * mu_x);
    return r * (26 * rb * rb + 6 * ra * ra - 32 * rb * ra - 8 * m30 / std::pow(mu_x, 3) +
                8 * m21 / (mu_x * mu_x * mu_y));
  }
};

Population population(const Setup& s) {
  const auto rule = ecekde::detail::GaussLegendre::make(20);
  double e[4][2] = {};  // e[a][0] = E[X^a], e[a][1] = E[X^a p1]
  double mass = 0;
  for (double lo = -40; lo < 40; lo += 0.25) {
    for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
      const double z = lo + 0.125 * (1 + rule.nodes[i]);
      const double w = 0.125 * rule.weights[i] * sigmoid(z) * sigmoid(-z);
      const double p1 = sigmoid(z / s.t1), f = sigmoid(z / (s.t1 * s.t2));
      const double x = beta_kernel(s.location, f, s.bandwidth);
      mass += w;
      for (int a = 0; a < 4; ++a) {
        e[a][0] += w * std::pow(x, a);
        e[a][1] += w * std::pow(x, a) * p1;
      }
    }
  }
  Population p;
  p.mu_x = e[1][0];
  p.mu_y = e[1][1];
  p.var_x = e[2][0] - p.mu_x * p.mu_x;
  p.var_y = e[2][1] - p.mu_y * p.mu_y;
  p.cov_xy = e[2][1] - p.mu_x * p.mu_y;
  p.m30 = e[3][0] - 3 * p.mu_x * e[2][0] + 2 * std::pow(p.mu_x, 3);
  // E[(X - mu_x)^2 (Y - mu_y)] = E[X^3 p1] - 2 mu_x E[X^2 p1] + mu_x^2 mu_y - mu_y var_x
  p.m21 = e[3][1] - 2 * p.mu_x * e[2][1] + p.mu_x * p.mu_x * p.mu_y - p.mu_y * p.var_x;
  if (std::fabs(mass - 1) > 1e-12) ecekde::fail("quadrature mass is " + std::to_string(mass));
  return p;
}

// The paper's ground truth: the partially debiased ratio on one sample of `samples` points, from its
// power sums (the same formula as sharpness_at with RatioDebiasing::none, without storing the sample).
double paper_ground_truth(const Sampler& sampler, std::uint64_t samples, std::uint64_t seed, int threads) {
  const std::uint64_t chunk = 1 << 20, chunks = (samples + chunk - 1) / chunk;
  std::vector<std::array<double, 4>> sums(chunks);
  ecekde::detail::parallel_for(chunks, threads, [&](std::size_t c, int) {
    ecekde::Rng rng = ecekde::Rng::stream(seed, c);
    std::array<double, 4> acc{};
    for (std::uint64_t i = c * chunk; i < std::min(samples, (c + 1) * chunk); ++i) {
      double k;
      bool positive;
      sampler.draw(rng, k, positive);
      const double ky = positive ? k : 0.0;
      acc[0] += k, acc[1] += k * k, acc[2] += ky, acc[3] += ky * ky;
    }
    sums[c] = acc;
  });
  std::array<double, 4> total{};
  for (const auto& a : sums)
    for (int q = 0; q < 4; ++q) total[q] += a[q];
  return (total[2] * total[2] - total[3]) / (total[0] * total[0] - total[1]);
}

constexpr RatioDebiasing kVariants[3] = {RatioDebiasing::none, RatioDebiasing::paper, RatioDebiasing::complete};
const char* const kNames[3] = {"partial", "paper", "complete"};

// Per estimator: sums of (estimate - R) and of (estimate - R - L), L the control variate, and squares.
struct Accumulator {
  double raw[3] = {}, raw2[3] = {}, cv[3] = {}, cv2[3] = {};
  std::size_t reps = 0;
  void add(const Accumulator& o) {
    for (int v = 0; v < 3; ++v) raw[v] += o.raw[v], raw2[v] += o.raw2[v], cv[v] += o.cv[v], cv2[v] += o.cv2[v];
    reps += o.reps;
  }
};

struct Estimate {
  double value, standard_error;
};
Estimate mean_and_se(double sum, double sum2, std::size_t count) {
  const double n = static_cast<double>(count), m = sum / n;
  return {m, std::sqrt(std::max(0.0, sum2 / n - m * m) / (n - 1))};
}

// Weighted least squares of log|bias| on log n over the points whose bias is at least 3 standard errors
// from 0 (weights: (|bias| / SE)^2, the inverse variance of log|bias|).
struct Slope {
  double slope = NAN, standard_error = NAN;
  std::size_t points = 0, n_min = 0, n_max = 0;
};
Slope fit_slope(const std::vector<std::size_t>& ns, const std::vector<Estimate>& bias) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  Slope out;
  for (std::size_t i = 0; i < ns.size(); ++i) {
    const double b = std::fabs(bias[i].value), se = bias[i].standard_error;
    if (!(b > 3 * se)) continue;
    const double w = (b / se) * (b / se), x = std::log(static_cast<double>(ns[i])), y = std::log(b);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    if (out.points++ == 0) out.n_min = ns[i];
    out.n_max = ns[i];
  }
  if (out.points < 2) return out;
  const double det = sw * sxx - sx * sx;
  out.slope = (sw * sxy - sx * sy) / det;
  out.standard_error = std::sqrt(sw / det);
  return out;
}

struct Arguments {
  std::size_t reps = 10000;
  double samples_per_n = 1 << 26;
  double truth_samples = 1e8;
  std::uint64_t seed = 2022;
  int threads = 0;
  std::string out = "figure3.csv";
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) ecekde::fail("missing value after " + key);
    const std::string value = argv[++i];
    if (key == "--reps") a.reps = std::stoul(value);
    else if (key == "--samples-per-n") a.samples_per_n = std::stod(value);
    else if (key == "--truth-samples") a.truth_samples = std::stod(value);
    else if (key == "--seed") a.seed = std::stoull(value);
    else if (key == "--threads") a.threads = std::stoi(value);
    else if (key == "--out") a.out = value;
    else ecekde::fail("unknown option " + key);
  }
  return a;
}

int run(const Arguments& args) {
  const Setup setup;
  const Sampler sampler(setup);
  sampler.check_against_library();
  const Population pop = population(setup);
  const double target = pop.target();
  const double paper_truth =
      paper_ground_truth(sampler, static_cast<std::uint64_t>(args.truth_samples), args.seed + 1, args.threads);
  std::printf("exact R = %.12f (quadrature); paper's ground truth (%.3g samples) = %.12f, off by %.3e\n", target,
              args.truth_samples, paper_truth, paper_truth - target);
  std::printf("first-order bias coefficient b1 = %.6f, second-order b2 = %.6f (plain ratio)\n", pop.b1(), pop.b2());

  std::ofstream csv(args.out);
  csv << "n,protocol,reps,estimator,mean,bias,se,bias_cv,se_cv,bias_vs_paper_truth,predicted_bias\n";
  csv.precision(10);
  std::vector<std::size_t> ns;
  std::vector<Estimate> paper_bias[3], extended_bias[3];
  const std::size_t block = 250;
  for (std::size_t n = 32; n <= 16384; n *= 2) {
    const std::size_t reps = std::max<std::size_t>(args.reps, static_cast<std::size_t>(args.samples_per_n / n));
    const std::size_t blocks = (reps + block - 1) / block;
    std::vector<Accumulator> acc(blocks);
    ecekde::detail::parallel_for(blocks, args.threads, [&](std::size_t b, int) {
      std::vector<double> k(n), ky(n);
      std::vector<std::int64_t> y(n);
      for (std::size_t r = b * block; r < std::min(reps, (b + 1) * block); ++r) {
        ecekde::Rng rng = ecekde::Rng::stream(args.seed, (static_cast<std::uint64_t>(n) << 32) | r);
        for (std::size_t i = 0; i < n; ++i) {
          bool positive;
          sampler.draw(rng, k[i], positive);
          y[i] = positive;
          ky[i] = positive ? k[i] : 0.0;
        }
        // Control variate with mean exactly 0: the linear term of the ratio around the truth.
        const double linear = target * (ecekde::unbiased_square_of_mean(ky) / (pop.mu_y * pop.mu_y) -
                                        ecekde::unbiased_square_of_mean(k) / (pop.mu_x * pop.mu_x));
        for (int v = 0; v < 3; ++v) {
          const double e = ecekde::sharpness_at(k, ecekde::LabelsView(y), kVariants[v]) - target;
          acc[b].raw[v] += e, acc[b].raw2[v] += e * e;
          acc[b].cv[v] += e - linear, acc[b].cv2[v] += (e - linear) * (e - linear);
        }
        ++acc[b].reps;
      }
    });
    Accumulator paper, extended;
    for (std::size_t b = 0; b < blocks; ++b) {
      if (b * block < args.reps) paper.add(acc[b]);
      extended.add(acc[b]);
    }
    ns.push_back(n);
    const double nd = static_cast<double>(n), predicted = pop.b1() / nd + pop.b2() / (nd * nd);
    for (int v = 0; v < 3; ++v) {
      for (const auto* a : {&paper, &extended}) {
        const Estimate raw = mean_and_se(a->raw[v], a->raw2[v], a->reps), cv = mean_and_se(a->cv[v], a->cv2[v], a->reps);
        csv << n << ',' << (a == &paper ? "paper" : "extended") << ',' << a->reps << ',' << kNames[v] << ','
            << target + raw.value << ',' << raw.value << ',' << raw.standard_error << ',' << cv.value << ','
            << cv.standard_error << ',' << target + raw.value - paper_truth << ','
            << (v == 0 ? predicted : 0.0) << '\n';
        (a == &paper ? paper_bias : extended_bias)[v].push_back(a == &paper ? raw : cv);
      }
    }
    std::printf("n = %5zu  reps %8zu  bias (control variate): partial %+.3e  paper %+.3e  complete %+.3e"
                "  (se %.1e)  predicted partial %+.3e\n",
                n, reps, extended_bias[0].back().value, extended_bias[1].back().value, extended_bias[2].back().value,
                extended_bias[2].back().standard_error, predicted);
    std::fflush(stdout);
  }
  for (int v = 0; v < 3; ++v) {
    for (int protocol = 0; protocol < 2; ++protocol) {
      const Slope s = fit_slope(ns, protocol == 0 ? paper_bias[v] : extended_bias[v]);
      std::printf("slope %-8s %-8s %+.3f +- %.3f over %zu sizes (n = %zu..%zu)\n", kNames[v],
                  protocol == 0 ? "paper" : "extended", s.slope, s.standard_error, s.points, s.n_min, s.n_max);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "ecekde_figure3: " << e.what() << '\n';
    return 1;
  }
}
