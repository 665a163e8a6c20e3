// binned_calibration_error(): every type reduces to scored samples (one coordinate, or K for
// canonical), whose bins form cells; the forms are reductions over those cells.
#include "ecekde/binned.hpp"

#include <algorithm>
#include <cmath>

#include "core/inputs.hpp"
#include "core/numeric.hpp"
#include "core/problems.hpp"
#include "core/messages.hpp"
#include "metrics/histogram.hpp"

namespace ecekde {

namespace {

using detail::Cells;
using detail::combined;
using detail::LabelSums;
using detail::MeanLabels;
using detail::ScoredSamples;

inline constexpr std::size_t kMaxBins = 65536;

// One-dimensional problem: score s_j, positive when hit (hits set apart).
ScoredSamples one_dimensional(std::size_t n) {
  ScoredSamples s;
  s.n = n;
  s.dim = 1;
  s.score.resize(n);
  return s;
}

// Sample j's hit in problem `problem` of `type` when its label is y (top: its top-label class).
std::int32_t hit_of(CalibrationType type, std::size_t problem, std::size_t top, std::int32_t y) {
  switch (type) {
    case CalibrationType::canonical: return y;
    case CalibrationType::binary: return y == 1 ? 0 : -1;
    case CalibrationType::top_label: return static_cast<std::size_t>(y) == top ? 0 : -1;
    case CalibrationType::marginal: return static_cast<std::size_t>(y) == problem ? 0 : -1;
  }
  return -1;
}

// The problems' scores (their hits come from State::hits); top[j] is sample j's top-label class (top-label).
std::vector<ScoredSamples> make_binned_problems(detail::CheckedPredictions& pred, CalibrationType type,
                                                std::vector<std::size_t>& top) {
  const std::size_t n = pred.n, k = pred.k;
  std::vector<ScoredSamples> out;
  switch (type) {
    case CalibrationType::canonical: {
      ScoredSamples s;
      s.n = n;
      s.dim = k;
      s.score = std::move(pred.f);
      out.push_back(std::move(s));
      break;
    }
    case CalibrationType::binary: {  // the last column is P(y = 1), for one column and two alike
      ScoredSamples s = one_dimensional(n);
      for (std::size_t j = 0; j < n; ++j) s.score[j] = pred(j, k - 1);
      out.push_back(std::move(s));
      break;
    }
    case CalibrationType::top_label: {
      ScoredSamples s = one_dimensional(n);
      top.resize(n);
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t c = 1; c < k; ++c)
          if (pred(j, c) > pred(j, top[j])) top[j] = c;  // ties go to the lowest index, as in the KDE estimators
        s.score[j] = pred(j, top[j]);
      }
      out.push_back(std::move(s));
      break;
    }
    case CalibrationType::marginal:
      for (std::size_t c = 0; c < k; ++c) {
        ScoredSamples s = one_dimensional(n);
        for (std::size_t j = 0; j < n; ++j) s.score[j] = pred(j, c);
        out.push_back(std::move(s));
      }
      break;
  }
  return out;
}

// Each coordinate's edges. Several coordinates' bin counts come from their moments taken row by row, and
// equal-mass edges from their columns copied out in blocks of 64, reading the samples' rows once per
// block: one column at a time read a cache line per score (at K = 1,000 that was a fifth of the canonical
// binned bootstrap, and the column copies a quarter after it).
std::vector<std::vector<double>> problem_edges(const ScoredSamples& s, const BinnedOptions& options) {
  if (s.dim == 1)
    return {detail::bin_edges(s.score, options.binning, options.bins ? *options.bins : doane_bins(s.score))};
  const std::vector<std::size_t> bins = options.bins ? std::vector<std::size_t>(s.dim, *options.bins)
                                                     : detail::doane_bins_of_columns(s.score.data(), s.n, s.dim);
  std::vector<std::vector<double>> edges;
  if (options.binning == Binning::equal_width) {
    for (std::size_t b : bins) edges.push_back(detail::bin_edges({}, Binning::equal_width, b));
    return edges;
  }
  constexpr std::size_t kBlock = 64;
  std::vector<double> columns(std::min(kBlock, s.dim) * s.n);  // column d - d0 at (d - d0) * n
  for (std::size_t d0 = 0; d0 < s.dim; d0 += kBlock) {
    const std::size_t width = std::min(kBlock, s.dim - d0);
    for (std::size_t i = 0; i < s.n; ++i)
      for (std::size_t d = 0; d < width; ++d) columns[d * s.n + i] = s.at(i, d0 + d);
    for (std::size_t d = 0; d < width; ++d)
      edges.push_back(detail::bin_edges(std::span<const double>(columns).subspan(d * s.n, s.n), options.binning,
                                        bins[d0 + d]));
  }
  return edges;
}

// The forms. L_p values are sums of per-cell or per-sample terms (compensated, in a fixed order);
// the maximum is the p -> infinity limit of the same form. `labels` are the cells' label sums: the data's,
// or a relabelled copy's.
double per_bin_value(const Cells& cells, const LabelSums& labels, std::size_t n, double p, bool maximum) {
  std::vector<double> terms(cells.count);
  for (std::size_t c = 0; c < cells.count; ++c) {
    MeanLabels mean_label = cells.mean_labels(c, labels);
    double e = 0;
    for (std::size_t d = 0; d < cells.dim; ++d) {
      const double gap = mean_label(d) - cells.mean_score(c, d);
      e = maximum ? std::max(e, std::fabs(gap)) : e + detail::pow_abs(gap, p);
    }
    terms[c] = maximum ? e : static_cast<double>(cells.size[c]) / static_cast<double>(n) * e;
  }
  return maximum ? *std::max_element(terms.begin(), terms.end()) : detail::accurate_sum(terms);
}

double per_sample_value(const ScoredSamples& s, const Cells& cells, const LabelSums& labels, double p,
                        bool maximum) {
  std::vector<double> terms(s.n);
  for (std::size_t i = 0; i < s.n; ++i) {
    MeanLabels mean_label = cells.mean_labels(cells.cell_of[i], labels);
    double e = 0;
    for (std::size_t d = 0; d < s.dim; ++d) {
      const double gap = mean_label(d) - s.at(i, d);
      e = maximum ? std::max(e, std::fabs(gap)) : e + detail::pow_abs(gap, p);
    }
    terms[i] = e;
  }
  return maximum ? *std::max_element(terms.begin(), terms.end())
                 : detail::accurate_sum(terms) / static_cast<double>(s.n);
}

// Kumar, Liang & Ma (2019): E[(ybar - fbar)^2] = (mu - fbar)^2 + mu (1 - mu) / n_b for a bin whose
// labels are Bernoulli(mu), and ybar (1 - ybar) / (n_b - 1) is unbiased for mu (1 - mu) / n_b.
double debiased_value(const Cells& cells, const LabelSums& labels, std::size_t n) {
  std::vector<double> terms(cells.count, 0.0);
  for (std::size_t c = 0; c < cells.count; ++c) {
    if (cells.size[c] < 2) continue;
    const double nb = static_cast<double>(cells.size[c]);
    MeanLabels mean_label = cells.mean_labels(c, labels);
    double e = 0;
    for (std::size_t d = 0; d < cells.dim; ++d) {
      const double ybar = mean_label(d), gap = ybar - cells.mean_score(c, d);
      e += gap * gap - ybar * (1 - ybar) / (nb - 1);
    }
    terms[c] = nb / static_cast<double>(n) * e;
  }
  return detail::accurate_sum(terms);
}

std::vector<ReliabilityBin> diagram(const Cells& cells, const std::vector<double>& edges) {
  std::vector<ReliabilityBin> out(cells.count);
  for (std::size_t c = 0; c < cells.count; ++c) {
    const std::uint32_t b = cells.bins[c];
    out[c] = {b, edges[b], edges[b + 1], cells.size[c], cells.mean_score(c, 0), cells.mean_labels(c)(0)};
  }
  return out;
}

std::vector<SimplexCell> simplex_cells(const Cells& cells) {
  const std::size_t dim = cells.dim;
  std::vector<SimplexCell> out(cells.count);
  for (std::size_t c = 0; c < cells.count; ++c) {
    SimplexCell& cell = out[c];
    cell.bins.assign(cells.bins.begin() + static_cast<std::ptrdiff_t>(c * dim),
                     cells.bins.begin() + static_cast<std::ptrdiff_t>((c + 1) * dim));
    cell.count = cells.size[c];
    MeanLabels mean_label = cells.mean_labels(c);
    for (std::size_t d = 0; d < dim; ++d) {
      cell.mean_prediction.push_back(cells.mean_score(c, d));
      cell.mean_label.push_back(mean_label(d));
    }
  }
  return out;
}

void check_options(const BinnedOptions& o, BinnedForm form) {
  if (!o.maximum) detail::check_p(o.p);
  if (o.bins && (*o.bins < 1 || *o.bins > kMaxBins))
    detail::fail_with("bins must be between 1 and ", kMaxBins, ", got ", *o.bins);
  if (form == BinnedForm::debiased) {
    if (o.maximum) detail::fail_with("the debiased form has no maximum (MCE) version");
    if (o.p != 2) detail::fail_with("the debiased form estimates CE_2^2 and needs p = 2, got ", o.p);
  }
}

// The form's value of one problem, times the type's weight.
double problem_value(const ScoredSamples& s, const Cells& cells, const LabelSums& labels,
                     const BinnedOptions& options, BinnedForm form) {
  // Binary counts both classes: their gaps are equal in size, so L_p sums double and the maximum stays.
  const double weight = options.type == CalibrationType::binary && !options.maximum ? 2.0 : 1.0;
  switch (form) {
    case BinnedForm::per_bin: return weight * per_bin_value(cells, labels, s.n, options.p, options.maximum);
    case BinnedForm::per_sample: return weight * per_sample_value(s, cells, labels, options.p, options.maximum);
    case BinnedForm::debiased: return weight * debiased_value(cells, labels, s.n);
  }
  return 0;
}


}  // namespace

struct BinnedStatistic::State {
  BinnedOptions options;
  BinnedForm form = BinnedForm::per_bin;
  std::size_t classes = 0;          // labels lie in [0, classes)
  std::vector<std::size_t> top;     // top-label: each sample's top-label class
  std::vector<ScoredSamples> problems;
  std::vector<Cells> cells;         // each problem's cells on the data (they depend on the scores alone)
  BinnedResult result;

  // Each sample's hit in `problem` when the labels are y.
  std::vector<std::int32_t> hits(std::size_t problem, std::span<const std::int32_t> y) const {
    std::vector<std::int32_t> out(y.size());
    for (std::size_t j = 0; j < y.size(); ++j) out[j] = hit_of(options.type, problem, top.empty() ? 0 : top[j], y[j]);
    return out;
  }
};

BinnedStatistic::BinnedStatistic(ProbsView probs, LabelsView labels, const BinnedOptions& options)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.options = options;
  st.form = options.form.value_or(options.type == CalibrationType::canonical ? BinnedForm::per_sample
                                                                             : BinnedForm::per_bin);
  check_options(options, st.form);
  if (probs.cols() > 0) detail::check_type_applies(options.type, probs.cols());
  detail::CheckedPredictions pred = detail::read_predictions(probs, labels, options.renormalize);
  st.classes = pred.k == 1 ? 2 : pred.k;

  st.result.n = pred.n;
  st.result.k = pred.k;
  const std::vector<std::int32_t> y = std::move(pred.y);
  st.problems = make_binned_problems(pred, options.type, st.top);
  for (std::size_t problem = 0; problem < st.problems.size(); ++problem) st.problems[problem].hit = st.hits(problem, y);
  finish();
}

BinnedStatistic::BinnedStatistic(std::span<const double> scores, std::span<const std::uint8_t> hits, std::size_t k,
                                 const BinnedOptions& options)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  st.options = options;
  st.form = options.form.value_or(BinnedForm::per_bin);
  check_options(options, st.form);
  if (options.type == CalibrationType::canonical) detail::fail_with("a binned estimate of one coordinate is not canonical");
  if (hits.size() != scores.size()) detail::fail_with("hits has ", hits.size(), " entries for ", scores.size(), " scores");
  st.result.n = scores.size();
  st.result.k = k;
  ScoredSamples s = one_dimensional(scores.size());
  s.score.assign(scores.begin(), scores.end());
  s.hit.resize(hits.size());
  for (std::size_t j = 0; j < hits.size(); ++j) s.hit[j] = hits[j] ? 0 : -1;
  st.problems.push_back(std::move(s));
  finish();
}

// The result from the problems' scores and hits.
void BinnedStatistic::finish() {
  State& st = *state_;
  const BinnedOptions& options = st.options;
  BinnedResult& r = st.result;
  r.type = options.type;
  r.binning = options.binning;
  r.form = st.form;
  r.p = options.p;
  r.maximum = options.maximum;
  for (const ScoredSamples& s : st.problems) {
    const std::vector<std::vector<double>> edges = problem_edges(s, options);
    Cells cells = detail::make_cells(s, edges);
    const double v = problem_value(s, cells, cells.labels, options, st.form);
    if (options.type == CalibrationType::marginal) r.class_ce_pow_p.push_back(v);
    r.ce_pow_p = combined(r.ce_pow_p, v, options.maximum);
    if (s.dim == 1) r.diagrams.push_back(diagram(cells, edges[0]));
    else r.cells = simplex_cells(cells);
    r.edges.insert(r.edges.end(), edges.begin(), edges.end());
    r.occupied += cells.count;
    st.cells.push_back(std::move(cells));
  }
  r.ce = detail::binned_ce(r.ce_pow_p, options.maximum, st.form, options.p);
}

BinnedStatistic::~BinnedStatistic() = default;
BinnedStatistic::BinnedStatistic(BinnedStatistic&&) noexcept = default;
BinnedStatistic& BinnedStatistic::operator=(BinnedStatistic&&) noexcept = default;

const BinnedResult& BinnedStatistic::result() const { return state_->result; }

double BinnedStatistic::resampled(std::span<const std::size_t> rows) const {
  const State& st = *state_;
  const std::size_t n = st.result.n;
  if (rows.size() < 2) detail::fail_with("need at least 2 samples, got ", rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i] >= n) detail::fail_with("resampled row ", i, ": index ", rows[i], " is outside [0, ", n, ")");
  double total = 0;
  ScoredSamples picked;  // one problem's rows at a time, its storage kept from one problem to the next
  for (const ScoredSamples& s : st.problems) {
    picked.n = rows.size();
    picked.dim = s.dim;
    picked.score.resize(picked.n * s.dim);
    picked.hit.resize(picked.n);
    for (std::size_t i = 0; i < picked.n; ++i) {
      for (std::size_t d = 0; d < s.dim; ++d) picked.score[i * s.dim + d] = s.score[rows[i] * s.dim + d];
      picked.hit[i] = s.hit[rows[i]];
    }
    // The cells' bins are not read here, nor their score sums by the per-sample form.
    const Cells cells = detail::make_cells(picked, problem_edges(picked, st.options),
                                           {.bins = false, .score_sums = st.form != BinnedForm::per_sample});
    total = combined(total, problem_value(picked, cells, cells.labels, st.options, st.form), st.options.maximum);
  }
  return total;
}

double BinnedStatistic::relabelled(LabelsView labels) const {
  const State& st = *state_;
  const std::vector<std::int32_t> y = detail::read_labels(labels, st.result.n, st.classes);
  double total = 0;
  for (std::size_t problem = 0; problem < st.problems.size(); ++problem) {
    const Cells& cells = st.cells[problem];
    total = combined(total,
                     problem_value(st.problems[problem], cells, detail::label_sums(cells, st.hits(problem, y)),
                                   st.options, st.form),
                     st.options.maximum);
  }
  return total;
}

double BinnedStatistic::relabelled_hits(std::span<const std::uint8_t> hits) const {
  const State& st = *state_;
  if (st.problems.size() != 1 || st.problems.front().dim != 1)
    detail::fail_with("relabelled_hits needs a one-dimensional binned estimate");
  if (hits.size() != st.result.n) detail::fail_with("hits has ", hits.size(), " entries for ", st.result.n, " samples");
  std::vector<std::int32_t> hit(hits.size());
  for (std::size_t j = 0; j < hits.size(); ++j) hit[j] = hits[j] ? 0 : -1;
  const Cells& cells = st.cells.front();
  return combined(0.0, problem_value(st.problems.front(), cells, detail::label_sums(cells, hit), st.options, st.form),
                  st.options.maximum);  // as relabelled() combines its one problem
}

BinnedResult binned_calibration_error(ProbsView probs, LabelsView labels, const BinnedOptions& options) {
  return BinnedStatistic(probs, labels, options).result();
}

}  // namespace ecekde
