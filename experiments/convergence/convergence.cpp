// The convergence study of the paper's Figure 2 (docs/validation.md, section 3): ECE^KDE and ECE^bin
// against the true CE_p^p of the synthetic model (t1 = t2 = 0.6) for K classes, n samples, several data
// sets per n; canonical, marginal and top-label; the paper's estimator and the regression-based ones.
//
// Usage: ecekde_convergence [--classes 4,8] [--n 100,200,500,1000,2000,5000,10000,20000] [--reps 20]
//          [--min-reps 5] [--full-reps-up-to 2000] [--types canonical,marginal,top-label] [--p 1,2]
//          [--bins 5,10,15,20] [--t2 0.6] [--selection-rows 4000] [--seed 1] [--threads 0] [--out-dir DIR]
// Data sets per n: reps for n <= full-reps-up-to, then reps * full-reps-up-to / n, at least min-reps.
// Bandwidth criteria are averaged over at most selection-rows rows (BandwidthOptions::max_rows; every
// row is used up to that n), which keeps n = 20,000 affordable.
// Writes DIR/truth.csv and DIR/estimates.csv (one row per data set, type, estimator and p). Resumable:
// data sets already in estimates.csv are skipped, so an interrupted run continues where it stopped.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "convergence/study.hpp"
#include "ecekde/random.hpp"
#include "ecekde/synthetic.hpp"

namespace {

using Key = std::tuple<std::size_t, std::size_t, std::size_t, std::string>;  // K, n, rep, type

// The data sets (K, n, rep, type) already written, from an existing estimates.csv.
std::set<Key> done_in(const std::string& path) {
  std::set<Key> done;
  for (const auto& [k, n, rep, type] : study::written_keys(path)) done.insert({std::stoul(k), std::stoul(n), std::stoul(rep), type});
  return done;
}

int run(const study::Arguments& args) {
  const auto classes = args.list<std::size_t>("classes", "4,8");
  const auto sizes = args.list<std::size_t>("n", "100,200,500,1000,2000,5000,10000,20000");
  const auto ps = args.list<double>("p", "1,2");
  const auto bins = args.list<std::size_t>("bins", "5,10,15,20");
  const auto reps = static_cast<std::size_t>(args.number("reps", 20));
  const auto min_reps = static_cast<std::size_t>(args.number("min-reps", 5));
  const double full_up_to = args.number("full-reps-up-to", 2000);
  const double t2 = args.number("t2", 0.6);
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 1));
  const int threads = static_cast<int>(args.number("threads", 0));
  const auto selection_rows = static_cast<std::size_t>(args.number("selection-rows", 4000));
  const std::string dir = args.text("out-dir", ".");
  std::vector<ecekde::CalibrationType> types;
  for (const auto& t : args.words("types", "canonical,marginal,top-label")) types.push_back(ecekde::parse_name<ecekde::CalibrationType>(t));

  const std::string estimates_path = dir + "/estimates.csv";
  const std::set<Key> done = done_in(estimates_path);
  const bool fresh = done.empty();
  std::ofstream estimates(estimates_path, fresh ? std::ios::trunc : std::ios::app);
  if (fresh) estimates << "classes,n,rep,type,p,estimator,value,truth,bandwidth,excluded_rows,seconds\n";
  estimates.precision(10);
  std::ofstream truth_csv(dir + "/truth.csv");
  truth_csv << "classes,t1,t2,p,type,value,standard_error,quadrature_error\n";
  truth_csv.precision(10);

  for (std::size_t k : classes) {
    const ecekde::SyntheticModel model{k, 0.6, t2};
    std::vector<ecekde::GroundTruth> truths;
    for (double p : ps) {
      ecekde::GroundTruthOptions o;
      o.p = p;
      o.canonical_samples = std::size_t{1} << 24;
      o.inner_samples = std::size_t{1} << 16;
      o.seed = seed;
      o.threads = threads;
      truths.push_back(ecekde::synthetic_ground_truth(model, o));
      const auto& g = truths.back();
      for (auto [name, v] : {std::pair{"canonical", g.canonical}, {"marginal", g.marginal}, {"top-label", g.top_label}}) {
        truth_csv << k << ",0.6," << t2 << ',' << p << ',' << name << ',' << v.value << ',' << v.standard_error << ','
                  << v.quadrature_error << '\n';
        std::printf("K = %zu, p = %g, %-9s truth %.6f (s.e. %.1e)\n", k, p, name, v.value, v.standard_error);
      }
    }
    truth_csv.flush();

    for (std::size_t n : sizes) {
      const auto scaled = static_cast<std::size_t>(std::lround(static_cast<double>(reps) * full_up_to / static_cast<double>(n)));
      const std::size_t count = std::min(reps, std::max(min_reps, scaled));
      for (std::size_t rep = 0; rep < count; ++rep) {
        const std::uint64_t data_seed = ecekde::Rng::stream(seed, (k << 40) ^ (n << 12) ^ rep).next();
        const auto data = ecekde::generate_synthetic(model, n, data_seed, threads);
        for (auto type : types) {
          const std::string type_name(ecekde::to_string(type));
          if (done.count({k, n, rep, type_name})) continue;
          const auto start = std::chrono::steady_clock::now();
          const auto all = study::estimate_all(data.probs_view(), data.labels_view(), type, ps, bins, selection_rows, threads);
          const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          for (const auto& e : all) {
            const std::size_t pi = static_cast<std::size_t>(std::find(ps.begin(), ps.end(), e.p) - ps.begin());
            estimates << k << ',' << n << ',' << rep << ',' << type_name << ',' << e.p << ',' << e.estimator << ','
                      << e.value << ',' << study::truth_of(truths[pi], type) << ',' << e.bandwidth << ',' << e.excluded_rows
                      << ',' << seconds << '\n';
          }
          estimates.flush();
          std::fprintf(stderr, "K = %zu  n = %zu  rep %zu/%zu  %-9s %.1f s\n", k, n, rep + 1, count, type_name.c_str(),
                       seconds);
        }
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(study::Arguments(argc, argv,
                                {"classes", "n", "reps", "min-reps", "full-reps-up-to", "types", "p", "bins", "t2",
                                 "selection-rows", "seed", "threads", "out-dir"}));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ecekde_convergence: %s\n", e.what());
    return 1;
  }
}
