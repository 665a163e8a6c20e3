// The cross-fit estimator. For each kernel problem (canonical: f with labels y; one-dimensional: a score
// s with 0/1 labels b):
//   1. a pilot recalibration map pi, a small multinomial logistic model fitted with k-fold cross-fitting (folds, 5)
//      (each row's pilot is fitted without its fold's labels, also through its features; tied rows are
//      dealt to the folds in turn, folds_of): temperature, class biases, a spline in logit f shared by the
//      classes and the top-label pilot's recalibration (canonical; at K <= 16 also the same with a full
//      K x K matrix on log f, at K <= 128 with a bias per predicted class and at 64 < K <= 128 with
//      per-class biases, then at K <= 20 boosted regression trees on log f added to the map kept so far,
//      each kept where its held-out log-loss over all rows is lower), or Beta
//      calibration with a spline in logit s (one-dimensional; the same with a jump at a threshold found in
//      each fold, and for marginal one pooled over its classes, each kept where it predicts the held-out
//      labels better);
//   2. the leave-one-out kernel estimate of E[y | f_j] as the pilot plus the kernel-smoothed residuals,
//      g_j = pi_j + sum_{i != j} w_ji (e_{y_i} - pi^(m)_i) / sum_{i != j} w_ji, each neighbour's residual
//      under the model of row j's fold m (fold-matched residuals; each component's correction kept only
//      where it exceeds its noise level, and shrunk there), the bandwidth chosen from a grid by the
//      leave-one-out Brier score of g;
//   3. CE_p^p = E[(y - f) . phi_p(E[y|f] - f)] with phi_p(t) = sign(t) |t|^(p-1) (an identity, since
//      E[y - f | f] = E[y|f] - f), estimated by the row mean of (e_{y_j} - f_j) . phi_p(g_j - f_j).
// Neither pi_j nor the kernel average reads y_j, nor does any model behind them (fold m's never saw it), so
// the label noise of row j averages out instead of being counted as miscalibration. With each neighbour's
// own pilot pi_i instead, one from another fold had been fitted on y_j, which pulled g_j against y_j by
// about the pilot's local leverage (docs/history.md, 7.21 and 7.22).
//
// The stages, each a room of crossfit/ (internal headers, namespace ecekde::detail), run in this order by
// crossfit_estimate() below:
//   folds        folds.cpp              each row's fold (folds_of: hashing, tied rows dealt in turn)
//   pilots       pilots.cpp             the registry of pilot families and the selection by held-out log-loss,
//                pilot_fit.cpp          cross-fitting one design (fit on each fold's training rows, predict
//                                       its held-out rows),
//                family_*.cpp           the families' designs (families.hpp: beta, beta-step, pooled-beta and
//                                       pooled-intercepts, the canonical ones) and the canonical trees
//   correction   correction.cpp         step 2: g and its bandwidth by the Brier score (correct, brier_scores,
//                                       brier_grid, correct_all, fit_corrections), on the sweep engines
//   functional   functional.cpp         step 3: the estimate, its influence terms, standard error, interval
//                                       and warnings
// beside them: problem.hpp (the vocabulary they share: Problem, the features' floor, LogitSpline),
// on_ring.cpp (the distributed variants, each rank holding its own rows: the pilot's fit and the
// correction) and work.cpp (the cost ledger: each stage's work, for progress).
#include "core/crossfit.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "core/crossfit/correction.hpp"
#include "core/crossfit/functional.hpp"
#include "core/crossfit/pilots.hpp"
#include "core/crossfit/problem.hpp"
#include "core/crossfit/work.hpp"
#include "core/messages.hpp"
#include "core/ring.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

CrossfitPilots crossfit_pilots(const Prepared& in, const EstimateOptions& options) {
  CrossfitPilots out;
  out.fold_of = in.folds.empty() ? folds_of(in.pred, options.folds) : in.folds;
  // A problem's values (n x depth, sorted order) in input row order.
  auto in_input_order = [](const Problem& pr, std::span<const double> sorted) {
    const std::size_t n = pr.lp->points.n;
    std::vector<double> values(n * pr.depth);
    for (std::size_t j = 0; j < n; ++j)
      std::copy_n(sorted.begin() + static_cast<std::ptrdiff_t>(j * pr.depth), pr.depth,
                  values.begin() + static_cast<std::ptrdiff_t>(pr.lp->original[j] * pr.depth));
    return values;
  };
  for (const Problem& pr : piloted_problems(in, options, nullptr)) {
    out.held_out.emplace_back();
    out.models.emplace_back();
    if (pr.pilot.empty()) continue;  // owned: another rank's problem
    out.held_out.back() = in_input_order(pr, pr.pilot);
    const std::size_t block = pr.lp->points.n * pr.depth;
    std::vector<double> models(pr.folds.count * block);
    pr.folds.predict(0, pr.folds.count, models, pr.depth, in.plan.threads);
    for (std::size_t f = 0; f < pr.folds.count; ++f) {
      const std::vector<double> model = in_input_order(pr, std::span<const double>(models).subspan(f * block, block));
      out.models.back().insert(out.models.back().end(), model.begin(), model.end());
    }
  }
  return out;
}

Result crossfit_estimate(const Prepared& in, const EstimateOptions& options, const RingLayout* ring) {
  if (!ring) check_same_options(options, in);  // a ring's ranks hold different rows: checked by its caller
  Result r;
  r.estimator = Estimator::crossfit;
  r.type = options.type;
  r.p = options.p;
  r.n = ring ? ring->n : in.pred.n;
  r.k = in.pred.k;
  const std::size_t n = r.n;
  const LabelledPoints& first = in.problems.front();
  const std::size_t max_rows = criterion_row_limit(options.bandwidth_selection.max_rows, n, first.points.dim,
                                                   first.one_dimensional);
  std::vector<double> grid = options.bandwidth ? std::vector<double>{*options.bandwidth}
                             : options.bandwidth_selection.grid.empty() ? residual_grid()
                                                                        : options.bandwidth_selection.grid;
  for (double h : grid)
    if (!(std::isfinite(h) && h > 0)) fail_with("bandwidth grid values must be finite numbers > 0, got ", h);
  std::sort(grid.begin(), grid.end());

  const PlannedWork planned(in.plan.control, crossfit_work(in, options, grid.size()));

  std::vector<Problem> problems = piloted_problems(in, options, ring);
  // Canonical with saturated probabilities: the corrections' kernel reads them at kFeatureFloor, as the
  // pilot does. With zeros at 1e-308 the kernel between rows whose zeros differ is exp(-708 f_ik / h), so
  // no bandwidth of the grid was flat: each row's correction was the mean residual of the few rows with
  // its own zeros (210 patterns at K = 10), whose noise flipped signs of g - f (a tempered truncated
  // softmax read canonical CE_1 20% low, 9% with the floor; docs/history.md, 7.12). The corrections'
  // kernel only smooths residuals; the paper's estimator keeps its own.
  LabelledPoints floored;
  if (problems[0].saturated) {
    floored = *problems[0].lp;
    const double floor = std::log(kFeatureFloor);
    for (double& v : floored.points.log_x) v = std::max(v, floor);
    problems[0].lp = &floored;
  }
  const std::size_t mean_rows = mean_row_limit(options.mean_rows, n, r.k, first.one_dimensional);
  const bool for_squares = options.p == 2;  // CE_2^2's own bandwidth (correction.hpp, kLeastNeighbours)
  Fit fit = ring ? ring_fit_corrections(problems[0], grid, max_rows, mean_rows, *ring, in.plan, for_squares)
                 : fit_corrections(problems, grid, max_rows, mean_rows, in.plan, n, for_squares);
  r.bandwidth = fit.selection.bandwidth;
  r.pilot = problems[0].map;
  const RowTerms at_criterion = add_functional(r, problems, fit, in, options, ring);
  // p = 2: the narrower, whole correction where it reads significantly more (correction.hpp,
  // kNarrowingZ); the same choice on every rank, whose figures are totals over all of them.
  if (!fit.narrowed.empty()) {
    std::vector<Corrected> wider = std::exchange(fit.corrected, std::move(fit.narrowed));
    Result narrower = r;
    narrower.bandwidth = grid[fit.narrowed_at];
    const RowTerms at_narrower = add_functional(narrower, problems, fit, in, options, ring);
    if (reads_more(at_criterion, at_narrower, fit.averaged_rows, n, ring)) {
      r = std::move(narrower);
      fit.selection.criterion_choice = fit.selection.bandwidth;
      fit.selection.bandwidth = r.bandwidth;
      fit.selection.best_score = fit.selection.score[fit.narrowed_at];
    } else {
      fit.corrected = std::move(wider);
    }
  }
  if (!options.bandwidth) r.selection = std::move(fit.selection);
  add_warnings(r, problems, fit, in, options, ring);
  return r;
}

}  // namespace ecekde::detail
