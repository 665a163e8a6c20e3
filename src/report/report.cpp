// ecekde report: one command, one input -> every estimator of the library with bootstrap intervals and
// calibration-test p-values, a summary, and optionally the figures.
#include "ecekde/report.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "ecekde/error.hpp"

namespace ecekde::report {

std::vector<CalibrationType> kde_types(std::size_t k) {
  if (k == 1) return {CalibrationType::binary};
  std::vector<CalibrationType> types{CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label};
  if (k == 2) types.push_back(CalibrationType::binary);
  return types;
}

double paper_resampling_work(CalibrationType type, std::size_t n, std::size_t k, std::size_t replicates) {
  const double pairs = static_cast<double>(n) * static_cast<double>(n), b = static_cast<double>(replicates);
  const double classes = static_cast<double>(k);
  switch (type) {
    case CalibrationType::canonical: return pairs * b * classes;
    case CalibrationType::marginal: return pairs * b * 2 * classes;
    case CalibrationType::top_label:
    case CalibrationType::binary: return pairs * b * 2;
  }
  return 0;
}

std::vector<BinnedOptions> binned_plan(std::size_t k, const Settings& s) {
  const CalibrationType one_d = k == 1 ? CalibrationType::binary : CalibrationType::top_label;
  auto make = [&](CalibrationType type, Binning binning, std::optional<std::size_t> bins, BinnedForm form, bool maximum) {
    BinnedOptions o;
    o.type = type;
    o.p = form == BinnedForm::debiased ? 2.0 : s.p;
    o.maximum = maximum;
    o.binning = binning;
    o.bins = bins;
    o.form = form;
    return o;
  };
  std::vector<BinnedOptions> plan{
      make(one_d, Binning::equal_width, s.bins, BinnedForm::per_bin, false),
      make(one_d, Binning::equal_width, s.bins, BinnedForm::per_bin, true),
      make(one_d, Binning::equal_mass, s.bins, BinnedForm::per_bin, false),
      make(one_d, Binning::equal_mass, s.bins, BinnedForm::per_bin, true),
      make(one_d, Binning::equal_mass, s.bins, BinnedForm::debiased, false),
  };
  if (k >= 2) {
    plan.push_back(make(CalibrationType::marginal, Binning::equal_width, std::nullopt, BinnedForm::per_bin, false));
    plan.push_back(make(CalibrationType::canonical, Binning::equal_width, std::nullopt, BinnedForm::per_sample, false));
  }
  if (k == 2) plan.push_back(make(CalibrationType::binary, Binning::equal_width, s.bins, BinnedForm::per_bin, false));
  return plan;
}

Summary summarize(ProbsView probs, LabelsView labels) {
  Summary s;
  s.n = probs.rows();
  s.k = probs.cols();
  const std::size_t classes = s.k == 1 ? 2 : s.k;
  std::vector<double> row(classes);
  for (std::size_t r = 0; r < s.n; ++r) {
    if (s.k == 1) {
      row[1] = probs(r, 0);
      row[0] = 1 - row[1];
    } else {
      for (std::size_t c = 0; c < classes; ++c) row[c] = probs(r, c);
    }
    const auto y = static_cast<std::size_t>(labels[r]);
    const std::size_t top = static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin());
    s.accuracy += top == y;
    s.mean_confidence += row[top];
    s.nll -= std::log(std::max(row[y], DBL_MIN));
    for (std::size_t c = 0; c < classes; ++c) s.brier += (row[c] - (c == y)) * (row[c] - (c == y));
  }
  const double n = static_cast<double>(s.n);
  s.accuracy /= n;
  s.mean_confidence /= n;
  s.nll /= n;
  s.brier /= n;
  return s;
}

namespace {

using Root = std::function<double(double)>;

ExecutionOptions execution_of(const Settings& s) {
  return {.threads = s.threads, .control = s.control, .communicator = s.communicator};
}

BootstrapOptions bootstrap_options(const Settings& s) {
  BootstrapOptions b;
  b.replicates = s.replicates;
  b.level = s.level;
  b.seed = s.seed;
  return b;
}

// A percentile bootstrap interval (rows resampled) and a consistency-resampling test of a statistic prepared
// for resampling (BinnedStatistic, MmceStatistic: read and reduced once, so that each replicate costs O(n)
// or O(n log n), not a copy and a check of the n x K input), with the interval's ends mapped by `root`.
template <class Prepared>
Uncertainty resample(ProbsView probs, LabelsView labels, const Prepared& statistic, const Root& root, const Settings& s) {
  const ExecutionOptions execution = execution_of(s);
  const Interval interval = bootstrap(
      probs.rows(), [&](std::span<const std::size_t> rows) { return statistic.resampled(rows); }, bootstrap_options(s),
      execution);
  const CalibrationTestResult test = calibration_test(
      probs, labels, [&](ProbsView, LabelsView y) { return statistic.relabelled(y); }, {s.replicates, s.seed},
      execution);
  return {interval.lower, interval.upper, root(interval.lower), root(interval.upper), test.statistic, test.p_value};
}

double clamped_sqrt(double v) { return std::sqrt(std::max(v, 0.0)); }

Result crossfit_entry(ProbsView probs, LabelsView labels, CalibrationType type, const Settings& s) {
  EstimateOptions o;
  o.estimator = Estimator::crossfit;
  o.type = type;
  o.p = s.p;
  o.level = s.level;
  o.execution = execution_of(s);
  return estimate(probs, labels, o);
}

bool resamples_paper(CalibrationType type, std::size_t n, std::size_t k, const Settings& s) {
  return s.replicates > 0 && paper_resampling_work(type, n, k, s.replicates) <= s.paper_resampling_limit;
}

KdeEntry kde_entry(ProbsView probs, LabelsView labels, CalibrationType type, const Settings& s) {
  EstimateOptions o;
  o.estimator = Estimator::paper;
  o.type = type;
  o.p = s.p;
  o.execution = execution_of(s);
  if (!resamples_paper(type, probs.rows(), probs.cols(), s)) {
    KdeEntry e{estimate(probs, labels, o), std::nullopt, std::nullopt};
    if (s.replicates > 0) e.resampling_skipped = paper_resampling_work(type, probs.rows(), probs.cols(), s.replicates);
    return e;
  }
  const KdeBootstrap boot = bootstrap_kde(probs, labels, o, bootstrap_options(s));
  EstimateOptions fixed = o;  // the test uses the bandwidth chosen above (the same choice, made once)
  fixed.bandwidth = boot.result.bandwidth;
  const CalibrationTestResult test = calibration_test_kde(probs, labels, fixed, {s.replicates, s.seed});
  return {boot.result,
          Uncertainty{boot.ce_pow_p.lower, boot.ce_pow_p.upper, boot.ce.lower, boot.ce.upper, test.statistic,
                      test.p_value},
          std::nullopt};
}

BinnedEntry binned_entry(ProbsView probs, LabelsView labels, const BinnedOptions& o, const Settings& s) {
  const BinnedStatistic statistic(probs, labels, o);
  BinnedEntry e{o, statistic.result(), std::nullopt};
  if (s.replicates == 0) return e;
  const double p = o.p;
  Root root = [p](double v) { return std::pow(v, 1 / p); };
  if (o.maximum) root = [](double v) { return v; };
  if (o.form == BinnedForm::debiased) root = clamped_sqrt;
  e.uncertainty = resample(probs, labels, statistic, root, s);
  return e;
}

MmceEntry mmce_entry(ProbsView probs, LabelsView labels, const Settings& s) {
  MmceOptions o;
  o.gradient = false;
  const MmceStatistic statistic(probs, labels, o);
  MmceEntry e{o, statistic.result(), std::nullopt};
  if (s.replicates > 0) e.uncertainty = resample(probs, labels, statistic, clamped_sqrt, s);
  return e;
}

std::string with_resampling(const Settings& s) {
  return s.replicates ? ", bootstrap and test (B = " + std::to_string(s.replicates) + ")" : "";
}

PreparedInput restrict_and_renormalize(ProbsView probs, LabelsView labels, const std::vector<std::int64_t>& classes) {
  const std::size_t k = probs.cols();
  std::vector<std::size_t> columns;
  std::vector<std::int64_t> position(k == 1 ? 2 : k, -1);
  if (classes.empty()) {
    for (std::size_t c = 0; c < k; ++c) columns.push_back(c);
  } else {
    if (k < 2) fail("classes needs probabilities of at least 2 classes, the input has 1 column");
    if (classes.size() < 2) fail("classes needs at least 2 classes");
    for (std::int64_t c : classes) {
      if (c < 0 || c >= static_cast<std::int64_t>(k))
        fail("classes: class " + std::to_string(c) + " is outside [0, " + std::to_string(k) + ")");
      if (position[static_cast<std::size_t>(c)] >= 0)
        fail("classes: class " + std::to_string(c) + " is listed twice");
      position[static_cast<std::size_t>(c)] = static_cast<std::int64_t>(columns.size());
      columns.push_back(static_cast<std::size_t>(c));
    }
  }
  PreparedInput out;
  out.k = columns.size();
  for (std::size_t r = 0; r < probs.rows(); ++r) {
    const std::int64_t y = classes.empty() ? labels[r] : position[static_cast<std::size_t>(labels[r])];
    if (y < 0) continue;
    double sum = 0;
    for (std::size_t c : columns) sum += probs(r, c);
    if (!(sum > 0)) fail("probs row " + std::to_string(r) + " gives probability 0 to every class kept");
    for (std::size_t c : columns) out.probs.push_back(probs(r, c) / sum);
    out.labels.push_back(y);
  }
  out.n = out.labels.size();
  return out;
}

}  // namespace

Report compute_prepared(ProbsView probs, LabelsView labels, const Settings& s, std::string probs_dtype,
                        const StageRunner& run_stage) {
  const StageRunner stage = run_stage ? run_stage : [](std::string_view, const std::function<void()>& work) { work(); };
  if (!(s.paper_resampling_limit >= 0))
    fail("paper_resampling_limit must be a number >= 0, got " + options::to_text(options::Value{s.paper_resampling_limit}));
  Report r;
  r.settings = s;
  r.probs_dtype = std::move(probs_dtype);
  const std::size_t k = probs.cols();
  // The binned estimates come first: they are quick, and they check the input for everything after.
  for (const BinnedOptions& o : binned_plan(k, s))
    stage("ECE^bin " + describe(o) + with_resampling(s), [&] { r.binned.push_back(binned_entry(probs, labels, o, s)); });
  r.summary = summarize(probs, labels);
  for (CalibrationType t : kde_types(k))
    stage("crossfit " + std::string(to_string(t)) + ": pilot, bandwidth, estimate, interval",
          [&] { r.crossfit.push_back(crossfit_entry(probs, labels, t, s)); });
  for (CalibrationType t : kde_types(k))
    stage("ECE^KDE (paper) " + std::string(to_string(t)) + ": bandwidth, estimate" +
              (resamples_paper(t, probs.rows(), k, s) ? with_resampling(s) : ""),
          [&] { r.kde.push_back(kde_entry(probs, labels, t, s)); });
  if (k >= 2) stage("MMCE" + with_resampling(s), [&] { r.mmce = mmce_entry(probs, labels, s); });
  return r;
}

std::optional<PreparedInput> prepare(ProbsView probs, LabelsView labels, const Settings& settings) {
  // Check the input as given (row and column numbers in messages then refer to it) with a quick estimator
  // that applies every check of the others.
  BinnedOptions check;
  check.type = probs.cols() == 1 ? CalibrationType::binary : CalibrationType::top_label;
  check.renormalize = settings.renormalize;
  binned_calibration_error(probs, labels, check);
  if ((settings.renormalize && probs.cols() > 1) || !settings.classes.empty())
    return restrict_and_renormalize(probs, labels, settings.classes);
  return std::nullopt;
}

Report compute(ProbsView probs, LabelsView labels, const Settings& settings, const StageRunner& run_stage) {
  const std::string dtype = probs.dtype() == ProbsView::DType::float32 ? "float32" : "float64";
  const std::optional<PreparedInput> owned = prepare(probs, labels, settings);
  if (owned) return compute_prepared(owned->probs_view(), owned->labels_view(), settings, dtype, run_stage);
  return compute_prepared(probs, labels, settings, dtype, run_stage);
}

const std::vector<options::Option<Settings>>& options() {
  using S = Settings;
  using options::describe;
  static const std::vector<options::Option<S>> table{
      describe<&S::p>({.name = "p",
                       .help = "Order of the L_p norm, any real p >= 1 (ECE^KDE and the binned L_p estimates)",
                       .example = "2"}),
      describe<&S::replicates>(
          {.name = "replicates",
           .help = "Replicates B of every bootstrap interval and every calibration test; 0 skips them",
           .example = "0"}),
      describe<&S::paper_resampling_limit>(
          {.name = "paper_resampling_limit",
           .help = "Largest work, in replicate sums, of the bootstrap and test of the paper's ECE^KDE: n^2 B K for "
                   "canonical, 2 n^2 B K for marginal, 2 n^2 B for top-label and binary (about 0.1 to 0.15 ns each "
                   "on two cores). Beyond it (e.g. marginal at n = 20,000, K = 100; canonical and marginal at "
                   "n = 5,000, K = 1,000) its row shows the estimate alone; the crossfit estimator's interval is the "
                   "one to quote",
           .example = "1e13"}),
      describe<&S::level>({.name = "level",
                           .help = "Probability of the central percentile intervals and of the crossfit "
                                   "estimator's interval (also of the plots' per-bin intervals)",
                           .example = "0.9"}),
      describe<&S::seed>({.name = "seed",
                          .help = "Seed of the resampling: bootstrap replicate b and relabelled copy b use stream "
                                  "(seed, b)",
                          .example = "7"}),
      describe<&S::bins>({.name = "bins",
                          .help = "Bins of the top-label (and binary) binned estimates; marginal and canonical use "
                                  "Doane's formula per class",
                          .example = "10"}),
      describe<&S::classes>({.name = "classes",
                             .help = "Evaluate only these classes: samples with other labels are dropped and the "
                                     "probabilities renormalised over the classes kept (e.g. three classes for the "
                                     "simplex view)",
                             .example = "0,2,1",
                             .none = "every class"}),
      describe<&S::renormalize>(
          {.name = "renormalize",
           .help = "Divide each probability row by its sum instead of rejecting rows that do not sum to 1",
           .example = "true"}),
      describe<&S::threads>({.name = "threads", .help = "Worker threads; 0 = every hardware thread", .example = "1"}),
  };
  return table;
}

}  // namespace ecekde::report
