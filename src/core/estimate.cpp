// estimate() and select_bandwidth(): the paper's estimators as reductions over the pairwise sweep.
#include "ecekde/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>

#if defined(__unix__)
#include <unistd.h>
#endif

#include "core/crossfit.hpp"
#include "core/estimate_steps.hpp"
#include "core/numeric.hpp"
#include "core/reducers.hpp"
#include "core/regression_forms.hpp"
#include "core/ring_estimate.hpp"
#include "core/messages.hpp"
#include "ecekde/options.hpp"
#include "ecekde/random.hpp"

namespace ecekde {

std::vector<double> default_bandwidth_grid() {
  std::vector<double> grid;
  for (int i = 0; i < 15; ++i) grid.push_back(std::pow(10.0, -5.0 + 4.0 * i / 14.0));
  for (double h : {0.2, 0.4, 0.6, 0.8, 1.0}) grid.push_back(h);
  return grid;
}

namespace detail {

double row_error(const LabelledPoints& lp, std::size_t j, const double* sums, double p) {
  const KernelPoints& x = lp.points;
  double den = 0;
  for (std::size_t c = 0; c < lp.classes; ++c) den += sums[c];
  if (lp.one_dimensional) return pow_abs(sums[1] / den - x.x(j, 0), p);
  double e = 0;
  for (std::size_t c = 0; c < lp.classes; ++c) e += pow_abs(sums[c] / den - x.x(j, c), p);
  return e;
}

double mean_error(const LabelledPoints& lp, double h, double p, const SweepPlan& plan) {
  const std::size_t n = lp.points.n;
  std::vector<double> offsets(n), terms(n);
  lp.points.centre_offsets(h, offsets, plan.threads);
  auto finish = [&](std::size_t j, double, const double* sums) {
    terms[lp.original[j]] = row_error(lp, j, sums, p);
  };
  sweep(lp.points, plan, ClassSums(lp, *plan.kernels, offsets, 1 / h, finish));
  return accurate_sum(terms) / static_cast<double>(n);
}

std::vector<std::size_t> criterion_rows(std::size_t n, std::size_t max_rows) {
  std::vector<std::size_t> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = i;
  if (max_rows == 0 || n <= max_rows) return rows;
  Rng rng(0);  // a partial Fisher-Yates shuffle: the first max_rows entries are a uniform subset
  for (std::size_t i = 0; i < max_rows; ++i) std::swap(rows[i], rows[i + rng.below(n - i)]);
  rows.resize(max_rows);
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<std::size_t> positions_of(const LabelledPoints& lp, std::span<const std::size_t> rows) {
  std::vector<std::size_t> position(lp.points.n), out(rows.size());
  for (std::size_t j = 0; j < lp.points.n; ++j) position[lp.original[j]] = j;
  for (std::size_t r = 0; r < rows.size(); ++r) out[r] = position[rows[r]];
  return out;
}

RowSubset row_subset(const LabelledPoints& lp, std::span<const std::size_t> rows) {
  const KernelPoints& x = lp.points;
  const std::size_t R = rows.size();
  RowSubset out;
  out.self = positions_of(lp, rows);
  out.points.n = R;
  out.points.dim = x.dim;
  out.points.x_t.resize(x.dim * R);
  for (std::size_t k = 0; k < x.dim; ++k)
    for (std::size_t r = 0; r < R; ++r) out.points.x_t[k * R + r] = x.x(out.self[r], k);
  // The rows' logarithms as the points hold them, not recomputed: the crossfit corrections' points carry
  // theirs floored at kFeatureFloor (crossfit.cpp), and a subset of rows recomputed from x read exact
  // zeros at 1e-308 (its criterion and its row mean over a subset, where rows x n x K is large).
  out.points.log_x.resize(R * x.dim);
  for (std::size_t r = 0; r < R; ++r)
    std::copy_n(x.log_x.begin() + static_cast<std::ptrdiff_t>(out.self[r] * x.dim), x.dim,
                out.points.log_x.begin() + static_cast<std::ptrdiff_t>(r * x.dim));
  return out;
}

std::vector<double> bandwidth_scores(const std::vector<LabelledPoints>& problems,
                                     std::span<const double> bandwidths, BandwidthCriterion criterion,
                                     std::span<const std::size_t> rows, const SweepPlan& plan,
                                     std::vector<ScoreTree::Skeleton>* skeletons) {
  if (criterion == BandwidthCriterion::loo_regression) return regression_scores(problems, bandwidths, rows, plan);
  const std::size_t H = bandwidths.size(), R = rows.size();
  std::vector<double> per_problem(problems.size() * H, 0.0);
  const Share mine = for_each_problem(problems.size(), plan, [&](std::size_t q, const SweepPlan& own) {
    const LabelledPoints& lp = problems[q];
    const KernelPoints& x = lp.points;
    const std::size_t n = x.n;
    std::vector<std::vector<double>> offsets(H, std::vector<double>(n));
    std::vector<double> inv_h(H);
    for (std::size_t b = 0; b < H; ++b) {
      x.centre_offsets(bandwidths[b], offsets[b], plan.threads);
      inv_h[b] = 1 / bandwidths[b];
    }
    std::vector<double> log_sums(R * H);  // row-major R x H
    auto finish = [&](std::size_t j, const double* v) {
      std::copy_n(v, H, log_sums.begin() + static_cast<std::ptrdiff_t>(j * H));
    };
    std::optional<ScoreTree> tree;
    if (skeletons && own.expansions && x.dim == 2) {  // the sweep goes by the score tree (sweep())
      ScoreTree::Skeleton& kept = (*skeletons)[q];
      if (kept.order.empty()) {
        tree.emplace(x);
        kept = tree->skeleton();
      } else {
        tree.emplace(x, kept);
      }
    }
    const ScoreTree* centres_tree = tree ? &*tree : nullptr;
    if (R == n) {
      sweep(x, own, LogKernelSums(*own.kernels, offsets, inv_h, finish, {}, centres_tree));
    } else {
      const RowSubset subset = row_subset(lp, rows);
      sweep(subset.points, x, own, LogKernelSums(*own.kernels, offsets, inv_h, finish, subset.self, centres_tree));
    }
    std::vector<double> column(R);
    const double log_norm = std::log(static_cast<double>(n - 1));
    for (std::size_t b = 0; b < H; ++b) {
      for (std::size_t j = 0; j < R; ++j) column[j] = log_sums[j * H + b];
      double score = accurate_sum(column) / static_cast<double>(R) - log_norm;
      if (criterion == BandwidthCriterion::reference) score -= std::log(bandwidths[b]);
      per_problem[q * H + b] = score;
    }
  });
  if (mine.size() != problems.size()) combine_shares(plan.communicator, per_problem);
  // Summed over the problems in their order, whatever the split.
  std::vector<double> scores(H, 0.0);
  for (std::size_t q = 0; q < problems.size(); ++q)
    for (std::size_t b = 0; b < H; ++b) scores[b] += per_problem[q * H + b];
  return scores;
}

namespace {

constexpr double kGolden = 0.6180339887498949;           // (sqrt(5) - 1) / 2
constexpr double kSearchTolerance = 0.02302585092994046;  // 0.01 decades, in log h

// The golden-section search in t = log h between the best grid point's neighbours: the bracket [a, b]
// and its inner points c < d. Each step evaluates one new point, and where it lies depends only on
// whether c scored at least as well as d (`keeps_c`), not on the scores themselves.
struct GoldenBracket {
  double a, b, c, d;

  bool open() const { return b - a > kSearchTolerance; }
  // The point the step evaluates.
  double next(bool keeps_c) const { return keeps_c ? d - kGolden * (d - a) : c + kGolden * (b - c); }
  // The bracket after the step, which evaluated t = next(keeps_c).
  GoldenBracket after(bool keeps_c, double t) const {
    return keeps_c ? GoldenBracket{a, d, t, c} : GoldenBracket{c, b, d, t};
  }
};

// So the points of the next s steps form a binary tree known in advance, 2^s - 1 of them (2^s with the
// first step's two inner points). Where a sweep's dot products cost much more than its per-bandwidth
// work, one sweep scores a whole tree, sharing the dot products (each bandwidth's score is bitwise what a
// sweep of its own gives), and the search then takes those s steps along the branch the scores pick: the
// same points, scores and answer as one sweep per step, in fewer sweeps. The per-bandwidth work is an
// exponential and a sum per pair, about as much as 24 multiply-adds of the dot products (K = 10 profile,
// docs/benchmarks.md); s maximises steps per cost, s / (dim / 24 + 2^s - 1): 1 up to K = 24, 2 up to 120
// (K = 100), 3 up to 408, 4 up to 1,176 (K = 1,000), then 5. One-dimensional problems (the score tree, no
// dot products) take s = 1.
std::size_t lookahead(const std::vector<LabelledPoints>& problems, const SweepPlan& plan) {
  const std::size_t dim = problems.front().points.dim;
  if (dim == 2 && plan.expansions) return 1;
  const double dots = static_cast<double>(dim) / 24;
  std::size_t best = 1;
  for (std::size_t s = 2; s <= 5; ++s)
    if (static_cast<double>(s) / (dots + std::ldexp(1.0, static_cast<int>(s)) - 1) >
        static_cast<double>(best) / (dots + std::ldexp(1.0, static_cast<int>(best)) - 1))
      best = s;
  return best;
}

// Appends the points of up to `depth` steps from `bracket` (pre-order: a step's point, then the steps
// after it); `known` is the first step's keeps_c where the scores already decide it.
void tree_points(const GoldenBracket& bracket, std::size_t depth, std::optional<bool> known, std::vector<double>& out) {
  if (depth == 0 || !bracket.open()) return;
  for (bool keeps_c : {true, false}) {
    if (known && *known != keeps_c) continue;
    const double t = bracket.next(keeps_c);
    out.push_back(t);
    tree_points(bracket.after(keeps_c, t), depth - 1, std::nullopt, out);
  }
}

// The bandwidths a search of `steps` steps scores with lookahead s: the first sweep c, d and the points of
// the next s - 1 steps (2^s in all), each later sweep those of s steps (2^s - 1).
std::size_t search_evaluations(std::size_t steps, std::size_t s) {
  const std::size_t first = std::min(s - 1, steps);
  std::size_t evaluations = std::size_t{1} << (first + 1);
  for (std::size_t done = first; done < steps; done += s)
    evaluations += (std::size_t{1} << std::min(s, steps - done)) - 1;
  return evaluations;
}

// Kernel evaluations of a bandwidth search: the grid in one sweep, then at most as many refinement
// steps as the widest bracket between a grid point's neighbours needs (one more for rounding), in trees.
double selection_work(const std::vector<LabelledPoints>& problems, const std::vector<double>& grid, std::size_t rows,
                      bool refine, const SweepPlan& plan) {
  double per_bandwidth = 0;
  for (const auto& lp : problems) per_bandwidth += static_cast<double>(rows) * row_work(plan, lp.points.dim, lp.points.n);
  std::size_t evaluations = 0;
  if (refine && grid.size() >= 2) {
    double widest = 0;
    for (std::size_t b = 0; b < grid.size(); ++b)
      widest = std::max(widest, std::log(grid[std::min(b + 1, grid.size() - 1)] / grid[b == 0 ? 0 : b - 1]));
    std::size_t steps = 1;
    for (; widest > kSearchTolerance; widest *= kGolden) ++steps;
    evaluations = search_evaluations(steps, lookahead(problems, plan));
  }
  return per_bandwidth * static_cast<double>(grid.size() + evaluations);
}

std::vector<double> checked_grid(const std::vector<double>& grid) {
  if (grid.empty()) return default_bandwidth_grid();
  std::vector<double> g = grid;
  for (double h : g)
    if (!(std::isfinite(h) && h > 0)) fail_with("bandwidth grid values must be finite numbers > 0, got ", h);
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  return g;
}

// A score tree's skeleton: 4 bytes a centre of order and its nodes (48 bytes each, one per few centres),
// counted generously; and the most the bandwidth search keeps (600 MB at n = 50,000, K = 1,000 marginal).
constexpr std::size_t kSkeletonBytesPerCentre = 12, kMaxKeptSkeletonBytes = std::size_t{1} << 30;

}  // namespace

BandwidthSelection choose_bandwidth(const std::vector<LabelledPoints>& problems,
                                    const BandwidthOptions& options, const SweepPlan& plan, std::size_t n) {
  const std::vector<std::size_t> rows = criterion_rows(n, options.max_rows);
  // Each problem's score tree kept from one step of the search to the next where their skeletons fit in
  // kMaxKeptSkeletonBytes: the grid and each refinement step (nine at the default grid) built every tree
  // anew, and the building was 16% of the paper's marginal estimate at n = 50,000, K = 1,000.
  std::size_t centres = 0;
  for (const LabelledPoints& lp : problems) centres += lp.points.n;
  std::vector<ScoreTree::Skeleton> skeletons;
  if (centres * kSkeletonBytesPerCentre <= kMaxKeptSkeletonBytes) skeletons.resize(problems.size());
  return search_bandwidth(problems, options, rows.size(), plan, [&](std::span<const double> bandwidths) {
    return bandwidth_scores(problems, bandwidths, options.criterion, rows, plan,
                            skeletons.empty() ? nullptr : &skeletons);
  });
}

BandwidthSelection search_bandwidth(const std::vector<LabelledPoints>& problems, const BandwidthOptions& options,
                                    std::size_t rows, const SweepPlan& plan, const BandwidthScorer& scores_at) {
  BandwidthSelection sel;
  sel.criterion = options.criterion;
  sel.grid = checked_grid(options.grid);
  sel.rows = rows;
  const PlannedWork planned(plan.control, selection_work(problems, sel.grid, sel.rows, options.refine, plan));
  sel.score = scores_at(sel.grid);
  const auto best = static_cast<std::size_t>(std::max_element(sel.score.begin(), sel.score.end()) - sel.score.begin());
  sel.bandwidth = sel.grid[best];
  sel.best_score = sel.score[best];
  if (!options.refine || sel.grid.size() < 2) return sel;

  // Golden-section search for the maximum in t = log h between the best grid point's neighbours,
  // down to a bracket of 0.01 decades; the answer is the best bandwidth actually evaluated. Sweeps score
  // trees of the next steps' points (GoldenBracket, lookahead()).
  auto record = [&](double t, double s) {
    sel.refined_grid.push_back(std::exp(t));
    sel.refined_score.push_back(s);
    if (s > sel.best_score) {
      sel.best_score = s;
      sel.bandwidth = std::exp(t);
    }
  };
  const double a = std::log(sel.grid[best == 0 ? 0 : best - 1]);
  const double b = std::log(sel.grid[std::min(best + 1, sel.grid.size() - 1)]);
  GoldenBracket bracket{a, b, b - kGolden * (b - a), a + kGolden * (b - a)};
  const std::size_t s = lookahead(problems, plan);
  double fc = 0, fd = 0;
  for (bool first = true; first || bracket.open(); first = false) {
    const std::size_t steps = first ? s - 1 : s;  // the first sweep also scores c and d
    std::vector<double> points;
    if (first) points = {bracket.c, bracket.d};
    tree_points(bracket, steps, first ? std::nullopt : std::optional<bool>(fc >= fd), points);
    std::vector<double> bandwidths(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) bandwidths[i] = std::exp(points[i]);
    const std::vector<double> scores = scores_at(bandwidths);
    auto score_at = [&](double t) {  // the tree's points are computed as the steps compute them: bitwise
      const auto it = std::find(points.begin(), points.end(), t);
      ECEKDE_ASSERT(it != points.end());
      return scores[static_cast<std::size_t>(it - points.begin())];
    };
    if (first) {
      record(bracket.c, fc = scores[0]);
      record(bracket.d, fd = scores[1]);
    }
    for (std::size_t step = 0; step < steps && bracket.open(); ++step) {
      const bool keeps_c = fc >= fd;
      const double t = bracket.next(keeps_c), f = score_at(t);
      record(t, f);
      if (keeps_c) fd = fc, fc = f;
      else fc = fd, fd = f;
      bracket = bracket.after(keeps_c, t);
    }
  }
  return sel;
}

namespace {

// The machine's physical memory in bytes; 0 where unknown.
double physical_memory() {
#if defined(__unix__)
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && size > 0) return static_cast<double>(pages) * static_cast<double>(size);
#endif
  return 0;
}

// The estimates' working memory grows as n K: their copies of the input, its logarithms, the pilots'
// designs and predictions. Peak resident memory measured 82 bytes per entry (crossfit canonical,
// n = 10^6, K = 10) to 95 (crossfit marginal, 10,000 x 1,000), the input's own copy included
// (docs/design.md, Robustness); 100 a entry is the bound checked, before any copy is made, so that an input
// too large for the machine stops at once with the figure instead of failing part-way or swapping.
constexpr double kWorkingBytesPerEntry = 100;

void check_working_memory(std::size_t n, std::size_t k) {
  const double need = kWorkingBytesPerEntry * static_cast<double>(n) * static_cast<double>(k), have = physical_memory();
  if (have > 0 && need > have)
    fail_with("an estimate over ", n, " x ", k, " probabilities needs about ", static_cast<std::uint64_t>(std::ceil(need / 1e9)),
              " GB of working memory, more than this machine's ", static_cast<std::uint64_t>(std::floor(have / 1e9)),
              " GB: split the rows over processes (--own-rows under mpirun: each holds its share, ", kWorkingBytesPerEntry,
              " bytes a row and class) or estimate on a subset of the rows");
}

}  // namespace

Prepared prepare(ProbsView probs, LabelsView labels, CalibrationType type, bool renormalize,
                 const ExecutionOptions& execution, bool use_labels) {
  check_working_memory(probs.rows(), probs.cols());
  Prepared out;
  out.plan = SweepPlan::from(execution);
  if (probs.cols() > 0) check_type_applies(type, probs.cols());
  if (use_labels) {
    out.pred = read_predictions(probs, labels, renormalize);
  } else {
    out.pred.f = read_probabilities(probs, renormalize);
    out.pred.n = probs.rows();
    out.pred.k = probs.cols();
    out.pred.y.assign(out.pred.n, 0);
  }
  check_same_input(out.plan.communicator,
                   std::vector<double>{static_cast<double>(out.pred.n), static_cast<double>(out.pred.k),
                                       static_cast<double>(type), checksum(out.pred.f, out.pred.y)});
  out.problems = make_problems(out.pred, type, out.plan.threads);
  return out;
}

double root_of(double ce_pow_p, double p) { return std::pow(std::max(ce_pow_p, 0.0), 1 / p); }

void check_same_options(const EstimateOptions& options, const Prepared& in) {
  check_same_options(options, in.pred.n, in.pred.k, in.plan.communicator);
}

void check_same_options(const EstimateOptions& options, std::size_t n, std::size_t k, Communicator* comm) {
  if (!comm) return;
  const BandwidthOptions& b = options.bandwidth_selection;
  double grid = 0;
  for (double h : b.grid) grid += h;
  check_same_input(comm,
                   std::vector<double>{static_cast<double>(n), static_cast<double>(k),
                                       static_cast<double>(options.estimator), options.p, options.bandwidth.value_or(-1),
                                       static_cast<double>(b.criterion), static_cast<double>(b.grid.size()), grid,
                                       static_cast<double>(b.refine), static_cast<double>(b.max_rows),
                                       static_cast<double>(options.form), options.level, static_cast<double>(options.folds),
                                       static_cast<double>(options.mean_rows),
                                       static_cast<double>(options.execution.precision),
                                       static_cast<double>(options.execution.full_sweep)});
}

Result start_result(const EstimateOptions& options, const Prepared& in) {
  check_same_options(options, in);
  Result r;
  r.type = options.type;
  r.p = options.p;
  r.n = in.pred.n;
  r.k = in.pred.k;
  if (options.bandwidth) {
    r.bandwidth = *options.bandwidth;
  } else {
    r.selection = choose_bandwidth(in.problems, options.bandwidth_selection, in.plan, in.pred.n);
    r.bandwidth = r.selection->bandwidth;
  }
  return r;
}

void warn_of_float_rounding(const Prepared& in, Result& r) {
  if (!in.plan.single_precision || r.bandwidth >= kFloatTestedBandwidth) return;
  const bool swept = std::any_of(in.problems.begin(), in.problems.end(),
                                 [&](const LabelledPoints& lp) { return lp.points.dim > 2 || !in.plan.expansions; });
  if (!swept) return;  // the score tree computes in double whatever the precision
  std::ostringstream text;
  text << "precision float at bandwidth " << r.bandwidth << ": float's rounding of the dot products enters the "
       << "kernel's exponent divided by h, and below h = " << kFloatTestedBandwidth
       << " the estimate may differ from double's by more than the tested 1e-5 relative plus 1e-6 (use precision "
          "double)";
  r.warnings.push_back(text.str());
}

void check_paper_entry(const EstimateOptions& options, std::string_view function) {
  options::refuse_unread_options(options, options::uses::paper_entries, function);
  if (options.form != KdeForm::plug_in)
    fail_with(function, " supports only the plug-in form, got form ", to_string(options.form));
}

}  // namespace detail

void check_options(const EstimateOptions& options) {
  detail::check_p(options.p);
  if (options.bandwidth) detail::check_bandwidth(*options.bandwidth);
  if (options.form == KdeForm::debiased && options.p != 2)
    detail::fail_with("the debiased form estimates CE_2^2 and needs p = 2, got p = ", options.p);
  if (!(options.level > 0 && options.level < 1)) detail::fail_with("level must be in (0, 1), got ", options.level);
  if (options.folds < 2) detail::fail_with("folds must be >= 2, got ", options.folds);
}

Result estimate(ProbsView probs, LabelsView labels, const EstimateOptions& options) {
  check_options(options);
  if (options.estimator == Estimator::crossfit && options.form != KdeForm::plug_in)
    detail::fail_with("form ", to_string(options.form), " belongs to the paper's estimator: use estimator paper");
  if (options.execution.own_rows) return detail::own_rows_estimate(probs, labels, options);
  return detail::estimate_prepared(
      detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true), options);
}

namespace detail {

namespace {

Result paper_estimate(const Prepared& in, const EstimateOptions& options) {
  const PlannedWork planned(in.plan.control, leave_one_out_work(in, 1, true));
  Result r = start_result(options, in);
  const double weight = problem_weight(options.type);
  const std::size_t count = in.problems.size();
  std::vector<double> value(count, 0.0), excluded(count, 0.0);
  const Share mine = for_each_problem(count, in.plan, [&](std::size_t q, const SweepPlan& own) {
    if (options.form == KdeForm::debiased) {
      const DebiasedMean m = debiased_mean_error(in.problems[q], r.bandwidth, own);
      value[q] = weight * m.value;
      excluded[q] = static_cast<double>(m.excluded_rows);
    } else {
      value[q] = weight * mean_error(in.problems[q], r.bandwidth, options.p, own);
    }
  });
  if (mine.size() != count) {
    combine_shares(in.plan.communicator, value);
    combine_shares(in.plan.communicator, excluded);
  }
  for (std::size_t q = 0; q < count; ++q) {  // in the problems' order, whatever the split
    if (options.type == CalibrationType::marginal) r.class_ce_pow_p.push_back(value[q]);
    r.ce_pow_p += value[q];
    r.excluded_rows += static_cast<std::size_t>(excluded[q]);
  }
  r.ce = root_of(r.ce_pow_p, options.p);
  return r;
}

}  // namespace

Result estimate_prepared(const Prepared& in, const EstimateOptions& options) {
  Result r = options.estimator == Estimator::crossfit ? crossfit_estimate(in, options) : paper_estimate(in, options);
  warn_of_float_rounding(in, r);
  return r;
}

}  // namespace detail

BandwidthSelection select_bandwidth(ProbsView probs, CalibrationType type, const BandwidthOptions& options,
                                    const ExecutionOptions& execution, bool renormalize) {
  if (options.criterion == BandwidthCriterion::loo_regression)
    fail("bandwidth criterion loo-regression needs the labels: pass them to select_bandwidth");
  if (execution.own_rows) {  // the likelihood criteria do not read the labels: any will do
    const std::vector<std::int64_t> zeros(probs.rows(), 0);
    return select_bandwidth(probs, LabelsView(zeros), type, options, execution, renormalize);
  }
  const auto in = detail::prepare(probs, LabelsView{}, type, renormalize, execution, false);
  return detail::choose_bandwidth(in.problems, options, in.plan, in.pred.n);
}

BandwidthSelection select_bandwidth(ProbsView probs, LabelsView labels, CalibrationType type,
                                    const BandwidthOptions& options, const ExecutionOptions& execution,
                                    bool renormalize) {
  if (execution.own_rows) return detail::own_rows_bandwidth(probs, labels, type, options, execution, renormalize);
  const auto in = detail::prepare(probs, labels, type, renormalize, execution, true);
  return detail::choose_bandwidth(in.problems, options, in.plan, in.pred.n);
}

}  // namespace ecekde
