// Bias and convergence on real predictions (the paper's appendix "Bias and convergence rates";
// docs/validation.md, section 6): every estimator of the convergence study on random subsets of a model's
// test predictions, against the same estimator on all of them.
//
// Usage: ecekde_real --probs FILE --labels FILE --name NAME [--restrict 0,2,6]
//          [--sizes 100,200,500,1000,2000,5000] [--reps 40] [--full-reps-up-to 1000] [--min-reps 8]
//          [--types canonical,marginal,top-label] [--p 1,2] [--bins 5,10,15,20] [--selection-rows 4000]
//          [--seed 1] [--threads 0] [--out-dir DIR]
// --restrict keeps the samples whose label is one of the listed classes and renormalises their predicted
// probabilities over those classes (a K-class problem from a larger model, like the paper's three CIFAR-10
// classes). Subsets are drawn without replacement; subsets per size as in ecekde_convergence.
// Writes DIR/NAME.csv: one row per subset (subset = "all" for the reference), type, estimator and p.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "convergence/study.hpp"
#include "ecekde/io.hpp"
#include "ecekde/random.hpp"

namespace {

struct Data {
  std::size_t n = 0, k = 0;
  std::vector<double> f;
  std::vector<std::int64_t> y;
  ecekde::ProbsView view() const { return ecekde::ProbsView::row_major(f.data(), n, k); }
};

// The predictions of the file, optionally restricted to the samples of some classes (renormalised).
Data load(const std::string& probs, const std::string& labels, const std::vector<std::size_t>& restrict_to) {
  const auto in = ecekde::io::read_predictions(probs, labels);
  const auto p = in.probs.view();
  const auto y = in.labels.view();
  if (p.rows() != y.size()) ecekde::fail("probs and labels have different lengths");
  Data d;
  std::vector<std::size_t> cols(restrict_to);
  if (cols.empty()) {
    cols.resize(p.cols());
    std::iota(cols.begin(), cols.end(), 0);
  }
  d.k = cols.size();
  for (std::size_t r = 0; r < p.rows(); ++r) {
    const auto at = std::find(cols.begin(), cols.end(), static_cast<std::size_t>(y[r]));
    if (at == cols.end()) continue;
    double sum = 0;
    for (std::size_t c : cols) sum += p(r, c);
    for (std::size_t c : cols) d.f.push_back(restrict_to.empty() ? p(r, c) : p(r, c) / sum);
    d.y.push_back(at - cols.begin());
  }
  d.n = d.y.size();
  return d;
}

Data subset(const Data& all, std::size_t m, ecekde::Rng& rng) {
  std::vector<std::size_t> idx(all.n);
  std::iota(idx.begin(), idx.end(), 0);
  for (std::size_t i = 0; i < m; ++i) std::swap(idx[i], idx[i + rng.below(all.n - i)]);
  Data d;
  d.n = m;
  d.k = all.k;
  for (std::size_t i = 0; i < m; ++i) {
    d.f.insert(d.f.end(), all.f.begin() + static_cast<std::ptrdiff_t>(idx[i] * all.k),
               all.f.begin() + static_cast<std::ptrdiff_t>((idx[i] + 1) * all.k));
    d.y.push_back(all.y[idx[i]]);
  }
  return d;
}

int run(const study::Arguments& args) {
  const std::string name = args.text("name", "model");
  const auto restrict_to = args.list<std::size_t>("restrict", "");
  const Data all = load(args.text("probs", ""), args.text("labels", ""), restrict_to);
  const auto sizes = args.list<std::size_t>("sizes", "100,200,500,1000,2000,5000");
  const auto ps = args.list<double>("p", "1,2");
  const auto bins = args.list<std::size_t>("bins", "5,10,15,20");
  const auto reps = static_cast<std::size_t>(args.number("reps", 40));
  const auto min_reps = static_cast<std::size_t>(args.number("min-reps", 8));
  const double full_up_to = args.number("full-reps-up-to", 1000);
  const auto selection_rows = static_cast<std::size_t>(args.number("selection-rows", 4000));
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 1));
  const int threads = static_cast<int>(args.number("threads", 0));
  std::vector<ecekde::CalibrationType> types;
  for (const auto& t : args.words("types", "canonical,marginal,top-label")) types.push_back(ecekde::parse_name<ecekde::CalibrationType>(t));

  std::ofstream out(args.text("out-dir", ".") + "/" + name + ".csv");
  out.precision(10);
  out << "model,classes,n,subset,type,p,estimator,value,bandwidth,excluded_rows\n";
  auto write = [&](const Data& d, const std::string& which) {
    for (auto type : types) {
      const auto start = std::chrono::steady_clock::now();
      for (const auto& e : study::estimate_all(d.view(), d.y, type, ps, bins, selection_rows, threads))
        out << name << ',' << d.k << ',' << d.n << ',' << which << ',' << ecekde::to_string(type) << ',' << e.p << ','
            << e.estimator << ',' << e.value << ',' << e.bandwidth << ',' << e.excluded_rows << '\n';
      out.flush();
      std::fprintf(stderr, "%s  n = %zu  subset %s  %-9s %.1f s\n", name.c_str(), d.n, which.c_str(),
                   std::string(ecekde::to_string(type)).c_str(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  };
  std::printf("%s: n = %zu, K = %zu\n", name.c_str(), all.n, all.k);
  write(all, "all");
  for (std::size_t m : sizes) {
    if (m >= all.n) continue;
    const auto scaled = static_cast<std::size_t>(std::lround(static_cast<double>(reps) * full_up_to / static_cast<double>(m)));
    const std::size_t count = std::min(reps, std::max(min_reps, scaled));
    for (std::size_t rep = 0; rep < count; ++rep) {
      ecekde::Rng rng = ecekde::Rng::stream(seed, (m << 20) ^ rep);
      write(subset(all, m, rng), std::to_string(rep));
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(study::Arguments(argc, argv,
                                {"probs", "labels", "name", "restrict", "sizes", "reps", "min-reps", "full-reps-up-to",
                                 "types", "p", "bins", "selection-rows", "seed", "threads", "out-dir"}));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ecekde_real: %s\n", e.what());
    return 1;
  }
}
