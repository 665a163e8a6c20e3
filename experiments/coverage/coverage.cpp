// Coverage of the bootstrap intervals (docs/validation.md, section 5): on many synthetic data sets with a
// known CE_p^p, how often does the 95% interval contain the truth?
//
// Per data set, type (canonical, top-label) and estimator:
//   kde-mle   ECE^KDE with the LOO-likelihood bandwidth (the paper's), ecekde::bootstrap_kde with both
//             copy conventions (leave-copies-out, plain)
//   kde-reg   the same with the loo-regression bandwidth
//   bin       ECE^bin (Doane's bins per class; canonical in the paper's per-sample form, top-label per bin)
//             through the generic ecekde::bootstrap (resample, then estimate)
// and two intervals from the same replicates: the percentile interval the library returns, and the
// basic ("reflected") interval [2 t - q_hi, 2 t - q_lo], which subtracts the bootstrap's estimate of the
// bias (mean of the replicates minus t) to first order.
//
// Usage: ecekde_coverage [--classes 4] [--n 200,500,1000,2000] [--sets 200] [--replicates 100] [--p 1]
//          [--types canonical,top-label] [--seed 1] [--threads 0] [--out-dir DIR]
// Writes DIR/truth.csv and DIR/intervals.csv (one row per data set, type, estimator, copies and interval
// kind). Resumable like ecekde_convergence.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "convergence/study.hpp"
#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/random.hpp"
#include "ecekde/synthetic.hpp"

namespace {

using Key = std::tuple<std::size_t, std::size_t, std::string>;  // n, set, type

std::set<Key> done_in(const std::string& path) {
  std::set<Key> done;
  for (const auto& [k, n, set, type] : study::written_keys(path)) done.insert({std::stoul(n), std::stoul(set), type});
  return done;
}

struct Row {
  std::string estimator, copies;
  ecekde::Interval interval;
};

// The basic bootstrap interval from the percentile one: [2 t - upper, 2 t - lower].
ecekde::Interval reflected(const ecekde::Interval& i) {
  ecekde::Interval r = i;
  r.lower = 2 * i.estimate - i.upper;
  r.upper = 2 * i.estimate - i.lower;
  return r;
}

std::vector<Row> intervals(const ecekde::SyntheticData& data, ecekde::CalibrationType type, double p,
                           std::size_t replicates, std::uint64_t seed, int threads) {
  std::vector<Row> rows;
  ecekde::BootstrapOptions b;
  b.replicates = replicates;
  b.seed = seed;
  for (auto [name, criterion] : {std::pair{"kde-mle", ecekde::BandwidthCriterion::loo_likelihood},
                                 {"kde-reg", ecekde::BandwidthCriterion::loo_regression}}) {
    ecekde::EstimateOptions o;
    o.type = type;
    o.p = p;
    o.execution.threads = threads;
    o.bandwidth_selection.criterion = criterion;
    o.bandwidth = ecekde::select_bandwidth(data.probs_view(), data.labels_view(), type, o.bandwidth_selection,
                                           o.execution)
                      .bandwidth;
    for (auto copies : {ecekde::BootstrapCopies::leave_copies_out, ecekde::BootstrapCopies::plain}) {
      b.copies = copies;
      rows.push_back({name, std::string(ecekde::to_string(copies)),
                      ecekde::bootstrap_kde(data.probs_view(), data.labels_view(), o, b).ce_pow_p});
    }
  }
  ecekde::BinnedOptions binned;
  binned.type = type;
  binned.p = p;
  binned.bins = std::nullopt;  // Doane
  const std::size_t k = data.k;
  auto statistic = [&](std::span<const std::size_t> idx) {
    std::vector<double> f(idx.size() * k);
    std::vector<std::int64_t> y(idx.size());
    for (std::size_t r = 0; r < idx.size(); ++r) {
      std::copy_n(data.probs.begin() + static_cast<std::ptrdiff_t>(idx[r] * k), k,
                  f.begin() + static_cast<std::ptrdiff_t>(r * k));
      y[r] = data.labels[idx[r]];
    }
    return ecekde::binned_calibration_error(ecekde::ProbsView::row_major(f.data(), idx.size(), k), y, binned).ce_pow_p;
  };
  rows.push_back({"bin-doane", "resample", ecekde::bootstrap(data.n, statistic, b, {.threads = threads})});
  return rows;
}

int run(const study::Arguments& args) {
  const auto k = static_cast<std::size_t>(args.number("classes", 4));
  const auto sizes = args.list<std::size_t>("n", "200,500,1000,2000");
  const auto sets = static_cast<std::size_t>(args.number("sets", 200));
  const auto replicates = static_cast<std::size_t>(args.number("replicates", 100));
  const double p = args.number("p", 1);
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 1));
  const int threads = static_cast<int>(args.number("threads", 0));
  const std::string dir = args.text("out-dir", ".");
  std::vector<ecekde::CalibrationType> types;
  for (const auto& t : args.words("types", "canonical,top-label")) types.push_back(ecekde::parse_name<ecekde::CalibrationType>(t));

  const ecekde::SyntheticModel model{k, 0.6, 0.6};
  ecekde::GroundTruthOptions go;
  go.p = p;
  go.canonical_samples = std::size_t{1} << 24;
  go.seed = seed;
  go.threads = threads;
  const auto truth = ecekde::synthetic_ground_truth(model, go);
  std::ofstream truth_csv(dir + "/truth.csv");
  truth_csv.precision(10);
  truth_csv << "classes,p,type,value,standard_error\n";
  for (auto type : types)
    truth_csv << k << ',' << p << ',' << ecekde::to_string(type) << ',' << study::truth_of(truth, type) << ','
              << (type == ecekde::CalibrationType::canonical ? truth.canonical.standard_error
                                                              : truth.top_label.standard_error)
              << '\n';

  const std::string path = dir + "/intervals.csv";
  const auto done = done_in(path);
  std::ofstream out(path, done.empty() ? std::ios::trunc : std::ios::app);
  if (done.empty()) out << "classes,n,set,type,p,estimator,copies,interval,estimate,lower,upper,replicate_mean,truth,covered\n";
  out.precision(10);
  for (std::size_t n : sizes)
    for (std::size_t set = 0; set < sets; ++set) {
      const std::uint64_t data_seed = ecekde::Rng::stream(seed, (k << 40) ^ (n << 12) ^ set).next();
      const auto data = ecekde::generate_synthetic(model, n, data_seed, threads);
      for (auto type : types) {
        const std::string type_name(ecekde::to_string(type));
        if (done.count({n, set, type_name})) continue;
        const auto start = std::chrono::steady_clock::now();
        const double t = study::truth_of(truth, type);
        for (const Row& row : intervals(data, type, p, replicates, data_seed, threads)) {
          double mean = 0;
          for (double v : row.interval.replicates) mean += v / static_cast<double>(row.interval.replicates.size());
          for (const auto& [kind, iv] : {std::pair{"percentile", row.interval}, {"basic", reflected(row.interval)}})
            out << k << ',' << n << ',' << set << ',' << type_name << ',' << p << ',' << row.estimator << ','
                << row.copies << ',' << kind << ',' << iv.estimate << ',' << iv.lower << ',' << iv.upper << ','
                << mean << ',' << t << ',' << (iv.lower <= t && t <= iv.upper) << '\n';
        }
        out.flush();
        std::fprintf(stderr, "n = %zu  set %zu/%zu  %-9s %.1f s\n", n, set + 1, sets, type_name.c_str(),
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(study::Arguments(argc, argv, {"classes", "n", "sets", "replicates", "p", "types", "seed", "threads",
                                             "out-dir"}));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ecekde_coverage: %s\n", e.what());
    return 1;
  }
}
