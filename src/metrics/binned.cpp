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
using detail::ScoredSamples;

inline constexpr std::size_t kMaxBins = 65536;

// One-dimensional problem: score s_j, positive when hit.
ScoredSamples one_dimensional(std::size_t n) {
  ScoredSamples s;
  s.n = n;
  s.dim = 1;
  s.score.resize(n);
  s.hit.resize(n);
  return s;
}

std::vector<ScoredSamples> make_binned_problems(const detail::CheckedPredictions& pred, CalibrationType type) {
  const std::size_t n = pred.n, k = pred.k;
  std::vector<ScoredSamples> out;
  switch (type) {
    case CalibrationType::canonical: {
      ScoredSamples s;
      s.n = n;
      s.dim = k;
      s.score = pred.f;
      s.hit = pred.y;
      out.push_back(std::move(s));
      break;
    }
    case CalibrationType::binary: {  // the last column is P(y = 1), for one column and two alike
      ScoredSamples s = one_dimensional(n);
      for (std::size_t j = 0; j < n; ++j) {
        s.score[j] = pred(j, k - 1);
        s.hit[j] = pred.y[j] == 1 ? 0 : -1;
      }
      out.push_back(std::move(s));
      break;
    }
    case CalibrationType::top_label: {
      ScoredSamples s = one_dimensional(n);
      for (std::size_t j = 0; j < n; ++j) {
        std::size_t top = 0;
        for (std::size_t c = 1; c < k; ++c)
          if (pred(j, c) > pred(j, top)) top = c;  // ties go to the lowest index, as in the KDE estimators
        s.score[j] = pred(j, top);
        s.hit[j] = static_cast<std::size_t>(pred.y[j]) == top ? 0 : -1;
      }
      out.push_back(std::move(s));
      break;
    }
    case CalibrationType::marginal:
      for (std::size_t c = 0; c < k; ++c) {
        ScoredSamples s = one_dimensional(n);
        for (std::size_t j = 0; j < n; ++j) {
          s.score[j] = pred(j, c);
          s.hit[j] = static_cast<std::size_t>(pred.y[j]) == c ? 0 : -1;
        }
        out.push_back(std::move(s));
      }
      break;
  }
  return out;
}

std::vector<std::vector<double>> problem_edges(const ScoredSamples& s, const BinnedOptions& options) {
  std::vector<std::vector<double>> edges;
  for (std::size_t d = 0; d < s.dim; ++d) {
    const std::vector<double> column = s.column(d);
    const std::size_t bins = options.bins ? *options.bins : doane_bins(column);
    edges.push_back(detail::bin_edges(column, options.binning, bins));
  }
  return edges;
}

// The forms. L_p values are sums of per-cell or per-sample terms (compensated, in a fixed order);
// the maximum is the p -> infinity limit of the same form.
double per_bin_value(const Cells& cells, std::size_t n, double p, bool maximum) {
  std::vector<double> terms(cells.count);
  for (std::size_t c = 0; c < cells.count; ++c) {
    double e = 0;
    for (std::size_t d = 0; d < cells.dim; ++d) {
      const double gap = cells.mean_label(c, d) - cells.mean_score(c, d);
      e = maximum ? std::max(e, std::fabs(gap)) : e + detail::pow_abs(gap, p);
    }
    terms[c] = maximum ? e : static_cast<double>(cells.size[c]) / static_cast<double>(n) * e;
  }
  return maximum ? *std::max_element(terms.begin(), terms.end()) : detail::accurate_sum(terms);
}

double per_sample_value(const ScoredSamples& s, const Cells& cells, double p, bool maximum) {
  std::vector<double> terms(s.n);
  for (std::size_t i = 0; i < s.n; ++i) {
    const std::size_t c = cells.cell_of[i];
    double e = 0;
    for (std::size_t d = 0; d < s.dim; ++d) {
      const double gap = cells.mean_label(c, d) - s.at(i, d);
      e = maximum ? std::max(e, std::fabs(gap)) : e + detail::pow_abs(gap, p);
    }
    terms[i] = e;
  }
  return maximum ? *std::max_element(terms.begin(), terms.end())
                 : detail::accurate_sum(terms) / static_cast<double>(s.n);
}

// Kumar, Liang & Ma (2019): E[(ybar - fbar)^2] = (mu - fbar)^2 + mu (1 - mu) / n_b for a bin whose
// labels are Bernoulli(mu), and ybar (1 - ybar) / (n_b - 1) is unbiased for mu (1 - mu) / n_b.
double debiased_value(const Cells& cells, std::size_t n) {
  std::vector<double> terms(cells.count, 0.0);
  for (std::size_t c = 0; c < cells.count; ++c) {
    if (cells.size[c] < 2) continue;
    const double nb = static_cast<double>(cells.size[c]);
    double e = 0;
    for (std::size_t d = 0; d < cells.dim; ++d) {
      const double ybar = cells.mean_label(c, d), gap = ybar - cells.mean_score(c, d);
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
    out[c] = {b, edges[b], edges[b + 1], cells.size[c], cells.mean_score(c, 0), cells.mean_label(c, 0)};
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
    for (std::size_t d = 0; d < dim; ++d) {
      cell.mean_prediction.push_back(cells.mean_score(c, d));
      cell.mean_label.push_back(cells.mean_label(c, d));
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

}  // namespace

BinnedResult binned_calibration_error(ProbsView probs, LabelsView labels, const BinnedOptions& options) {
  const BinnedForm form = options.form.value_or(
      options.type == CalibrationType::canonical ? BinnedForm::per_sample : BinnedForm::per_bin);
  check_options(options, form);
  if (probs.cols() > 0) detail::check_type_applies(options.type, probs.cols());
  const detail::CheckedPredictions pred = detail::read_predictions(probs, labels, options.renormalize);

  BinnedResult r;
  r.type = options.type;
  r.binning = options.binning;
  r.form = form;
  r.p = options.p;
  r.maximum = options.maximum;
  r.n = pred.n;
  r.k = pred.k;
  // Binary counts both classes: their gaps are equal in size, so L_p sums double and the maximum stays.
  const double weight = options.type == CalibrationType::binary && !options.maximum ? 2.0 : 1.0;
  for (const ScoredSamples& s : make_binned_problems(pred, options.type)) {
    const std::vector<std::vector<double>> edges = problem_edges(s, options);
    const Cells cells = detail::make_cells(s, edges);
    double v = 0;
    switch (form) {
      case BinnedForm::per_bin: v = per_bin_value(cells, s.n, options.p, options.maximum); break;
      case BinnedForm::per_sample: v = per_sample_value(s, cells, options.p, options.maximum); break;
      case BinnedForm::debiased: v = debiased_value(cells, s.n); break;
    }
    v *= weight;
    if (options.type == CalibrationType::marginal) r.class_ce_pow_p.push_back(v);
    r.ce_pow_p = options.maximum ? std::max(r.ce_pow_p, v) : r.ce_pow_p + v;
    if (s.dim == 1) r.diagrams.push_back(diagram(cells, edges[0]));
    else r.cells = simplex_cells(cells);
    r.edges.insert(r.edges.end(), edges.begin(), edges.end());
  }
  if (options.maximum) r.ce = r.ce_pow_p;
  else if (form == BinnedForm::debiased) r.ce = std::sqrt(std::max(r.ce_pow_p, 0.0));
  else r.ce = std::pow(r.ce_pow_p, 1 / options.p);
  return r;
}

}  // namespace ecekde
