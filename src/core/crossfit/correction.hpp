// The kernel correction (the estimator's stages: core/crossfit.cpp): each row's leave-one-out corrected
// estimate g, the pilot plus the kernel-smoothed residuals, and its bandwidth chosen by the Brier score of g.
// The sums run on the sweep engines (sweep.hpp, reducers.hpp); the ring's variants (own_rows) are declared
// beside the serial ones and defined with the other distributed variants (on_ring.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/crossfit/problem.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

struct RingLayout;

// The residual kernel's candidate bandwidths: 10^linspace(-3, 1, 9). The widest is nearly flat (the
// correction is then the mean residual, about 0), so the grid includes "trust the pilot".
std::vector<double> residual_grid();

// The most rows the bandwidth criterion averages over: `max_rows` (0: every row), and for the canonical
// problem, whose criterion costs rows x n x K per bandwidth, at most the rows that kCriterionWork affords,
// but never fewer than kMinCriterionRows. Each row is still scored against every centre; the estimate then
// takes every row at the chosen bandwidth. At n = 10,000, K = 100 this is 2,000 rows (the search was 39% of
// the estimate on all rows); at n = 10,000, K = 10 (the bundled report) all of them.
inline constexpr double kCriterionWork = 2e9;
inline constexpr std::size_t kMinCriterionRows = 2000;
std::size_t criterion_row_limit(std::size_t max_rows, std::size_t n, std::size_t dim, bool one_dimensional);

// The problems the bandwidth criterion scores, with the weight of each in its sum: every one (weight 1) up to
// kCriterionProblems; beyond that a stratified sample of kCriterionProblems, the half with the most
// positives (weight 1: the frequent classes carry most of the Brier score, and their changes with the
// bandwidth) and the other half evenly spaced over the remaining classes, each standing for its share of
// them (weight remaining / sampled), so that the weighted sum estimates the sum over every class; the
// same sample on every rank, also where each rank owns a share of the classes (SweepPlan::owned_problems,
// whose other classes it holds no rows of). The
// corrections of every problem are then formed at the bandwidth it chose. Marginal's criterion sweeps each
// class's problem at every grid bandwidth, most of the corrections' time at K = 1,000 (docs/benchmarks.md,
// "Marginal's criterion on a sample of the classes", for its time and what it moved); CIFAR-100's K = 100
// scores every class.
inline constexpr std::size_t kCriterionProblems = 256;
struct ScoredProblems {
  std::vector<std::size_t> index;  // ascending
  std::vector<double> weight;
};
ScoredProblems criterion_problems(const std::vector<Problem>& problems, const SweepPlan& plan);
// The rows the estimate's row mean averages over (EstimateOptions::mean_rows): `mean_rows` when set, else
// every row unless the canonical correction's rows x n x (K + kPairWork) would exceed kMeanWork; then as
// many as that affords, but at least kMinMeanRows. kPairWork counts a pair's exponential and bookkeeping in
// multiply-adds (at K = 10 the sweep runs about 1.2 G pairs/s on two threads, at K = 1,000 about 50 G
// multiply-adds/s): n = 150,000 at K = 10, 31,000 at K = 1,000 are the largest that keep every row. A
// random subset of m rows, each corrected against all n samples, is an incomplete U-statistic: unbiased for
// the full row mean, with variance (1 - m / n) s^2 / m more (add_functional). The one-dimensional types'
// corrections cost O(n) per row set, so they keep every row.
inline constexpr double kMeanWork = 1e12, kPairWork = 32;
inline constexpr std::size_t kMinMeanRows = 10000;
std::size_t mean_row_limit(std::size_t mean_rows, std::size_t n, std::size_t k, bool one_dimensional);

// The leave-one-out corrected estimate g (rows x depth) of one problem at bandwidth h, for the evaluated rows
// of its CorrectionInputs (every row, in sorted order, unless a subset), from its neighbours' residuals
// under the model of its own fold (fold_residuals()), with each row's effective number of
// neighbours N = (sum w)^2 / sum w^2. Each component's correction delta is kept only where it exceeds its own
// noise level s = sqrt(pi (1 - pi) / N): where the kernel sees only label noise (classes of tiny probability,
// thin neighbourhoods) g stays with the pilot, whose sign of g - f is far more reliable (docs/validation.md,
// Section 7: this took the bias of CE_1 on an imbalanced K = 10 model from -17% to -10%). Above it, delta
// shrinks to delta - s^2 / delta (a garrote): continuous at s, so a correction barely above the noise is
// small and rarely flips that sign, and a real one loses only O(1/N). The soft threshold delta - s biased g
// towards the pilot by O(N^-1/2), the order of the standard error: with few distinct predictions, where the
// pilot cannot follow the cells, p = 2 intervals covered 72-88%; a hard threshold (delta kept whole) cost
// CE_1 instead (docs/history.md, 7.8).
struct Corrected {
  std::vector<double> g, neighbours;
  std::vector<std::size_t> self;  // sorted position of each evaluated row
};

// The sorted positions of the evaluated rows: `self`, or every row when it is empty.
std::vector<std::size_t> evaluated_rows(const Problem& pr, std::vector<std::size_t> self);

// A correction before its values (g and N zero) of the rows at sorted positions `self` (empty: every row).
Corrected evaluated(const Problem& pr, std::vector<std::size_t> self);

// Values whose storage starts uninitialised: the fold residuals are written first by the threads that
// predict them, so their pages are first touched (and cleared by the kernel) there, not zeroed on one
// thread beforehand (400 MB at n = 10,000, K = 1,000).
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Residuals = std::vector<double, UninitialisedAllocator<double>>;

// The residuals e_{y_i} - pi^(m)_i of every centre under the models of folds m = first .. first + folds - 1
// (Problem::folds), each fold's laid out as PayloadSums reads a payload, one block after another. Row j's
// correction reads the block of its own fold (fold-matched residuals).
Residuals fold_residuals(const Problem& pr, std::size_t first, std::size_t folds, int threads);

// The evaluated rows (sorted positions `self`) by fold: each fold's indices into `self`, in their order.
std::vector<std::vector<std::size_t>> fold_groups(const Problem& pr, std::span<const std::size_t> self);

// How a row's correction delta enters g: through the garrote above (the bandwidth criterion, and the
// estimate at every p but 2), or kept whole (CE_2^2 at its own bandwidth: fit_corrections()).
enum class Shrinkage { garrote, whole };

// A correction asked of a sweep: at grid point `at`, its kernel averages entering g by `shrinkage`.
struct CorrectionAt {
  std::size_t at;
  Shrinkage shrinkage = Shrinkage::garrote;
};

// Component l's corrected estimate from its pilot pi, its kernel average of the residuals delta and the
// row's effective number of neighbours.
inline double corrected_value(double pi, double delta, double neighbours, Shrinkage shrinkage) {
  if (shrinkage == Shrinkage::whole) return pi + delta;
  const double noise = std::sqrt(std::max(pi * (1 - pi), 0.0) / neighbours);
  const double size = std::fabs(delta), kept = size > noise ? size - noise * noise / size : 0.0;
  return pi + (delta < 0 ? -kept : kept);
}

// Row j's corrected estimate g_jl (l < depth, handed to put(l, g_jl)) from its kernel sums: D_j = den,
// Q_j = squares, A_j = acc. Returns its effective number of neighbours.
template <class Put>
double corrected_row(const Problem& pr, std::size_t j, double den, double squares, const double* acc, Put put,
                     Shrinkage shrinkage = Shrinkage::garrote) {
  const double neighbours = den * den / squares;
  for (std::size_t l = 0; l < pr.depth; ++l)
    put(l, corrected_value(pr.pilot[j * pr.depth + l], acc[l] / den, neighbours, shrinkage));
  return neighbours;
}

// CE_2^2's bandwidth. Its row terms (e_y - f) . (g - f) are linear in g, and g's noise is independent of
// the row's own label, so that noise adds no bias: what biases the figure is a wide bandwidth's smoothing
// and the garrote's pull towards the pilot. So for p = 2 a narrower candidate is formed: the correction kept
// whole at the narrowest grid bandwidth below the Brier score's whose median criterion row has at least
// kLeastNeighbours effective neighbours (each row's noise then adds about 1 / kLeastNeighbours of the
// residuals' variance to its term's). The estimate takes it where it reads more than the Brier score's
// bandwidth by over kNarrowingZ standard errors of the difference (from the rows' differences of influence
// terms): a miscalibration that the wider bandwidth smoothed away. Where it does not, the narrower one
// would only add noise: taken always, calibrated K = 10 models read marginal CE_2 0.025 to 0.031 instead
// of below 0.02, and peaked 20,000 x 10 input took h = 0.001 at five times the standard error
// (docs/estimator.md, section 3; docs/history.md, 7.23). As n grows the candidate bandwidth shrinks, and
// with it the smoothing's bias: the estimate is consistent on local maps too.
inline constexpr double kLeastNeighbours = 100, kNarrowingZ = 2;

// The grid point for CE_2^2 given the criterion's choice `best`: the first b < best whose count of rows
// with at least kLeastNeighbours neighbours, `enough[b]`, makes the median (the upper one of `rows`) such a
// row; `best` when none does.
std::size_t squares_bandwidth(const std::vector<double>& enough, double rows, std::size_t best);

// Row j's squared error sum_l (target - g_jl)^2, its term of the Brier criterion, from its kernel sums.
double corrected_squared_error(const Problem& pr, std::size_t j, double den, double squares, const double* acc);

// Mean leave-one-out Brier score of a corrected estimate; on a ring (own_rows), over every rank's rows,
// `rows` of them in all.
double brier(const Problem& pr, const Corrected& c, Communicator* ranks = nullptr, std::size_t rows = 0);

// The corrected estimates of every problem at one bandwidth shared by all, chosen from `grid` by the
// Brier score summed over the problems (averaged over `rows`); the full corrections at that bandwidth.
struct Fit {
  std::vector<Corrected> corrected;  // per problem, the averaged rows (every row unless fewer) in sorted order
  BandwidthSelection selection;
  std::size_t averaged_rows = 0;     // the rows of the row mean, over every rank
  // p = 2: the corrections of the same rows kept whole at grid point `narrowed_at` (squares_bandwidth(),
  // below the criterion's), swept with `corrected`; empty where there is no such point.
  std::vector<Corrected> narrowed;
  std::size_t narrowed_at = 0;
};

// The bandwidth by the criterion over at most `max_rows` rows, then the corrections at it of the
// `mean_rows` rows (criterion_rows(n, mean_rows): a uniform subset when fewer than n). `for_squares`
// (p = 2): also Fit::narrowed, where squares_bandwidth() finds a narrower grid point.
Fit fit_corrections(const std::vector<Problem>& problems, const std::vector<double>& grid, std::size_t max_rows,
                    std::size_t mean_rows, const SweepPlan& plan, std::size_t n, bool for_squares);

// fit_corrections() for one problem whose rows are split over the ranks (own_rows): the criterion's and
// the mean's rows are the whole input's (criterion_rows of all n), each rank scoring those among its own.
Fit ring_fit_corrections(const Problem& pr, const std::vector<double>& grid, std::size_t max_rows,
                         std::size_t mean_rows, const RingLayout& at, const SweepPlan& plan, bool for_squares);

}  // namespace ecekde::detail
