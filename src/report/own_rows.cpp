// The report's binned estimates, MMCE and summary from each rank's own rows (own_rows.hpp).
#include "report/own_rows.hpp"

#include <string>

#include "core/distributed.hpp"
#include "core/parallel.hpp"
#include "core/work_ledger.hpp"
#include "metrics/histogram.hpp"
#include "metrics/ring_binned.hpp"
#include "stats/resampling.hpp"

namespace ecekde::report::detail {

namespace {

using ecekde::detail::combine_shares;
using ecekde::detail::combined;

// Every rank's `mine` one after another in rank order (sizes may differ): two all_sums, each value exact.
std::vector<double> concatenated(Communicator* comm, const std::vector<double>& mine) {
  const double size[] = {static_cast<double>(mine.size())};
  const std::vector<double> sizes = ecekde::detail::all_gather(comm, size);
  std::size_t offset = 0, total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (comm && static_cast<int>(r) < comm->rank()) offset += static_cast<std::size_t>(sizes[r]);
    total += static_cast<std::size_t>(sizes[r]);
  }
  std::vector<double> all(total, 0.0);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(offset));
  combine_shares(comm, all);
  return all;
}

}  // namespace

std::optional<PreparedInput> prepare_own_rows(ProbsView probs, LabelsView labels, const Settings& settings) {
  EstimateOptions check;  // read_predictions' checks, as the binned check of prepare() applies them
  check.type = probs.cols() == 1 ? CalibrationType::binary : CalibrationType::top_label;
  check.renormalize = settings.renormalize;
  check.execution = {.threads = settings.threads, .communicator = settings.communicator, .own_rows = true};
  const ecekde::detail::RingInput ring = ecekde::detail::ring_input(probs, labels, check);
  if (!(settings.renormalize && probs.cols() > 1) && settings.classes.empty()) return std::nullopt;
  std::string failure;
  std::optional<PreparedInput> out;
  try {
    out = restrict_and_renormalize(probs, labels, settings.classes, ring.at.first);
  } catch (const Error& e) {
    failure = e.what();
  }
  ecekde::detail::throw_if_any_failed(ring.at.comm, failure);
  return out;
}

OwnRows::OwnRows(ProbsView probs, LabelsView labels, const Settings& settings)
    : settings_(settings),
      execution_{.threads = settings.threads, .control = settings.control, .communicator = settings.communicator} {
  EstimateOptions o;
  o.type = probs.cols() == 1 ? CalibrationType::binary : CalibrationType::top_label;
  o.execution = execution_;
  o.execution.own_rows = true;
  ring_ = ecekde::detail::ring_input(probs, labels, o);
}

Summary OwnRows::summary() const {
  const ecekde::detail::CheckedPredictions& pred = ring_.in.pred;
  std::vector<double> terms(n() * kSummaryTerms, 0.0);
  for (std::size_t i = 0; i < ring_.at.own; ++i)
    summary_terms(pred.f.data() + i * pred.k, pred.k, pred.y[i], terms.data() + (ring_.at.first + i) * kSummaryTerms);
  combine_shares(ring_.at.comm, terms);  // each row's from the rank that holds it
  return summary_of_terms(terms, n(), pred.k);
}

const OwnRows::Gathered& OwnRows::gathered(CalibrationType type) const {
  if (auto it = gathered_.find(type); it != gathered_.end()) return it->second;
  EstimateOptions o;
  o.type = type;
  o.execution = execution_;
  o.execution.own_rows = true;
  ecekde::detail::OneDimensionalRing ring = ecekde::detail::one_dimensional_ring(ring_, o, true);
  const ecekde::detail::LabelledPoints& lp = ring.in.problems.front();
  Gathered g;
  g.score.resize(n());
  g.hit.resize(n());
  for (std::size_t j = 0; j < lp.points.n; ++j) {
    g.score[lp.original[j]] = lp.points.x(j, 0);
    g.hit[lp.original[j]] = lp.label(j) == 1;
  }
  g.lower = std::move(ring.lower.front());
  g.upper = std::move(ring.upper.front());
  return gathered_.emplace(type, std::move(g)).first->second;
}

template <class Statistic>
Resampled OwnRows::resample(const Statistic& statistic, const Gathered& rows) const {
  // Every rank holds the gathered rows, so the replicates and copies split across the ranks as they do
  // when every rank holds the whole input.
  const std::size_t B = settings_.replicates;
  const Interval interval = bootstrap(
      n(), [&](std::span<const std::size_t> resample) { return statistic.resampled(resample); },
      {.replicates = B, .level = settings_.level, .seed = settings_.seed}, execution_);
  const CalibrationTestResult test = ecekde::detail::test_of_copies(
      [&] { return statistic.relabelled_hits(rows.hit); }, {B, settings_.seed}, execution_, n(), ring_.in.pred.k,
      [&](std::size_t b) {
        return statistic.relabelled_hits(
            ecekde::detail::hits_of(ecekde::detail::copy_uniforms(n(), settings_.seed, b), rows.lower, rows.upper));
      });
  return {interval, test};
}

std::pair<MmceResult, std::optional<Resampled>> OwnRows::mmce(const MmceOptions& options) const {
  const Gathered& rows = gathered(CalibrationType::top_label);
  const MmceStatistic statistic(rows.score, rows.hit, ring_.in.pred.k, options);
  if (settings_.replicates == 0) return {statistic.result(), std::nullopt};
  return {statistic.result(), resample(statistic, rows)};
}

std::pair<BinnedResult, std::optional<Resampled>> OwnRows::binned(const BinnedOptions& options) const {
  const std::size_t B = settings_.replicates;
  if (options.type == CalibrationType::marginal) return marginal(options);
  if (options.type != CalibrationType::canonical) {
    const Gathered& rows = gathered(options.type);
    const BinnedStatistic statistic(rows.score, rows.hit, ring_.in.pred.k, options);
    if (B == 0) return {statistic.result(), std::nullopt};
    return {statistic.result(), resample(statistic, rows)};
  }
  const ecekde::detail::RingCanonicalBinned statistic(ring_.at, ring_.in.pred, options, settings_.threads);
  if (B == 0) return {statistic.result(), std::nullopt};
  ecekde::detail::check_bootstrap({.replicates = B, .level = settings_.level, .seed = settings_.seed});
  using ecekde::detail::WorkLedger;
  WorkLedger::plan(settings_.control, static_cast<double>(2 * B + 1));
  std::vector<double> replicates(B), copies(B);
  for (std::size_t b = 0; b < B; ++b) {  // one after another: each is collective
    replicates[b] = statistic.resampled(settings_.seed, b);
    WorkLedger::done(settings_.control, 1);
  }
  const double observed = statistic.relabelled_as_given();
  WorkLedger::done(settings_.control, 1);
  for (std::size_t b = 0; b < B; ++b) {
    copies[b] = statistic.relabelled(settings_.seed, b);
    WorkLedger::done(settings_.control, 1);
  }
  Resampled out{ecekde::detail::make_interval(statistic.result().ce_pow_p, std::move(replicates), settings_.level), {}};
  out.test.statistic = observed;
  out.test.p_value = ecekde::detail::p_value(observed, copies);
  out.test.null_values = std::move(copies);
  return {statistic.result(), std::move(out)};
}

// Marginal: each rank computes its own classes' values on the data, on every bootstrap resample and on
// every relabelled copy, with their bins, as alone computes each class's problem; the classes' values are
// then concatenated in class order on every rank and added up in that order.
std::pair<BinnedResult, std::optional<Resampled>> OwnRows::marginal(const BinnedOptions& options) const {
  const std::size_t B = settings_.replicates, K = ring_.in.pred.k, N = n();
  if (B > 0) ecekde::detail::check_bootstrap({.replicates = B, .level = settings_.level, .seed = settings_.seed});
  EstimateOptions o;
  o.type = CalibrationType::marginal;
  o.execution = execution_;
  o.execution.own_rows = true;
  const ecekde::detail::OneDimensionalRing ring = ecekde::detail::one_dimensional_ring(ring_, o, B > 0);
  const ecekde::detail::Share classes = ecekde::detail::share_of(K, ring_.at.comm);
  std::vector<BinnedStatistic> statistics;
  std::vector<std::vector<std::uint8_t>> hits;
  for (std::size_t c = classes.begin; c < classes.end; ++c) {
    const ecekde::detail::LabelledPoints& lp = ring.in.problems[c];
    std::vector<double> score(N);
    std::vector<std::uint8_t> hit(N);
    for (std::size_t j = 0; j < lp.points.n; ++j) {
      score[lp.original[j]] = lp.points.x(j, 0);
      hit[lp.original[j]] = lp.label(j) == 1;
    }
    statistics.emplace_back(score, hit, K, options);
    hits.push_back(std::move(hit));
  }
  const std::size_t own = statistics.size(), per_class = B > 0 ? 2 + 2 * B : 1;
  std::vector<double> values(own * per_class);  // per class: data, then the test's statistic, resamples, copies
  using ecekde::detail::WorkLedger;
  WorkLedger::plan(settings_.control, static_cast<double>(2 * B));
  for (std::size_t q = 0; q < own; ++q) {
    values[q * per_class] = statistics[q].result().ce_pow_p;
    if (B > 0) values[q * per_class + 1] = statistics[q].relabelled_hits(hits[q]);
  }
  ecekde::detail::parallel_for(
      2 * B, settings_.threads,
      [&](std::size_t task, int) {
        const std::size_t b = task % B;
        if (task < B) {
          const std::vector<std::size_t> rows = bootstrap_indices(N, settings_.seed, b);
          for (std::size_t q = 0; q < own; ++q) values[q * per_class + 2 + b] = statistics[q].resampled(rows);
        } else {
          const std::vector<double> u = ecekde::detail::copy_uniforms(N, settings_.seed, b);
          for (std::size_t q = 0; q < own; ++q) {
            const std::size_t c = classes.begin + q;
            values[q * per_class + 2 + B + b] = statistics[q].relabelled_hits(
                ecekde::detail::hits_of(u, ring.lower[c], ring.upper[c]));
          }
        }
        WorkLedger::done(settings_.control, 1);
      },
      settings_.control);
  // The bins of each class, as numbers: its edges, then its diagram's bins (6 values each).
  std::vector<double> bins;
  for (const BinnedStatistic& s : statistics) {
    const BinnedResult& r = s.result();
    bins.push_back(static_cast<double>(r.edges.front().size()));
    bins.insert(bins.end(), r.edges.front().begin(), r.edges.front().end());
    bins.push_back(static_cast<double>(r.diagrams.front().size()));
    for (const ReliabilityBin& d : r.diagrams.front())
      bins.insert(bins.end(), {static_cast<double>(d.index), d.lower, d.upper, static_cast<double>(d.count),
                               d.mean_confidence, d.mean_label});
  }
  const std::vector<double> all_values = concatenated(ring_.at.comm, values), all_bins = concatenated(ring_.at.comm, bins);

  BinnedResult r;
  r.type = CalibrationType::marginal;
  r.binning = options.binning;
  r.form = options.form.value_or(BinnedForm::per_bin);
  r.p = options.p;
  r.maximum = options.maximum;
  r.n = N;
  r.k = K;
  std::vector<double> replicates(B, 0.0), copies(B, 0.0);
  double observed = 0;
  const bool maximum = options.maximum;
  for (std::size_t c = 0; c < K; ++c) {
    const double* v = all_values.data() + c * per_class;
    r.class_ce_pow_p.push_back(v[0]);
    r.ce_pow_p = combined(r.ce_pow_p, v[0], maximum);
    if (B > 0) {
      observed = combined(observed, v[1], maximum);
      for (std::size_t b = 0; b < B; ++b) {
        replicates[b] = combined(replicates[b], v[2 + b], maximum);
        copies[b] = combined(copies[b], v[2 + B + b], maximum);
      }
    }
  }
  for (std::size_t at = 0; at < all_bins.size();) {
    const auto edges = static_cast<std::size_t>(all_bins[at++]);
    r.edges.emplace_back(all_bins.begin() + static_cast<std::ptrdiff_t>(at),
                         all_bins.begin() + static_cast<std::ptrdiff_t>(at + edges));
    at += edges;
    const auto occupied = static_cast<std::size_t>(all_bins[at++]);
    std::vector<ReliabilityBin>& diagram = r.diagrams.emplace_back();
    for (std::size_t i = 0; i < occupied; ++i, at += 6)
      diagram.push_back({static_cast<std::size_t>(all_bins[at]), all_bins[at + 1], all_bins[at + 2],
                         static_cast<std::size_t>(all_bins[at + 3]), all_bins[at + 4], all_bins[at + 5]});
    r.occupied += occupied;
  }
  r.ce = ecekde::detail::binned_ce(r.ce_pow_p, maximum, r.form, r.p);
  if (B == 0) return {r, std::nullopt};
  Resampled out{ecekde::detail::make_interval(r.ce_pow_p, std::move(replicates), settings_.level), {}};
  out.test.statistic = observed;
  out.test.p_value = ecekde::detail::p_value(observed, copies);
  out.test.null_values = std::move(copies);
  return {r, std::move(out)};
}

}  // namespace ecekde::report::detail
