// Ground truths of the synthetic model (the paper's Section 4) at high accuracy, each checked against a
// brute-force estimate from a large simulated sample; and the conditional-expectation curves behind the
// marginal and top-label truths. Method and results: docs/validation.md ("Ground truth").
//
// Brute force: simulate N samples, bin the class scores f_c (and max f) finely in logit space, and
// average d = p1 - f per bin: sum over bins of P(bin) |mean d|^p. For p = 1 this has no binning bias in
// bins where E[y|f] - f keeps its sign; for p = 2 the per-bin square of the mean is the unbiased U-statistic,
// leaving only the within-bin variation of E[y|f] - f (negligible at the bin width used).
//
// Usage: ecekde_synthetic_truth [--classes 4,8] [--p 1,2] [--canonical-samples N] [--inner-samples M]
//                               [--validation-samples V] [--seed S] [--threads T] [--out-dir DIR]
// Writes DIR/truth.csv and DIR/curves.csv.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "ecekde/error.hpp"
#include "ecekde/synthetic.hpp"
#include "stats/synthetic_truth.hpp"

namespace {

constexpr double kLogitMin = -40, kLogitMax = 40, kBinWidth = 0.01;
constexpr std::size_t kBins = static_cast<std::size_t>((kLogitMax - kLogitMin) / kBinWidth);
constexpr std::size_t kBatches = 16;  // independent sub-samples for the standard error

std::size_t bin_of(double s) {
  const double x = std::log(s) - std::log1p(-s);
  const double b = std::floor((x - kLogitMin) / kBinWidth);
  return static_cast<std::size_t>(std::clamp(b, 0.0, static_cast<double>(kBins - 1)));
}

// Per bin: count, sum of d and of d^2, for d = p1 - f of the class scores and of the top score.
struct Bins {
  std::vector<double> count, sum, sum2;
  Bins() : count(kBins), sum(kBins), sum2(kBins) {}
  void add(double s, double p1) {
    const std::size_t b = bin_of(s);
    const double d = p1 - s;
    count[b] += 1, sum[b] += d, sum2[b] += d * d;
  }
  void merge(const Bins& o) {
    for (std::size_t b = 0; b < kBins; ++b) count[b] += o.count[b], sum[b] += o.sum[b], sum2[b] += o.sum2[b];
  }
  // sum over bins of (count / samples) |mean d|^p (the unbiased square of the mean for p = 2).
  double value(double p, double samples) const {
    double total = 0;
    for (std::size_t b = 0; b < kBins; ++b) {
      const double c = count[b];
      if (c < 2) continue;
      const double term = p == 2 ? (sum[b] * sum[b] - sum2[b]) / (c * (c - 1)) : std::pow(std::fabs(sum[b] / c), p);
      total += c / samples * term;
    }
    return total;
  }
};

struct Batch {
  Bins marginal, top;
  double canonical[2] = {};  // sum of ||p1 - f||_p^p for p = 1 and 2
  double samples = 0;
};

Batch simulate(const ecekde::SyntheticModel& model, std::size_t samples, std::uint64_t seed) {
  const auto data = ecekde::generate_synthetic(model, samples, seed, 1);
  Batch b;
  const std::size_t k = model.classes;
  for (std::size_t r = 0; r < data.n; ++r) {
    const double* f = &data.probs[r * k];
    const double* p1 = &data.calibrated[r * k];
    std::size_t top = 0;
    for (std::size_t c = 0; c < k; ++c) {
      b.marginal.add(f[c], p1[c]);
      b.canonical[0] += std::fabs(p1[c] - f[c]);
      b.canonical[1] += (p1[c] - f[c]) * (p1[c] - f[c]);
      if (f[c] > f[top]) top = c;
    }
    b.top.add(f[top], p1[top]);
  }
  b.samples = static_cast<double>(data.n);
  return b;
}

struct Arguments {
  std::vector<std::size_t> classes{4, 8};
  std::vector<double> p{1, 2};
  std::size_t canonical_samples = 1 << 26, inner_samples = 1 << 18, validation_samples = 1 << 26;
  std::uint64_t seed = 2022;
  int threads = 0;
  std::string out_dir = ".";
};

template <class T>
std::vector<T> parse_list(const std::string& text) {
  std::vector<T> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(static_cast<T>(std::stod(item)));
  return out;
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) ecekde::fail("missing value after " + key);
    const std::string value = argv[++i];
    if (key == "--classes") a.classes = parse_list<std::size_t>(value);
    else if (key == "--p") a.p = parse_list<double>(value);
    else if (key == "--canonical-samples") a.canonical_samples = static_cast<std::size_t>(std::stod(value));
    else if (key == "--inner-samples") a.inner_samples = static_cast<std::size_t>(std::stod(value));
    else if (key == "--validation-samples") a.validation_samples = static_cast<std::size_t>(std::stod(value));
    else if (key == "--seed") a.seed = std::stoull(value);
    else if (key == "--threads") a.threads = std::stoi(value);
    else if (key == "--out-dir") a.out_dir = value;
    else ecekde::fail("unknown option " + key);
  }
  return a;
}

struct MeanSe {
  double mean, se;
};
MeanSe mean_se(const std::vector<double>& v) {
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return {m, std::sqrt(s / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()))};
}

int run(const Arguments& args) {
  std::ofstream truth_csv(args.out_dir + "/truth.csv"), curves_csv(args.out_dir + "/curves.csv");
  truth_csv << "classes,t1,t2,p,type,value,standard_error,quadrature_error,brute_force,brute_force_se,z\n";
  curves_csv << "classes,s,class_mean,class_density,top_mean,top_density,binned_class_mean,binned_class_count,"
                "binned_top_mean,binned_top_count\n";
  truth_csv.precision(10);
  curves_csv.precision(8);
  for (std::size_t k : args.classes) {
    const ecekde::SyntheticModel model{k, 0.6, 0.6};

    // Brute force: kBatches independent simulations.
    std::vector<Batch> batches(kBatches);
    ecekde::detail::parallel_for(kBatches, args.threads, [&](std::size_t b, int) {
      batches[b] = simulate(model, args.validation_samples / kBatches, ecekde::Rng::stream(args.seed + 7, b).next());
    });
    Batch all;
    for (const auto& b : batches) {
      all.marginal.merge(b.marginal), all.top.merge(b.top);
      all.canonical[0] += b.canonical[0], all.canonical[1] += b.canonical[1], all.samples += b.samples;
    }

    for (double p : args.p) {
      ecekde::GroundTruthOptions o;
      o.p = p;
      o.canonical_samples = args.canonical_samples;
      o.inner_samples = args.inner_samples;
      o.seed = args.seed;
      o.threads = args.threads;
      const ecekde::GroundTruth t = ecekde::synthetic_ground_truth(model, o);
      const int pi = p == 1 ? 0 : p == 2 ? 1 : -1;
      std::vector<double> per_batch[3];
      for (const auto& b : batches) {
        if (pi >= 0) per_batch[0].push_back(b.canonical[pi] / b.samples);
        per_batch[1].push_back(b.marginal.value(p, b.samples));
        per_batch[2].push_back(b.top.value(p, b.samples));
      }
      const double full[3] = {pi >= 0 ? all.canonical[pi] / all.samples : NAN, all.marginal.value(p, all.samples),
                              all.top.value(p, all.samples)};
      const ecekde::TruthValue* values[3] = {&t.canonical, &t.marginal, &t.top_label};
      const char* names[3] = {"canonical", "marginal", "top-label"};
      for (int v = 0; v < 3; ++v) {
        const MeanSe bf = per_batch[v].empty() ? MeanSe{NAN, NAN} : mean_se(per_batch[v]);
        const double z = (full[v] - values[v]->value) /
                         std::sqrt(bf.se * bf.se + values[v]->standard_error * values[v]->standard_error);
        truth_csv << k << ',' << model.t1 << ',' << model.t2 << ',' << p << ',' << names[v] << ',' << values[v]->value
                  << ',' << values[v]->standard_error << ',' << values[v]->quadrature_error << ',' << full[v] << ','
                  << bf.se << ',' << z << '\n';
        std::printf("K = %zu  p = %g  %-9s  truth %.7f (se %.1e, quadrature %.1e)  brute force %.7f (se %.1e)  z = %+.2f\n",
                    k, p, names[v], values[v]->value, values[v]->standard_error, values[v]->quadrature_error, full[v],
                    bf.se, z);
      }
      std::fflush(stdout);
    }

    // Curves on a grid of scores, with the binned means of the simulation for comparison.
    const auto shape = ecekde::detail::ShapeSample::draw(model, args.inner_samples, 32, args.seed, args.threads);
    std::vector<double> grid;
    for (double x = -8; x <= 8; x += 0.05) grid.push_back(1 / (1 + std::exp(-x)));
    const auto curves = ecekde::detail::conditional_curves(model, shape, grid, args.threads);
    for (std::size_t i = 0; i < grid.size(); ++i) {
      const std::size_t b = bin_of(grid[i]);
      const Bins& m = all.marginal;
      const Bins& tb = all.top;
      curves_csv << k << ',' << grid[i] << ',' << curves.class_mean[i] << ',' << curves.class_density[i] << ','
                 << curves.top_mean[i] << ',' << curves.top_density[i] << ','
                 << (m.count[b] > 0 ? grid[i] + m.sum[b] / m.count[b] : NAN) << ',' << m.count[b] << ','
                 << (tb.count[b] > 0 ? grid[i] + tb.sum[b] / tb.count[b] : NAN) << ',' << tb.count[b] << '\n';
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "ecekde_synthetic_truth: " << e.what() << '\n';
    return 1;
  }
}
