#include "metrics/ring_binned.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/distributed.hpp"
#include "core/label_draws.hpp"
#include "core/messages.hpp"
#include "core/numeric.hpp"
#include "core/parallel.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/random.hpp"

namespace ecekde::detail {

namespace {

struct FingerprintHash {
  std::size_t operator()(const CellFingerprint& f) const { return static_cast<std::size_t>(f.a ^ (f.b >> 1)); }
};

// `width` values per row of the whole input, each row's from the rank that holds it: one zero-padded all_sum
// (x + 0 = x), so every rank gets them exactly.
template <class Fill>
std::vector<double> gather_rows(const RingLayout& at, std::size_t width, Fill fill) {
  std::vector<double> all(at.n * width, 0.0);
  for (std::size_t i = 0; i < at.own; ++i) fill(i, all.data() + (at.first + i) * width);
  combine_shares(at.comm, all);
  return all;
}

// How many times each of this rank's rows is drawn among `rows` (empty: every row once).
std::vector<std::size_t> own_multiplicity(const RingLayout& at, const std::vector<std::size_t>& rows) {
  std::vector<std::size_t> m(at.own, rows.empty() ? 1 : 0);
  for (std::size_t r : rows)
    if (r >= at.first && r < at.first + at.own) ++m[r - at.first];
  return m;
}

}  // namespace

RingCanonicalBinned::RingCanonicalBinned(const RingLayout& at, const CheckedPredictions& own,
                                         const BinnedOptions& options, int threads)
    : at_(at), own_(&own), options_(options), threads_(threads) {
  const BinnedForm form = options.form.value_or(BinnedForm::per_sample);
  if (options.type != CalibrationType::canonical || form != BinnedForm::per_sample ||
      options.binning != Binning::equal_width)
    fail_with("own_rows takes the canonical binned estimate with equal-width bins in its per-sample form only");
  if (!options.maximum) check_p(options.p);
  const std::size_t K = own.k;
  running_.resize(own.n * K);
  for (std::size_t i = 0; i < own.n; ++i) running_sums(own.f.data() + i * K, K, running_.data() + i * K);
  labels_ = gathered_labels(own.y);
  const std::vector<std::vector<double>> edges = edges_of({});
  data_cells_ = fingerprints(edges);

  BinnedResult& r = result_;
  r.type = CalibrationType::canonical;
  r.binning = options.binning;
  r.form = form;
  r.p = options.p;
  r.maximum = options.maximum;
  r.n = at.n;
  r.k = K;
  r.edges = edges;
  std::vector<CellFingerprint> distinct = data_cells_;
  std::sort(distinct.begin(), distinct.end(), [](const CellFingerprint& x, const CellFingerprint& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  r.occupied = static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  r.ce_pow_p = value({}, data_cells_, labels_);
  r.ce = binned_ce(r.ce_pow_p, options.maximum, form, options.p);
}

std::vector<std::int32_t> RingCanonicalBinned::gathered_labels(const std::vector<std::int32_t>& own) const {
  const std::vector<double> all = gather_rows(at_, 1, [&](std::size_t i, double* out) { out[0] = own[i]; });
  return {all.begin(), all.end()};
}

std::vector<std::vector<double>> RingCanonicalBinned::edges_of(const std::vector<std::size_t>& rows) const {
  const std::size_t K = own_->k, n = rows.empty() ? at_.n : rows.size();
  std::vector<std::size_t> bins(K, options_.bins.value_or(0));
  if (!options_.bins) {
    // Doane's moments about the first sample's scores, as alone takes them (doane_bins_of_columns), each
    // rank summing its rows times their multiplicity.
    const std::size_t origin_row = rows.empty() ? 0 : rows.front();
    std::vector<double> origin(K, 0.0);
    if (origin_row >= at_.first && origin_row < at_.first + at_.own)
      std::copy_n(own_->f.data() + (origin_row - at_.first) * K, K, origin.begin());
    combine_shares(at_.comm, origin);
    const std::vector<std::size_t> m = own_multiplicity(at_, rows);
    std::vector<double> mean(K, 0.0), moments(2 * K, 0.0);
    for (std::size_t i = 0; i < at_.own; ++i)
      for (std::size_t c = 0; m[i] && c < K; ++c) mean[c] += static_cast<double>(m[i]) * ((*own_)(i, c) - origin[c]);
    combine_shares(at_.comm, mean);
    for (double& v : mean) v /= static_cast<double>(n);
    for (std::size_t i = 0; i < at_.own; ++i)
      for (std::size_t c = 0; m[i] && c < K; ++c) {
        const double d = ((*own_)(i, c) - origin[c]) - mean[c], times = static_cast<double>(m[i]);
        moments[c] += times * (d * d);
        moments[K + c] += times * (d * d * d);
      }
    combine_shares(at_.comm, moments);
    for (std::size_t c = 0; c < K; ++c) bins[c] = doane_of_moments(n, moments[c], moments[K + c]);
  }
  std::vector<std::vector<double>> edges;
  for (std::size_t b : bins) edges.push_back(bin_edges({}, Binning::equal_width, b));
  return edges;
}

std::vector<CellFingerprint> RingCanonicalBinned::fingerprints(const std::vector<std::vector<double>>& edges) const {
  ScoredSamples mine;
  mine.n = at_.own;
  mine.dim = own_->k;
  mine.score = own_->f;
  const std::vector<CellFingerprint> own = cell_fingerprints(mine, edges);
  // Each 64-bit hash travels as two 32-bit halves, whole numbers that a double holds exactly.
  const std::vector<double> all = gather_rows(at_, 4, [&](std::size_t i, double* out) {
    out[0] = static_cast<double>(own[i].a >> 32), out[1] = static_cast<double>(own[i].a & 0xffffffffu);
    out[2] = static_cast<double>(own[i].b >> 32), out[3] = static_cast<double>(own[i].b & 0xffffffffu);
  });
  std::vector<CellFingerprint> out(at_.n);
  for (std::size_t r = 0; r < at_.n; ++r) {
    const double* v = all.data() + 4 * r;
    out[r] = {(static_cast<std::uint64_t>(v[0]) << 32) | static_cast<std::uint64_t>(v[1]),
              (static_cast<std::uint64_t>(v[2]) << 32) | static_cast<std::uint64_t>(v[3])};
  }
  return out;
}

double RingCanonicalBinned::value(const std::vector<std::size_t>& rows, const std::vector<CellFingerprint>& cells,
                                  const std::vector<std::int32_t>& labels) const {
  const std::size_t K = own_->k, n = rows.empty() ? at_.n : rows.size();
  // Each cell's size and label counts over the samples (a row drawn m times counts m times).
  std::unordered_map<CellFingerprint, std::size_t, FingerprintHash> cell_of;
  std::vector<std::size_t> size;
  std::vector<std::pair<std::size_t, std::int32_t>> hits;  // (cell, label) per sample
  auto count = [&](std::size_t r) {
    const auto [it, inserted] = cell_of.try_emplace(cells[r], size.size());
    if (inserted) size.push_back(0);
    ++size[it->second];
    hits.emplace_back(it->second, labels[r]);
  };
  if (rows.empty()) {
    for (std::size_t r = 0; r < at_.n; ++r) count(r);
  } else {
    for (std::size_t r : rows) count(r);
  }
  std::sort(hits.begin(), hits.end());
  LabelSums sums;  // per cell, its labels in increasing order with their counts
  sums.begin.assign(size.size() + 1, 0);
  for (std::size_t e = 0; e < hits.size(); ++e) {
    if (e == 0 || hits[e] != hits[e - 1]) {
      sums.coord.push_back(static_cast<std::uint32_t>(hits[e].second));
      sums.count.push_back(0);
      ++sums.begin[hits[e].first + 1];
    }
    sums.count.back() += 1;
  }
  for (std::size_t c = 0; c < size.size(); ++c) sums.begin[c + 1] += sums.begin[c];

  // This rank's rows' terms (per_sample_value's), for the rows drawn.
  const std::vector<std::size_t> m = own_multiplicity(at_, rows);
  std::vector<double> own_terms(at_.own, 0.0);
  parallel_for(at_.own, threads_, [&](std::size_t i, int) {
    if (!m[i]) return;
    const std::size_t c = cell_of.at(cells[at_.first + i]);
    MeanLabels mean_label(sums, c, size[c]);
    double e = 0;
    for (std::size_t d = 0; d < K; ++d) {
      const double gap = mean_label(d) - (*own_)(i, d);
      e = options_.maximum ? std::max(e, std::fabs(gap)) : e + pow_abs(gap, options_.p);
    }
    own_terms[i] = e;
  });
  const std::vector<double> all = gather_rows(at_, 1, [&](std::size_t i, double* out) { out[0] = own_terms[i]; });
  std::vector<double> terms;
  if (rows.empty()) {
    terms = all;
  } else {
    terms.reserve(n);
    for (std::size_t r : rows) terms.push_back(all[r]);
  }
  const double v = options_.maximum ? *std::max_element(terms.begin(), terms.end())
                                    : accurate_sum(terms) / static_cast<double>(n);
  return combined(0.0, v, options_.maximum);  // as BinnedStatistic combines its one problem
}

double RingCanonicalBinned::resampled(std::uint64_t seed, std::size_t replicate) const {
  const std::vector<std::size_t> rows = bootstrap_indices(at_.n, seed, replicate);
  return value(rows, fingerprints(edges_of(rows)), labels_);
}

double RingCanonicalBinned::relabelled(std::uint64_t seed, std::size_t replicate) const {
  Rng rng = Rng::stream(seed, replicate);
  for (std::size_t r = 0; r < at_.first; ++r) rng.uniform();  // the other ranks' rows before these, one each
  const std::size_t K = own_->k;
  std::vector<std::int32_t> own(at_.own);
  for (std::size_t i = 0; i < at_.own; ++i)
    own[i] = static_cast<std::int32_t>(draw_label(running_.data() + i * K, K, rng));
  return value({}, data_cells_, gathered_labels(own));
}

double RingCanonicalBinned::relabelled_as_given() const { return value({}, data_cells_, labels_); }

}  // namespace ecekde::detail
