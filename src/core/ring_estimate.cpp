// estimate() when each rank holds only its own rows (ExecutionOptions::own_rows). The canonical estimate
// runs its sweeps around the ring of ring.hpp: the paper's automatic bandwidth is the same search as alone
// (search_bandwidth), each criterion value the sum over the ranks of their rows' log kernel sums, and the
// crossfit estimator (its stages: crossfit.cpp; their ring variants: crossfit/on_ring.cpp) fits its
// pilots over every rank's rows and corrects on the ring.
// Marginal's ranks each own a share of the classes; top-label and binary gather their one-dimensional
// problem (n values).
#include "core/ring_estimate.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "core/crossfit.hpp"
#include "core/estimate_steps.hpp"
#include "core/label_draws.hpp"
#include "core/numeric.hpp"
#include "core/reducers.hpp"
#include "core/ring.hpp"

namespace ecekde::detail {

namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// Throws unless own_rows supports `options` (the same on every rank: options are checked to agree).
void check_ring_applies(const EstimateOptions& options) {
  auto refuse = [](std::string_view what) {
    fail_with("own_rows (each rank passing only its own rows) supports the canonical type with the crossfit "
              "estimator, or the paper's in its plug-in form with a likelihood criterion; got ",
              what);
  };
  if (options.type != CalibrationType::canonical) return;  // gathered or owned: every option of the lone path
  if (options.estimator == Estimator::crossfit) return;  // its criterion is its own (the Brier score)
  if (options.form != KdeForm::plug_in) refuse(concat("form ", to_string(options.form)));
  if (!options.bandwidth && options.bandwidth_selection.criterion == BandwidthCriterion::loo_regression)
    refuse("criterion loo-regression");
}

// The criterion at each bandwidth: per row, the log kernel sum over every centre of every block; summed
// over this rank's criterion rows, then over the ranks.
std::vector<double> ring_bandwidth_scores(const RingLayout& at, const LabelledPoints& lp,
                                          std::span<const std::size_t> rows, std::size_t total_rows,
                                          std::span<const double> bandwidths, BandwidthCriterion criterion,
                                          const SweepPlan& plan) {
  const KernelPoints& x = lp.points;
  const std::size_t H = bandwidths.size();
  std::vector<std::vector<double>> offsets(H, std::vector<double>(x.n));
  std::vector<double> inv_h(H);
  for (std::size_t b = 0; b < H; ++b) {
    x.centre_offsets(bandwidths[b], offsets[b], plan.threads);
    inv_h[b] = 1 / bandwidths[b];
  }
  // The rows as evaluation points: all of this rank's, or its criterion rows with their own positions.
  const bool every_row = rows.size() == x.n;
  const RowSubset subset = every_row ? RowSubset{} : row_subset(lp, rows);
  const KernelPoints& side = every_row ? x : subset.points;
  const std::vector<std::size_t> nobody(side.n, std::numeric_limits<std::size_t>::max());
  std::vector<double> log_sums(side.n * H, kNone);
  around_the_ring(at, CentreBlock::pack(lp, offsets, at.largest), {lp.classes, x.dim, H, 0},
                  [&](const CentreBlock& block, bool own) {
                    auto finish = [&](std::size_t j, const double* v) {
                      for (std::size_t b = 0; b < H; ++b) log_sums[j * H + b] = log_add(log_sums[j * H + b], v[b]);
                    };
                    const std::span<const std::size_t> self = own ? std::span<const std::size_t>(subset.self) : nobody;
                    sweep_block(side, block, plan, LogKernelSums(*plan.kernels, block.offsets(), inv_h, finish, self));
                  });
  std::vector<double> scores(H), column(side.n);
  for (std::size_t b = 0; b < H; ++b) {
    for (std::size_t j = 0; j < side.n; ++j) column[j] = log_sums[j * H + b];
    scores[b] = accurate_sum(column);
  }
  combine_shares(at.comm, scores);
  const double log_norm = std::log(static_cast<double>(at.n - 1));
  for (std::size_t b = 0; b < H; ++b) {
    scores[b] = scores[b] / static_cast<double>(total_rows) - log_norm;
    if (criterion == BandwidthCriterion::reference) scores[b] -= std::log(bandwidths[b]);
  }
  return scores;
}

// A binary or top-label problem row's uniforms that draw its positive class in a relabelled copy
// (uniforms_drawing): the label 1 (binary) or the row's top class (top-label).
std::pair<double, double> positive_draws(const CheckedPredictions& pred, CalibrationType type, std::size_t row,
                                         std::vector<double>& running) {
  running_sums(pred.f.data() + row * pred.k, pred.k, running.data());
  const std::size_t label = type == CalibrationType::binary ? 1 : top_index(pred, row);
  return uniforms_drawing(running.data(), pred.k, label);
}

// Top-label and binary: each rank forms its rows of the problem (score, rest, 0/1 label, crossfit's fold
// from folds_of, and with `draws` the uniforms that draw the positive class), and the n rows are
// gathered on every rank, O(n) values rather than n K. The problem is then computed as the replicated
// design computes it (rows split over the ranks): bitwise as one process computes it.
OneDimensionalRing gathered_problem(const RingLayout& at, const CheckedPredictions& pred, const EstimateOptions& options,
                                    const ExecutionOptions& execution, bool draws) {
  const LabelledPoints local = make_problems(pred, options.type)[0];
  const std::vector<std::size_t> folds = folds_of(pred, options.folds, &at);
  const std::size_t width = draws ? 6 : 4;  // s, rest, label, fold; the draws' bounds
  std::vector<double> rows(at.n * width, 0.0), running(pred.k);
  for (std::size_t j = 0; j < local.points.n; ++j) {
    const std::size_t row = local.original[j];
    double* out = rows.data() + (at.first + row) * width;
    out[0] = local.points.x(j, 0);
    out[1] = local.points.x(j, 1);
    out[2] = static_cast<double>(local.label(j));
    out[3] = static_cast<double>(folds[row]);
    if (draws) std::tie(out[4], out[5]) = positive_draws(pred, options.type, row, running);
  }
  combine_shares(at.comm, rows);  // each value from the one rank that holds its row: x + 0 = x
  std::vector<double> s(at.n), rest(at.n);
  std::vector<std::int32_t> positive(at.n);
  OneDimensionalRing out;
  Prepared& in = out.in;
  in.plan = SweepPlan::from(execution);
  in.pred.n = at.n;
  in.pred.k = pred.k;
  in.folds.resize(at.n);
  if (draws) out.lower.assign(1, std::vector<double>(at.n)), out.upper = out.lower;
  for (std::size_t r = 0; r < at.n; ++r) {
    const double* row = rows.data() + r * width;
    s[r] = row[0];
    rest[r] = row[1];
    positive[r] = static_cast<std::int32_t>(row[2]);
    in.folds[r] = static_cast<std::size_t>(row[3]);
    if (draws) out.lower[0][r] = row[4], out.upper[0][r] = row[5];
  }
  rows = {};
  in.problems.push_back(one_dimensional_problem(s, rest, positive));
  return out;
}

// Marginal: rank r owns classes share_of(K, r, R) over every row. Each rank forms its rows of every class's
// problem (score, rest, label; crossfit's fold; with `draws` the row's running sums), and these pass around
// the ring, each rank keeping the columns of its own classes: n K / R values per rank. The problems are
// then computed as the replicated design computes them when it splits problems over the ranks
// (SweepPlan::owned_problems), and only per-problem values are combined: bitwise as one process computes
// them.
OneDimensionalRing owned_marginal_problems(const RingLayout& at, const CheckedPredictions& pred,
                                           const EstimateOptions& options, const ExecutionOptions& execution,
                                           int threads, bool draws) {
  const std::size_t K = pred.k, n = at.n;
  const std::size_t width = 2 * K + 2 + (draws ? K - 1 : 0);  // (s, rest) per class, label, fold; running sums
  const Share classes = share_of(K, at.comm);
  std::vector<double> block(2 + at.largest * width, 0.0);
  {
    const MarginalRows local = marginal_rows(pred, threads);
    const std::vector<std::size_t> folds = folds_of(pred, options.folds, &at);
    block[0] = static_cast<double>(at.own);
    block[1] = static_cast<double>(at.first);
    for (std::size_t i = 0; i < at.own; ++i) {
      double* row = block.data() + 2 + i * width;
      for (std::size_t c = 0; c < K; ++c) row[2 * c] = local.s[c][i], row[2 * c + 1] = local.rest[c][i];
      row[2 * K] = static_cast<double>(pred.y[i]);
      row[2 * K + 1] = static_cast<double>(folds[i]);
      if (draws) running_sums(pred.f.data() + i * K, K, row + 2 * K + 2);
    }
  }
  std::vector<std::vector<double>> s(classes.size(), std::vector<double>(n)), rest = s;
  std::vector<int> labels(n);
  OneDimensionalRing out;
  Prepared& in = out.in;
  in.folds.resize(n);
  if (draws) out.lower.resize(K), out.upper.resize(K);
  for (std::size_t c = classes.begin; draws && c < classes.end; ++c)
    out.lower[c].resize(n), out.upper[c].resize(n);
  pass_around(at.comm, std::move(block), [&](std::span<const double> b, bool) {
    const auto count = static_cast<std::size_t>(b[0]), first = static_cast<std::size_t>(b[1]);
    for (std::size_t i = 0; i < count; ++i) {
      const double* row = b.data() + 2 + i * width;
      for (std::size_t c = classes.begin; c < classes.end; ++c) {
        s[c - classes.begin][first + i] = row[2 * c], rest[c - classes.begin][first + i] = row[2 * c + 1];
        if (draws) std::tie(out.lower[c][first + i], out.upper[c][first + i]) = uniforms_drawing(row + 2 * K + 2, K, c);
      }
      labels[first + i] = static_cast<int>(row[2 * K]);
      in.folds[first + i] = static_cast<std::size_t>(row[2 * K + 1]);
    }
  });
  in.plan = SweepPlan::from(execution);
  in.plan.owned_problems = true;
  in.pred.n = n;
  in.pred.k = K;
  in.problems.resize(K);
  for (LabelledPoints& placeholder : in.problems) {  // another rank's class: never swept here
    placeholder.points.dim = 2;
    placeholder.classes = 2;
    placeholder.one_dimensional = true;
  }
  parallel_for(classes.size(), threads, [&](std::size_t own, int) {
    const std::size_t c = classes.begin + own;
    std::vector<std::int32_t> positive(n);
    for (std::size_t r = 0; r < n; ++r) positive[r] = static_cast<std::int32_t>(static_cast<std::size_t>(labels[r]) == c);
    in.problems[c] = one_dimensional_problem(s[own], rest[own], positive);
    s[own] = {};
    rest[own] = {};
  });
  return out;
}

}  // namespace

double ring_mean_error(const RingLayout& at, const LabelledPoints& lp, double h, double p, const SweepPlan& plan) {
  const KernelPoints& x = lp.points;
  const std::size_t L = lp.classes;
  std::vector<std::vector<double>> offsets(1, std::vector<double>(x.n));
  x.centre_offsets(h, offsets[0], plan.threads);
  std::vector<double> scale(x.n, kNone), sums(x.n * L, 0.0);
  around_the_ring(at, CentreBlock::pack(lp, offsets, at.largest), {L, x.dim, 1, 0}, [&](const CentreBlock& block, bool own) {
    auto finish = [&](std::size_t j, double m, const double* v) { add_shifted(scale[j], sums.data() + j * L, m, v, L); };
    sweep_block(x, block, plan, ClassSums(block.runs(), *plan.kernels, block.offsets()[0], 1 / h, finish, own));
  });
  std::vector<double> terms(x.n), total(1);
  for (std::size_t j = 0; j < x.n; ++j) terms[j] = row_error(lp, j, sums.data() + j * L, p);
  total[0] = accurate_sum(terms);
  combine_shares(at.comm, total);
  return total[0] / static_cast<double>(at.n);
}

RingInput ring_input(ProbsView probs, LabelsView labels, const EstimateOptions& options) {
  check_ring_applies(options);
  ExecutionOptions execution = options.execution;
  execution.own_rows = false;  // SweepPlan::from refuses it for the entry points that do not take it
  RingInput out;
  out.in.plan = SweepPlan::from(execution);
  out.at = ring_layout(out.in.plan.communicator, probs.rows(), probs.cols());
  out.in.plan.communicator = nullptr;  // the ring passes blocks itself; each block's sweep runs on this rank alone
  const std::size_t k = probs.cols();
  check_same_options(options, out.at.n, k, out.at.comm);
  if (k > 0) check_type_applies(options.type, k);
  if (out.at.n < 2) fail_with("need at least 2 samples, got ", out.at.n);
  std::string failure;
  try {
    out.in.pred = read_predictions(probs, labels, options.renormalize, {out.at.first, true});
  } catch (const Error& e) {
    failure = e.what();
  }
  throw_if_any_failed(out.at.comm, failure);
  return out;
}

RingBandwidth ring_paper_bandwidth(const RingLayout& at, const std::vector<LabelledPoints>& problems,
                                   const EstimateOptions& options, const SweepPlan& plan) {
  if (options.bandwidth) return {*options.bandwidth, std::nullopt};
  const LabelledPoints& lp = problems.front();
  const BandwidthOptions& b = options.bandwidth_selection;
  // The whole input's criterion rows, as alone; this rank scores those among its own.
  const std::vector<std::size_t> chosen = criterion_rows(at.n, b.max_rows), mine = own_rows_of(at, chosen);
  BandwidthSelection selection = search_bandwidth(problems, b, chosen.size(), plan, [&](std::span<const double> bandwidths) {
    return ring_bandwidth_scores(at, lp, mine, chosen.size(), bandwidths, b.criterion, plan);
  });
  const double h = selection.bandwidth;
  return {h, std::move(selection)};
}

OneDimensionalRing one_dimensional_ring(const RingInput& ring, const EstimateOptions& options, bool draws) {
  ECEKDE_ASSERT(options.type != CalibrationType::canonical);
  ExecutionOptions execution = options.execution;
  execution.own_rows = false;
  if (options.type == CalibrationType::marginal)
    return owned_marginal_problems(ring.at, ring.in.pred, options, execution, ring.in.plan.threads, draws);
  return gathered_problem(ring.at, ring.in.pred, options, execution, draws);
}

Result ring_paper_result(const RingInput& ring, const EstimateOptions& options) {
  Result r;
  r.type = options.type;
  r.p = options.p;
  r.n = ring.at.n;
  r.k = ring.in.pred.k;
  RingBandwidth h = ring_paper_bandwidth(ring.at, ring.in.problems, options, ring.in.plan);
  r.bandwidth = h.bandwidth;
  r.selection = std::move(h.selection);
  return r;
}

BandwidthSelection own_rows_bandwidth(ProbsView probs, LabelsView labels, CalibrationType type,
                                      const BandwidthOptions& selection, const ExecutionOptions& execution,
                                      bool renormalize) {
  EstimateOptions options;
  options.estimator = Estimator::paper;
  options.type = type;
  options.bandwidth_selection = selection;
  options.renormalize = renormalize;
  options.execution = execution;
  RingInput ring = ring_input(probs, labels, options);
  if (type != CalibrationType::canonical) {
    const Prepared in = one_dimensional_ring(ring, options, false).in;
    return choose_bandwidth(in.problems, selection, in.plan, in.pred.n);
  }
  ring.in.problems = make_problems(ring.in.pred, type, ring.in.plan.threads);
  return *ring_paper_bandwidth(ring.at, ring.in.problems, options, ring.in.plan).selection;
}

Result own_rows_estimate(ProbsView probs, LabelsView labels, const EstimateOptions& options) {
  RingInput ring = ring_input(probs, labels, options);
  if (options.type != CalibrationType::canonical)
    return estimate_prepared(one_dimensional_ring(ring, options, false).in, options);
  const RingLayout& at = ring.at;
  Prepared& in = ring.in;
  const SweepPlan& plan = in.plan;
  in.problems = make_problems(in.pred, options.type, plan.threads);
  if (options.estimator == Estimator::crossfit) {
    Result r = crossfit_estimate(in, options, &at);
    warn_of_float_rounding(in, r);
    return r;
  }
  std::vector<double>().swap(in.pred.f);  // the paper's sweeps read the problem's points only
  const LabelledPoints& lp = in.problems.front();

  const PlannedWork planned(plan.control, static_cast<double>(at.own) * static_cast<double>(at.n));
  Result r = ring_paper_result(ring, options);
  r.ce_pow_p = ring_mean_error(at, lp, r.bandwidth, options.p, plan);
  r.ce = root_of(r.ce_pow_p, options.p);
  warn_of_float_rounding(in, r);
  return r;
}

}  // namespace ecekde::detail
