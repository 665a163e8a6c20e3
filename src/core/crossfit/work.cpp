#include "core/crossfit/work.hpp"

#include <algorithm>

#include "core/crossfit/correction.hpp"
#include "core/crossfit/families.hpp"
#include "core/crossfit/pilots.hpp"

namespace ecekde::detail {

namespace {

// Kernel evaluations of fit_corrections() over a grid of `bandwidths` for `count` problems on n points of
// dimension `dim` with `depth` values per row: a sweep of the criterion's rows per bandwidth (of the
// criterion_problems()), then the sweep of the mean's rows at the chosen one (p = 2: and at a narrower one,
// Fit::narrowed), unless one bandwidth is the whole fit (PayloadSums' cost per pair; the score tree's
// payload holds every one of the `folds` folds' residuals, correction.cpp).
double fit_work(std::size_t count, std::size_t n, std::size_t dim, std::size_t depth, std::size_t folds,
                std::size_t bandwidths, std::size_t max_rows, std::size_t mean_rows, bool squares,
                const SweepPlan& plan) {
  const std::size_t rows = max_rows == 0 ? n : std::min(n, max_rows);
  const bool one_pass = bandwidths == 1 && (rows == n || mean_rows < n);
  const double scored = static_cast<double>(std::min(count, kCriterionProblems)), all = static_cast<double>(count);
  const double swept_rows = one_pass ? all * static_cast<double>(mean_rows)
                                     : scored * static_cast<double>(bandwidths * rows) +
                                           all * static_cast<double>((squares ? 2 : 1) * mean_rows);
  const double values = static_cast<double>(plan.expansions && dim == 2 ? folds * depth : depth);
  return (1 + 0.1 * values) * row_work(plan, dim, n) * swept_rows;
}

// The pilot's logistic fits on the Beta design (every fold), in kernel evaluations per row, for progress:
// about 11 us per row on one thread, the time the score tree's sweeps take for about 3,000 evaluations
// (measured at n = 5,000, K = 1,000: marginal spent its first 55 s in the pilots at 0% done).
constexpr double kPilotRowWork = 3000;

}  // namespace

double pilot_work(std::size_t count, std::size_t n) {
  return static_cast<double>(count) * static_cast<double>(n) * kPilotRowWork;
}

double own_pilots_work(std::size_t problems, std::size_t n) {
  return pilot_work(problems, n) * (tries_steps(problems) ? 2 : 1);
}

double pooled_work(std::size_t problems, std::size_t n, const SweepPlan& plan) {
  return problems > 1 ? pilot_work(1, n + n * (problems - 1) / pooled_stride(n, problems, plan)) : 0.0;
}

double crossfit_work(const Prepared& in, const EstimateOptions& options, std::size_t bandwidths) {
  const LabelledPoints& first = in.problems.front();
  const std::size_t own = in.pred.n;
  const std::size_t max_rows = criterion_row_limit(options.bandwidth_selection.max_rows, in.pred.n, first.points.dim,
                                                   first.one_dimensional);
  const std::size_t mean_rows = mean_row_limit(options.mean_rows, in.pred.n, in.pred.k, first.one_dimensional);
  double work = fit_work(in.problems.size(), own, first.points.dim, first.one_dimensional ? 1 : first.classes,
                         options.folds, bandwidths, max_rows, mean_rows, options.p == 2, in.plan);
  work += options.type == CalibrationType::canonical ? pilot_work(1, own)
                                                     : own_pilots_work(in.problems.size(), own) +
                                                           pooled_work(in.problems.size(), own, in.plan);
  return work;
}

}  // namespace ecekde::detail
