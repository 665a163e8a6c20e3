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
#include "metrics/histogram.hpp"
#include "report/own_rows.hpp"

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

namespace {

// The rows a bandwidth search averages its criterion over by default.
std::size_t usual_search_rows(std::size_t n) {
  const std::size_t max_rows = BandwidthOptions{}.max_rows;
  return max_rows == 0 ? n : std::min(n, max_rows);
}

}  // namespace

double paper_search_work(CalibrationType type, std::size_t n, std::size_t k, std::size_t rows) {
  const double classes = type == CalibrationType::canonical || type == CalibrationType::marginal ? static_cast<double>(k) : 1;
  return static_cast<double>(rows) * static_cast<double>(n) * classes;
}

std::size_t paper_search_rows(CalibrationType type, std::size_t n, std::size_t k, const Settings& s) {
  const std::size_t usual = usual_search_rows(n);
  if (paper_search_work(type, n, k, usual) <= s.paper_search_limit) return usual;
  const double affordable = std::floor(s.paper_search_limit / paper_search_work(type, n, k, 1));
  return std::min(usual, std::max(kMinPaperSearchRows, static_cast<std::size_t>(affordable)));
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

namespace detail {

void summary_terms(const double* f, std::size_t k, std::int64_t y, double* out) {
  const std::size_t classes = k == 1 ? 2 : k;
  auto prob = [&](std::size_t c) { return k == 1 ? (c == 1 ? f[0] : 1 - f[0]) : f[c]; };
  std::size_t top = 0;
  for (std::size_t c = 1; c < classes; ++c)
    if (prob(c) > prob(top)) top = c;  // ties: the lowest class
  const auto label = static_cast<std::size_t>(y);
  double brier = 0;
  for (std::size_t c = 0; c < classes; ++c) brier += (prob(c) - (c == label)) * (prob(c) - (c == label));
  out[0] = top == label;
  out[1] = prob(top);
  out[2] = -std::log(std::max(prob(label), DBL_MIN));
  out[3] = brier;
}

Summary summary_of_terms(const std::vector<double>& terms, std::size_t n, std::size_t k) {
  Summary s;
  s.n = n;
  s.k = k;
  for (std::size_t r = 0; r < n; ++r) {
    const double* t = terms.data() + r * kSummaryTerms;
    s.accuracy += t[0];
    s.mean_confidence += t[1];
    s.nll += t[2];
    s.brier += t[3];
  }
  const double rows = static_cast<double>(n);
  s.accuracy /= rows;
  s.mean_confidence /= rows;
  s.nll /= rows;
  s.brier /= rows;
  return s;
}

}  // namespace detail

Summary summarize(ProbsView probs, LabelsView labels) {
  const std::size_t n = probs.rows(), k = probs.cols();
  std::vector<double> terms(n * detail::kSummaryTerms), row(k);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < k; ++c) row[c] = probs(r, c);
    detail::summary_terms(row.data(), k, labels[r], terms.data() + r * detail::kSummaryTerms);
  }
  return detail::summary_of_terms(terms, n, k);
}

namespace {

using Root = std::function<double(double)>;

ExecutionOptions execution_of(const Settings& s) {
  return {.threads = s.threads, .control = s.control, .communicator = s.communicator, .own_rows = s.own_rows};
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
// or O(n log n), not a copy and a check of the n x K input).
template <class Prepared>
detail::Resampled resample(ProbsView probs, LabelsView labels, const Prepared& statistic, const Settings& s) {
  const ExecutionOptions execution = execution_of(s);
  Interval interval = bootstrap(
      probs.rows(), [&](std::span<const std::size_t> rows) { return statistic.resampled(rows); }, bootstrap_options(s),
      execution);
  CalibrationTestResult test = calibration_test(
      probs, labels, [&](ProbsView, LabelsView y) { return statistic.relabelled(y); }, {s.replicates, s.seed},
      execution);
  return {std::move(interval), std::move(test)};
}

// The report's uncertainty of a statistic S from its interval and test, the interval's ends mapped by `root`.
std::optional<Uncertainty> uncertainty_of(const std::optional<detail::Resampled>& r, const Root& root) {
  if (!r) return std::nullopt;
  return Uncertainty{r->interval.lower, r->interval.upper, root(r->interval.lower), root(r->interval.upper),
                     r->test.statistic, r->test.p_value};
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

// n: the rows over every rank (with own rows, more than probs holds).
KdeEntry kde_entry(ProbsView probs, LabelsView labels, std::size_t n, CalibrationType type, const Settings& s) {
  EstimateOptions o;
  o.estimator = Estimator::paper;
  o.type = type;
  o.p = s.p;
  o.execution = execution_of(s);
  const std::size_t k = probs.cols(), usual = usual_search_rows(n), search_rows = paper_search_rows(type, n, k, s);
  o.bandwidth_selection.max_rows = search_rows;
  std::optional<double> search_reduced;
  if (search_rows < usual) search_reduced = paper_search_work(type, n, k, usual);
  if (!resamples_paper(type, n, k, s)) {
    KdeEntry e{estimate(probs, labels, o), std::nullopt, std::nullopt, search_reduced};
    if (s.replicates > 0) e.resampling_skipped = paper_resampling_work(type, n, k, s.replicates);
    return e;
  }
  const KdeBootstrap boot = bootstrap_kde(probs, labels, o, bootstrap_options(s));
  EstimateOptions fixed = o;  // the test uses the bandwidth chosen above (the same choice, made once)
  fixed.bandwidth = boot.result.bandwidth;
  const CalibrationTestResult test = calibration_test_kde(probs, labels, fixed, {s.replicates, s.seed});
  return {boot.result,
          Uncertainty{boot.ce_pow_p.lower, boot.ce_pow_p.upper, boot.ce.lower, boot.ce.upper, test.statistic,
                      test.p_value},
          std::nullopt, search_reduced};
}

// own: the ranks' own rows, or null when this process holds every row.
BinnedEntry binned_entry(ProbsView probs, LabelsView labels, const BinnedOptions& o, const Settings& s,
                         const detail::OwnRows* own) {
  const Root root = [&o](double v) { return ecekde::detail::binned_ce(v, o.maximum, o.form.value_or(BinnedForm::per_bin), o.p); };
  if (own) {
    auto [result, resampled] = own->binned(o);
    return {o, std::move(result), uncertainty_of(resampled, root)};
  }
  const BinnedStatistic statistic(probs, labels, o);
  BinnedEntry e{o, statistic.result(), std::nullopt};
  if (s.replicates > 0) e.uncertainty = uncertainty_of(resample(probs, labels, statistic, s), root);
  return e;
}

MmceEntry mmce_entry(ProbsView probs, LabelsView labels, const Settings& s, const detail::OwnRows* own) {
  MmceOptions o;
  o.gradient = false;
  if (own) {
    auto [result, resampled] = own->mmce(o);
    return {o, std::move(result), uncertainty_of(resampled, clamped_sqrt)};
  }
  const MmceStatistic statistic(probs, labels, o);
  MmceEntry e{o, statistic.result(), std::nullopt};
  if (s.replicates > 0) e.uncertainty = uncertainty_of(resample(probs, labels, statistic, s), clamped_sqrt);
  return e;
}

std::string with_resampling(const Settings& s) {
  return s.replicates ? ", bootstrap and test (B = " + std::to_string(s.replicates) + ")" : "";
}

}  // namespace

namespace detail {

PreparedInput restrict_and_renormalize(ProbsView probs, LabelsView labels, const std::vector<std::int64_t>& classes,
                                       std::size_t first_row) {
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
    if (!(sum > 0)) fail("probs row " + std::to_string(first_row + r) + " gives probability 0 to every class kept");
    for (std::size_t c : columns) out.probs.push_back(probs(r, c) / sum);
    out.labels.push_back(y);
  }
  out.n = out.labels.size();
  return out;
}

}  // namespace detail

Report compute_prepared(ProbsView probs, LabelsView labels, const Settings& s, std::string probs_dtype,
                        const StageRunner& run_stage) {
  const StageRunner stage = run_stage ? run_stage : [](std::string_view, const std::function<void()>& work) { work(); };
  if (!(s.paper_resampling_limit >= 0))
    fail("paper_resampling_limit must be a number >= 0, got " + options::to_text(options::Value{s.paper_resampling_limit}));
  if (!(s.paper_search_limit >= 0))
    fail("paper_search_limit must be a number >= 0, got " + options::to_text(options::Value{s.paper_search_limit}));
  Report r;
  r.settings = s;
  r.probs_dtype = std::move(probs_dtype);
  const std::size_t k = probs.cols();
  std::optional<detail::OwnRows> own_rows;  // each rank's own rows, read and checked once for every stage
  if (s.own_rows) own_rows.emplace(probs, labels, s);
  const detail::OwnRows* own = own_rows ? &*own_rows : nullptr;
  const std::size_t n = own ? own->n() : probs.rows();
  // The binned estimates come first: they are quick, and they check the input for everything after.
  for (const BinnedOptions& o : binned_plan(k, s))
    stage("ECE^bin " + describe(o) + with_resampling(s),
          [&] { r.binned.push_back(binned_entry(probs, labels, o, s, own)); });
  r.summary = own ? own->summary() : summarize(probs, labels);
  for (CalibrationType t : kde_types(k))
    stage("crossfit " + std::string(to_string(t)) + ": pilot, bandwidth, estimate, interval",
          [&] { r.crossfit.push_back(crossfit_entry(probs, labels, t, s)); });
  for (CalibrationType t : kde_types(k))
    stage("ECE^KDE (paper) " + std::string(to_string(t)) + ": bandwidth, estimate" +
              (resamples_paper(t, n, k, s) ? with_resampling(s) : ""),
          [&] { r.kde.push_back(kde_entry(probs, labels, n, t, s)); });
  if (k >= 2) stage("MMCE" + with_resampling(s), [&] { r.mmce = mmce_entry(probs, labels, s, own); });
  return r;
}

std::optional<PreparedInput> prepare(ProbsView probs, LabelsView labels, const Settings& settings) {
  if (settings.own_rows) return detail::prepare_own_rows(probs, labels, settings);
  // Check the input as given (row and column numbers in messages then refer to it) with a quick estimator
  // that applies every check of the others.
  BinnedOptions check;
  check.type = probs.cols() == 1 ? CalibrationType::binary : CalibrationType::top_label;
  check.renormalize = settings.renormalize;
  binned_calibration_error(probs, labels, check);
  if ((settings.renormalize && probs.cols() > 1) || !settings.classes.empty())
    return detail::restrict_and_renormalize(probs, labels, settings.classes);
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
      describe<&S::paper_search_limit>(
          {.name = "paper_search_limit",
           .help = "Largest work, in kernel sums per candidate bandwidth, of the paper's bandwidth search: rows x n x K "
                   "for canonical and marginal, rows x n for top-label and binary, its criterion averaged over "
                   "rows = min(n, 20,000). Beyond it (e.g. canonical and marginal at n = 10,000, K = 100) the "
                   "criterion is averaged over the most rows within it, but at least 1,000, each still against every "
                   "sample, and a line under the table says so",
           .example = "1e12"}),
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
      describe<&S::own_rows>(
          {.name = "own_rows",
           .help = "Distributed runs: each rank passes only its own rows (consecutive slices in rank order; the CLI "
                   "under mpirun reads each rank's rows itself), so no rank holds more than its share of the input. "
                   "Every number is alone's: bitwise, but for ECE^KDE canonical (1e-12 relative) and a Doane bin "
                   "count of the canonical binned estimate that lands within rounding of a whole number; that "
                   "estimate's cells are counted, not listed. No figures",
           .example = "true"}),
  };
  return table;
}

}  // namespace ecekde::report
