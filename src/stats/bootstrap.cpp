// Bootstrap intervals. For ECE^KDE every replicate's multiplicities ride along the sweep as payload, so
// B replicates cost B multiply-adds per pair on top of one estimate instead of B estimates.
#include "ecekde/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/estimate_steps.hpp"
#include "core/numeric.hpp"
#include "core/messages.hpp"
#include "ecekde/random.hpp"
#include "core/replicate_reducers.hpp"

namespace ecekde {

std::vector<std::size_t> bootstrap_indices(std::size_t n, std::uint64_t seed, std::size_t replicate) {
  Rng rng = Rng::stream(seed, replicate);
  std::vector<std::size_t> idx(n);
  for (auto& i : idx) i = static_cast<std::size_t>(rng.below(n));
  return idx;
}

double quantile_sorted(std::span<const double> sorted, double q) {
  ECEKDE_ASSERT(!sorted.empty());
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

namespace detail {

void check_bootstrap(const BootstrapOptions& o) {
  if (o.replicates < 2) fail_with("bootstrap replicates must be at least 2, got ", o.replicates);
  if (!(o.level > 0 && o.level < 1)) fail_with("bootstrap level must be in (0, 1), got ", o.level);
}

Interval make_interval(double estimate, std::vector<double> replicates, double level) {
  Interval out;
  out.estimate = estimate;
  out.level = level;
  std::vector<double> sorted = replicates;
  std::sort(sorted.begin(), sorted.end());
  out.lower = quantile_sorted(sorted, (1 - level) / 2);
  out.upper = quantile_sorted(sorted, (1 + level) / 2);
  out.replicates = std::move(replicates);
  return out;
}

namespace {

// A row's sums for one replicate computed directly, with its own maximum over the centres the replicate
// contains: the fallback for rows whose replicate denominator underflows in the shared sweep (their
// dominant neighbours were not resampled). weight(i) is centre i's multiplicity in the replicate.
template <class Weight>
std::vector<double> exact_row_sums(const LabelledPoints& lp, std::span<const double> offsets, double inv_h,
                                   std::size_t j, Weight weight) {
  const KernelPoints& x = lp.points;
  std::vector<double> score(x.n);
  double m = -INFINITY;
  for (std::size_t i = 0; i < x.n; ++i) {
    if (weight(i) == 0) continue;
    double d = 0;
    for (std::size_t k = 0; k < x.dim; ++k) d += x.log_x[j * x.dim + k] * x.x(i, k);
    score[i] = offsets[i] + inv_h * d;
    m = std::max(m, score[i]);
  }
  std::vector<double> sums(lp.classes, 0.0);
  for (std::size_t i = 0; i < x.n; ++i)
    if (weight(i) != 0) sums[lp.label(i)] += weight(i) * std::exp(score[i] - m);
  return sums;
}

// Below this (relative to the row's largest weight, 1) a replicate's denominator has lost digits to
// the exp(-700) flush: recompute that row exactly.
constexpr double kUnderflowGuard = 1e-200;

// Replicate values (weighted mean row errors) of one problem, and its estimate's mean row error from the
// same sweep where that is estimate()'s (replicates_give_estimate); mult is n x B in input-row order.
struct ProblemReplicates {
  std::vector<double> values;
  std::optional<double> mean_error;
};

ProblemReplicates problem_replicates(const LabelledPoints& lp, double h, double p, double weight,
                                     const std::vector<double>& mult_by_row, std::size_t B,
                                     BootstrapCopies copies, const SweepPlan& plan) {
  const KernelPoints& x = lp.points;
  const std::size_t n = x.n, L = lp.classes;
  const double inv_h = 1 / h;
  // Rows of the sorted multiplicities (and of the sweep's sums) are padded (padded_replicates).
  const std::size_t stride = padded_replicates(B);
  std::vector<double> offsets(n), mult(n * stride, 0.0), contrib(n * B, 0.0), terms(n);
  x.centre_offsets(h, offsets);
  for (std::size_t j = 0; j < n; ++j)
    std::copy_n(mult_by_row.begin() + static_cast<std::ptrdiff_t>(lp.original[j] * B), B,
                mult.begin() + static_cast<std::ptrdiff_t>(j * stride));

  std::vector<std::vector<std::size_t>> redo(n);  // replicates to recompute exactly, per row
  auto finish = [&](std::size_t j, double m, double self, const double* sums, const double* own_sums) {
    terms[lp.original[j]] = row_error(lp, j, own_sums, p);
    const std::size_t own = lp.label(j);
    std::vector<double> num(L);
    for (std::size_t b = 0; b < B; ++b) {
      const double c_j = mult[j * stride + b];
      if (c_j == 0) continue;
      for (std::size_t c = 0; c < L; ++c) num[c] = sums[c * stride + b];
      if (copies == BootstrapCopies::plain && c_j >= 2) {
        // add the c_j - 1 other copies (weight exp(self - m) each) without overflow: rescale whichever
        // side is larger to 1
        const double delta = self - m;
        const double scale_sums = delta > 0 ? std::exp(-delta) : 1.0, scale_self = delta > 0 ? 1.0 : std::exp(delta);
        for (auto& v : num) v *= scale_sums;
        num[own] += (c_j - 1) * scale_self;
      }
      double den = 0;
      for (double v : num) den += v;
      if (!(den >= kUnderflowGuard)) {
        redo[j].push_back(b);
        continue;
      }
      contrib[lp.original[j] * B + b] = c_j * row_error(lp, j, num.data(), p);
    }
  };
  sweep(x, plan, ReplicateClassSums(lp, *plan.kernels, offsets, inv_h, mult.data(), stride, finish));

  // Each row recomputed for a replicate sweeps every centre again: counted, so that progress does not sit
  // at 100% through them (at K = 1,000 and a small h, a large share of the rows and replicates).
  std::size_t redone = 0;
  for (const auto& replicates : redo) redone += replicates.size();
  WorkLedger::start(plan.control, static_cast<double>(redone) * static_cast<double>(n));
  parallel_for(n, plan.threads, [&](std::size_t j, int) {
    WorkLedger::check(plan.control);
    for (std::size_t b : redo[j]) {
      const double c_j = mult[j * stride + b];
      auto weight_with_copies = [&](std::size_t i) { return i == j ? c_j - 1 : mult[i * stride + b]; };
      auto weight_without = [&](std::size_t i) { return i == j ? 0.0 : mult[i * stride + b]; };
      std::vector<double> num = copies == BootstrapCopies::plain
                                    ? exact_row_sums(lp, offsets, inv_h, j, weight_with_copies)
                                    : exact_row_sums(lp, offsets, inv_h, j, weight_without);
      double den = 0;
      for (double v : num) den += v;
      if (!(den > 0))  // the resample holds no other sample: the row's copies are its only neighbours
        num = exact_row_sums(lp, offsets, inv_h, j, weight_with_copies);
      contrib[lp.original[j] * B + b] = c_j * row_error(lp, j, num.data(), p);
    }
    WorkLedger::done(plan.control, static_cast<double>(redo[j].size()) * static_cast<double>(n));
  });

  ProblemReplicates out;
  out.values.resize(B);
  std::vector<double> column(n);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t r = 0; r < n; ++r) column[r] = contrib[r * B + b];
    out.values[b] = weight * accurate_sum(column) / static_cast<double>(n);
  }
  if (replicates_give_estimate(lp, plan)) out.mean_error = accurate_sum(terms) / static_cast<double>(n);
  return out;
}

}  // namespace
}  // namespace detail

KdeBootstrap bootstrap_kde(ProbsView probs, LabelsView labels, const EstimateOptions& options,
                           const BootstrapOptions& bootstrap) {
  check_options(options);
  detail::check_plug_in(options, "bootstrap_kde");
  detail::check_bootstrap(bootstrap);
  const auto in = detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true);
  // the replicates' sweep of each problem, and the estimate's where that sweep does not give it
  const double replicate_work = detail::replicate_pair_work(detail::padded_replicates(bootstrap.replicates));
  const bool own_sweep = !detail::replicates_give_estimate(in.problems.front(), in.plan);
  const detail::PlannedWork planned(in.plan.control, detail::leave_one_out_work(in, own_sweep + replicate_work));
  detail::check_same_replicates(in.plan.communicator, in.pred.n, in.pred.k, bootstrap.replicates, bootstrap.seed);
  KdeBootstrap out;
  out.result = detail::start_result(options, in);
  const double h = out.result.bandwidth, p = options.p, weight = detail::problem_weight(options.type);

  const std::size_t n = in.pred.n, B = bootstrap.replicates;
  std::vector<double> mult(n * B, 0.0);  // input row r, replicate b -> mult[r*B + b]
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t r : bootstrap_indices(n, bootstrap.seed, b)) mult[r * B + b] += 1;

  std::vector<double> values(B, 0.0);
  for (const auto& lp : in.problems) {
    const auto rep = detail::problem_replicates(lp, h, p, weight, mult, B, bootstrap.copies, in.plan);
    const double v = weight * (rep.mean_error ? *rep.mean_error : detail::mean_error(lp, h, p, in.plan));
    if (options.type == CalibrationType::marginal) out.result.class_ce_pow_p.push_back(v);
    out.result.ce_pow_p += v;
    for (std::size_t b = 0; b < B; ++b) values[b] += rep.values[b];
  }
  out.result.ce = detail::root_of(out.result.ce_pow_p, p);

  // CE_p's interval is CE_p^p's mapped by the increasing x^(1/p) (interpolated quantiles of the roots
  // would differ slightly and no longer correspond).
  auto root = [p](double v) { return detail::root_of(v, p); };
  out.ce_pow_p = detail::make_interval(out.result.ce_pow_p, std::move(values), bootstrap.level);
  out.ce.estimate = out.result.ce;
  out.ce.level = bootstrap.level;
  out.ce.lower = root(out.ce_pow_p.lower);
  out.ce.upper = root(out.ce_pow_p.upper);
  for (double v : out.ce_pow_p.replicates) out.ce.replicates.push_back(root(v));
  return out;
}

namespace {

// Rows of the input copied out in the given order (a bootstrap resample), in the input's float type so
// that the estimators apply the same checks as to the input itself.
class Rows {
 public:
  Rows(ProbsView probs, LabelsView labels, std::span<const std::size_t> index)
      : n_(index.size()), k_(probs.cols()), float32_(probs.dtype() == ProbsView::DType::float32), y_(index.size()) {
    if (float32_) {
      f32_.reserve(n_ * k_);
      for (std::size_t i : index)
        for (std::size_t c = 0; c < k_; ++c) f32_.push_back(static_cast<float>(probs(i, c)));
    } else {
      f64_.reserve(n_ * k_);
      for (std::size_t i : index)
        for (std::size_t c = 0; c < k_; ++c) f64_.push_back(probs(i, c));
    }
    for (std::size_t j = 0; j < n_; ++j) y_[j] = labels[index[j]];
  }
  ProbsView probs() const {
    return float32_ ? ProbsView::row_major(f32_.data(), n_, k_) : ProbsView::row_major(f64_.data(), n_, k_);
  }
  LabelsView labels() const { return LabelsView(y_); }

 private:
  std::size_t n_, k_;
  bool float32_;
  std::vector<double> f64_;
  std::vector<float> f32_;
  std::vector<std::int64_t> y_;
};

}  // namespace

Interval bootstrap(std::size_t n, const std::function<double(std::span<const std::size_t>)>& statistic,
                   const BootstrapOptions& options, const ExecutionOptions& execution) {
  detail::check_bootstrap(options);
  if (n == 0) fail("bootstrap needs at least 1 sample");
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  detail::WorkLedger::plan(execution.control, static_cast<double>(options.replicates + 1));  // one unit per statistic
  const double estimate = statistic(all);
  detail::WorkLedger::done(execution.control, 1);
  std::vector<double> values(options.replicates, 0.0);
  // Split across ranks, each computes its share of the replicates (a statistic must then not use the
  // communicator itself: it runs on the workers).
  if (execution.own_rows)
    fail("own_rows (each rank passing only its own rows) is supported by estimate() and, for the canonical type, "
         "calibration_test_kde() only");
  Communicator* comm = detail::split_across(execution.communicator);
  detail::check_same_replicates(comm, n, 0, options.replicates, options.seed);
  const detail::Share mine = detail::share_of(options.replicates, comm);
  const double counted = static_cast<double>(options.replicates) / static_cast<double>(std::max<std::size_t>(mine.size(), 1));
  detail::parallel_for(
      mine.size(), execution.threads,
      [&](std::size_t own, int) {
        values[mine.begin + own] = statistic(bootstrap_indices(n, options.seed, mine.begin + own));
        detail::WorkLedger::done(execution.control, counted);
      },
      execution.control);
  detail::combine_shares(comm, values);
  return detail::make_interval(estimate, std::move(values), options.level);
}

Interval bootstrap(ProbsView probs, LabelsView labels, const std::function<double(ProbsView, LabelsView)>& statistic,
                   const BootstrapOptions& options, const ExecutionOptions& execution) {
  return bootstrap(
      probs.rows(),
      [&](std::span<const std::size_t> index) {
        const Rows rows(probs, labels, index);
        return statistic(rows.probs(), rows.labels());
      },
      options, execution);
}

}  // namespace ecekde
