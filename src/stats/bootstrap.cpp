// Bootstrap intervals. For ECE^KDE every replicate's multiplicities ride along the sweep as payload, so
// B replicates cost B multiply-adds per pair on top of one estimate instead of B estimates.
#include "ecekde/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "core/estimate_steps.hpp"
#include "core/distributed.hpp"
#include "core/numeric.hpp"
#include "core/messages.hpp"
#include "ecekde/random.hpp"
#include "core/replicate_reducers.hpp"
#include "core/ring.hpp"
#include "core/ring_estimate.hpp"
#include "stats/resampling.hpp"

namespace ecekde {

namespace {

// Calls take(i) for each of the n rows drawn for resample `replicate`, in the order drawn.
template <class Take>
void draw_resample(std::size_t n, std::uint64_t seed, std::size_t replicate, Take take) {
  Rng rng = Rng::stream(seed, replicate);
  for (std::size_t d = 0; d < n; ++d) take(static_cast<std::size_t>(rng.below(n)));
}

}  // namespace

std::vector<std::size_t> bootstrap_indices(std::size_t n, std::uint64_t seed, std::size_t replicate) {
  std::vector<std::size_t> idx;
  idx.reserve(n);
  draw_resample(n, seed, replicate, [&](std::size_t i) { idx.push_back(i); });
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

// Row j's sums for one replicate over a set of centres (x_t: dim x count, transposed; their class runs,
// offsets and multiplicities weight(i)), computed directly with their own maximum over the centres the
// replicate contains, and added into acc (scaled by exp(acc_m)) max-shifted. The fallback for rows whose
// replicate denominator underflows in the shared sweep (their dominant neighbours were not resampled).
template <class Weight>
void add_exact_sums(const double* log_x_row, const double* x_t, std::size_t count, std::size_t dim,
                    const LabelledPoints& runs, std::span<const double> offsets, double inv_h, Weight weight,
                    double& acc_m, double* acc) {
  std::vector<double> score(count);
  double m = -INFINITY;
  for (std::size_t i = 0; i < count; ++i) {
    if (weight(i) == 0) continue;
    double d = 0;
    for (std::size_t k = 0; k < dim; ++k) d += log_x_row[k] * x_t[k * count + i];
    score[i] = offsets[i] + inv_h * d;
    m = std::max(m, score[i]);
  }
  std::vector<double> sums(runs.classes, 0.0);
  for (std::size_t i = 0; i < count; ++i)
    if (weight(i) != 0) sums[runs.label(i)] += weight(i) * std::exp(score[i] - m);
  add_shifted(acc_m, acc, m, sums.data(), runs.classes);
}

// Below this (relative to the row's largest weight, 1) a replicate's denominator has lost digits to
// the exp(-700) flush: recompute that row exactly.
constexpr double kUnderflowGuard = 1e-200;

// Replicate b's class sums of row j (own class `own`, multiplicity c_j) from the shared sweep's sums
// (laid out [c*stride + b], scaled by exp(-m); self the row's own score) into num; false where the
// denominator underflowed and the row must be recomputed exactly.
bool replicate_sums(const double* sums, std::size_t stride, std::size_t b, double m, double self, double c_j,
                    std::size_t own, BootstrapCopies copies, std::vector<double>& num) {
  for (std::size_t c = 0; c < num.size(); ++c) num[c] = sums[c * stride + b];
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
  return den >= kUnderflowGuard;
}

// The exact sums of a recomputed row: exact(with_copies) gives them with the row's c_j - 1 other copies
// as neighbours or without; those of the convention, unless the resample holds no other sample, when the
// row's copies are its only neighbours.
template <class Exact>
std::vector<double> exact_replicate_sums(BootstrapCopies copies, Exact exact) {
  std::vector<double> num = exact(copies == BootstrapCopies::plain);
  double den = 0;
  for (double v : num) den += v;
  if (!(den > 0)) num = exact(true);
  return num;
}

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
  x.centre_offsets(h, offsets, plan.threads);
  for (std::size_t j = 0; j < n; ++j)
    std::copy_n(mult_by_row.begin() + static_cast<std::ptrdiff_t>(lp.original[j] * B), B,
                mult.begin() + static_cast<std::ptrdiff_t>(j * stride));

  std::vector<std::vector<std::size_t>> redo(n);  // replicates to recompute exactly, per row
  auto finish = [&](std::size_t j, double m, double self, const double* sums, const double* own_sums) {
    terms[lp.original[j]] = row_error(lp, j, own_sums, p);
    std::vector<double> num(L);
    for (std::size_t b = 0; b < B; ++b) {
      const double c_j = mult[j * stride + b];
      if (c_j == 0) continue;
      if (replicate_sums(sums, stride, b, m, self, c_j, lp.label(j), copies, num))
        contrib[lp.original[j] * B + b] = c_j * row_error(lp, j, num.data(), p);
      else
        redo[j].push_back(b);
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
      const std::vector<double> num = exact_replicate_sums(copies, [&](bool with_copies) {
        double m = -INFINITY;
        std::vector<double> sums(L, 0.0);
        add_exact_sums(x.log_x.data() + j * x.dim, x.x_t.data(), n, x.dim, lp, offsets, inv_h,
                       [&](std::size_t i) { return i != j ? mult[i * stride + b] : with_copies ? c_j - 1 : 0.0; },
                       m, sums.data());
        return sums;
      });
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

// The intervals of CE_p^p and CE_p from the estimate (r) and the replicates' values of CE_p^p.
KdeBootstrap with_intervals(Result r, std::vector<double> values, double level) {
  const double p = r.p;
  KdeBootstrap out;
  out.result = std::move(r);
  // CE_p's interval is CE_p^p's mapped by the increasing x^(1/p) (interpolated quantiles of the roots
  // would differ slightly and no longer correspond).
  auto root = [p](double v) { return root_of(v, p); };
  out.ce_pow_p = make_interval(out.result.ce_pow_p, std::move(values), level);
  out.ce.estimate = out.result.ce;
  out.ce.level = level;
  out.ce.lower = root(out.ce_pow_p.lower);
  out.ce.upper = root(out.ce_pow_p.upper);
  for (double v : out.ce_pow_p.replicates) out.ce.replicates.push_back(root(v));
  return out;
}

// bootstrap_kde() of prepared input: alone, with rows split over the ranks, or with problems owned by
// ranks (own rows' marginal), each then swept alone on its owner.
KdeBootstrap prepared_bootstrap(const Prepared& in, const EstimateOptions& options, const BootstrapOptions& bootstrap) {
  // the replicates' sweep of each problem, and the estimate's where that sweep does not give it
  const double replicate_work = replicate_pair_work(padded_replicates(bootstrap.replicates));
  const bool own_sweep = !replicates_give_estimate(in.problems.front(), in.plan);
  const PlannedWork planned(in.plan.control, leave_one_out_work(in, own_sweep + replicate_work));
  check_same_replicates(in.plan.communicator, in.pred.n, in.pred.k, bootstrap.replicates, bootstrap.seed);
  Result result = start_result(options, in);
  const double h = result.bandwidth, p = options.p, weight = problem_weight(options.type);

  const std::size_t n = in.pred.n, B = bootstrap.replicates, Q = in.problems.size();
  std::vector<double> mult(n * B, 0.0);  // input row r, replicate b -> mult[r*B + b]
  for (std::size_t b = 0; b < B; ++b)
    draw_resample(n, bootstrap.seed, b, [&](std::size_t r) { mult[r * B + b] += 1; });

  const auto [mine, plan] = own_problems(in.plan, Q);
  std::vector<std::vector<double>> per_problem(Q);  // the estimate's term, then each replicate's
  for (std::size_t q = mine.begin; q < mine.end; ++q) {
    const LabelledPoints& lp = in.problems[q];
    const auto rep = problem_replicates(lp, h, p, weight, mult, B, bootstrap.copies, plan);
    per_problem[q].push_back(weight * (rep.mean_error ? *rep.mean_error : mean_error(lp, h, p, plan)));
    per_problem[q].insert(per_problem[q].end(), rep.values.begin(), rep.values.end());
  }
  std::vector<double> values = sum_over_problems(in.plan, per_problem, 1 + B);
  result.ce_pow_p = values.front();
  values.erase(values.begin());
  if (options.type == CalibrationType::marginal) {
    result.class_ce_pow_p.assign(Q, 0.0);
    for (std::size_t q = mine.begin; q < mine.end; ++q) result.class_ce_pow_p[q] = per_problem[q][0];
    if (in.plan.owned_problems)
      combine_shares(in.plan.communicator, result.class_ce_pow_p);  // each from its owner: x + 0 = x
  }
  result.ce = root_of(result.ce_pow_p, p);
  return with_intervals(std::move(result), std::move(values), bootstrap.level);
}

}  // namespace

// Canonical: each rank counts its own rows' multiplicities in every resample (drawing the whole resample,
// n indices each, as alone), and these travel with its block of centres. A row's replicate sums over the
// blocks are merged max-shifted, as the ring's estimate merges them; rows whose replicate denominator
// underflows are recomputed exactly on a second pass of the blocks.
KdeBootstrap own_rows_bootstrap(ProbsView probs, LabelsView labels, const EstimateOptions& given,
                                const BootstrapOptions& bootstrap, std::size_t sums_bytes) {
  EstimateOptions options = given;
  options.estimator = Estimator::paper;  // the bootstrap's estimate and bandwidth are the paper's, whatever the estimator
  RingInput ring = ring_input(probs, labels, options);
  if (options.type != CalibrationType::canonical)
    return prepared_bootstrap(one_dimensional_ring(ring, options, false).in, options, bootstrap);
  const RingLayout& at = ring.at;
  Prepared& in = ring.in;
  const std::size_t B = bootstrap.replicates, stride = padded_replicates(B);
  check_same_replicates(at.comm, at.n, probs.cols(), B, bootstrap.seed);
  in.problems = make_problems(in.pred, options.type, in.plan.threads);
  std::vector<double>().swap(in.pred.f);  // the sweeps read the problem's points only
  const LabelledPoints& lp = in.problems.front();
  const KernelPoints& x = lp.points;
  const SweepPlan& plan = in.plan;
  Result r = ring_paper_result(ring, options);
  const double h = r.bandwidth, p = options.p, inv_h = 1 / h;

  // This rank's centres' multiplicities in each resample, centre-major in the problem's order (padded):
  // the block's payload.
  std::vector<double> mult(x.n * stride, 0.0);
  {
    std::vector<std::size_t> position(x.n);
    for (std::size_t j = 0; j < x.n; ++j) position[lp.original[j]] = j;
    for (std::size_t b = 0; b < B; ++b)
      draw_resample(at.n, bootstrap.seed, b, [&](std::size_t row) {
        if (row >= at.first && row - at.first < at.own) mult[position[row - at.first] * stride + b] += 1;
      });
  }
  std::vector<std::vector<double>> offsets(1, std::vector<double>(x.n));
  x.centre_offsets(h, offsets[0], plan.threads);
  const std::vector<double> packed = CentreBlock::pack(lp, offsets, at.largest, mult, stride);
  const CentreBlock::Shape shape{lp.classes, x.dim, 1, stride};

  const std::size_t L = lp.classes, width = L * (stride + 1);  // a row's replicate sums, then its own
  const std::size_t group = std::max<std::size_t>(1, sums_bytes / (sizeof(double) * width));
  std::vector<double> terms(x.n), contrib(x.n * B, 0.0);
  struct Redo {
    std::size_t row, replicate;
  };
  std::vector<Redo> redo;
  // Every rank takes as many groups as the rank with the most rows, so that every block goes round each time.
  for (std::size_t g0 = 0; g0 == 0 || g0 < at.largest; g0 += group) {
    const std::size_t rows = std::min(group, x.n - std::min(g0, x.n));
    std::vector<double> scale(rows, -INFINITY), self(rows, -INFINITY), sums(rows * width, 0.0);
    around_the_ring(at, packed, shape, [&](const CentreBlock& block, bool own) {
      if (rows == 0 || block.count() == 0) return;
      auto merge = [&](std::size_t q, double m, double self_score, const double* replicate_sums, const double*) {
        add_shifted(scale[q], sums.data() + q * width, m, replicate_sums, width);  // the own sums follow them
        self[q] = std::max(self[q], self_score);
      };
      sweep_points(x.log_x.data() + g0 * x.dim, block.x_t(), rows, block.count(), x.dim, plan,
                   ReplicateClassSums(block.runs(), *plan.kernels, block.offsets()[0], inv_h, block.payload().data(),
                                      stride, merge, own, g0));
    });
    std::vector<double> num(L);
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t j = g0 + q;
      const double* row = sums.data() + q * width;
      terms[lp.original[j]] = row_error(lp, j, row + L * stride, p);
      for (std::size_t b = 0; b < B; ++b) {
        const double c_j = mult[j * stride + b];
        if (c_j == 0) continue;
        if (replicate_sums(row, stride, b, scale[q], self[q], c_j, lp.label(j), bootstrap.copies, num))
          contrib[lp.original[j] * B + b] = c_j * row_error(lp, j, num.data(), p);
        else
          redo.push_back({j, b});
      }
    }
  }

  // The rows recomputed exactly: per row and replicate, the sums with and without its other copies, each
  // over every block's centres that the replicate holds.
  std::vector<double> redos{static_cast<double>(redo.size())};
  combine_shares(at.comm, redos);
  if (redos[0] > 0) {
    std::vector<double> with_m(redo.size(), -INFINITY), without_m = with_m;
    std::vector<double> with(redo.size() * L, 0.0), without = with;
    around_the_ring(at, packed, shape, [&](const CentreBlock& block, bool own) {
      parallel_for(redo.size(), plan.threads, [&](std::size_t e, int) {
        const std::size_t j = redo[e].row, b = redo[e].replicate;  // not a structured binding: lambdas capture them
        const double c_j = mult[j * stride + b];
        const std::span<const double> payload = block.payload();
        for (const bool with_copies : {true, false})
          add_exact_sums(x.log_x.data() + j * x.dim, block.x_t(), block.count(), x.dim, block.runs(),
                         block.offsets()[0], inv_h,
                         [&](std::size_t i) {
                           return !own || i != j ? payload[i * stride + b] : with_copies ? c_j - 1 : 0.0;
                         },
                         with_copies ? with_m[e] : without_m[e], (with_copies ? with : without).data() + e * L);
      });
    });
    for (std::size_t e = 0; e < redo.size(); ++e) {
      const auto [j, b] = redo[e];
      const std::vector<double> num = exact_replicate_sums(bootstrap.copies, [&](bool with_copies) {
        const double* sums = (with_copies ? with : without).data() + e * L;
        return std::vector<double>(sums, sums + L);
      });
      contrib[lp.original[j] * B + b] = mult[j * stride + b] * row_error(lp, j, num.data(), p);
    }
  }

  const double n = static_cast<double>(at.n), weight = problem_weight(options.type);
  // The estimate from the replicates' sweep where that is estimate()'s (in double), as alone.
  r.ce_pow_p = weight * (replicates_give_estimate(lp, plan) ? total_over_ranks(at.comm, terms) / n
                                                             : ring_mean_error(at, lp, h, p, plan));
  r.ce = root_of(r.ce_pow_p, p);
  std::vector<double> values(B), column(x.n);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t row = 0; row < x.n; ++row) column[row] = contrib[row * B + b];
    values[b] = accurate_sum(column);
  }
  combine_shares(at.comm, values);
  for (double& v : values) v = weight * v / n;
  return with_intervals(std::move(r), std::move(values), bootstrap.level);
}

}  // namespace detail

KdeBootstrap bootstrap_kde(ProbsView probs, LabelsView labels, const EstimateOptions& options,
                           const BootstrapOptions& bootstrap) {
  check_options(options);
  detail::check_paper_entry(options, "bootstrap_kde");
  detail::check_bootstrap(bootstrap);
  if (options.execution.own_rows) return detail::own_rows_bootstrap(probs, labels, options, bootstrap);
  const auto in = detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true);
  return detail::prepared_bootstrap(in, options, bootstrap);
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
    detail::refuse_own_rows();
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
