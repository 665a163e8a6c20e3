#include "core/crossfit/correction.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>

#include "core/estimate_steps.hpp"
#include "core/numeric.hpp"
#include "core/reducers.hpp"
#include "core/ring.hpp"
#include "core/score_tree.hpp"

namespace ecekde::detail {

std::vector<double> residual_grid() {
  std::vector<double> grid;
  for (int i = 0; i < 9; ++i) grid.push_back(std::pow(10.0, -3.0 + 0.5 * i));
  return grid;
}

std::size_t criterion_row_limit(std::size_t max_rows, std::size_t n, std::size_t dim, bool one_dimensional) {
  const std::size_t asked = max_rows == 0 ? n : std::min(n, max_rows);
  if (one_dimensional) return asked;  // its sums cost O(n) per bandwidth, however many rows are scored
  const double affordable = std::floor(kCriterionWork / (static_cast<double>(n) * static_cast<double>(dim)));
  return std::min(asked, std::max(kMinCriterionRows, static_cast<std::size_t>(affordable)));
}

std::size_t mean_row_limit(std::size_t mean_rows, std::size_t n, std::size_t k, bool one_dimensional) {
  if (one_dimensional) return n;
  if (mean_rows > 0) return std::min(n, mean_rows);
  const double affordable =
      std::floor(kMeanWork / (static_cast<double>(n) * (static_cast<double>(k) + kPairWork)));
  return std::min(n, std::max(kMinMeanRows, static_cast<std::size_t>(affordable)));
}

std::vector<std::size_t> evaluated_rows(const Problem& pr, std::vector<std::size_t> self) {
  if (self.empty()) {
    self.resize(pr.lp->points.n);
    std::iota(self.begin(), self.end(), std::size_t{0});
  }
  return self;
}

Corrected evaluated(const Problem& pr, std::vector<std::size_t> self) {
  Corrected out;
  out.self = evaluated_rows(pr, std::move(self));
  out.g.assign(out.self.size() * pr.depth, 0.0);
  out.neighbours.assign(out.self.size(), 0.0);
  return out;
}

Residuals fold_residuals(const Problem& pr, std::size_t first, std::size_t folds, int threads) {
  ECEKDE_ASSERT(pr.folds.fitted());
  const std::size_t n = pr.lp->points.n, depth = pr.depth, stride = payload_stride(depth);
  Residuals residuals(folds * n * stride);  // the pilots, then in place their residuals and zero padding
  pr.folds.predict(first, folds, residuals, stride, threads);
  constexpr std::size_t kChunk = 1024;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(folds * chunks, threads, [&](std::size_t task, int) {
    const std::size_t f = task / chunks, begin = task % chunks * kChunk;
    for (std::size_t i = begin; i < std::min(n, begin + kChunk); ++i) {
      double* r = residuals.data() + f * n * stride + payload_index(i, 0, depth);
      for (std::size_t l = 0; l < depth; ++l) r[l] = pr.target(i, l) - r[l];
      std::fill(r + depth, r + stride, 0.0);
    }
  });
  return residuals;
}

std::vector<std::vector<std::size_t>> fold_groups(const Problem& pr, std::span<const std::size_t> self) {
  std::vector<std::vector<std::size_t>> groups(pr.folds.count);
  for (std::size_t q = 0; q < self.size(); ++q) groups[pr.folds.fold_of[self[q]]].push_back(q);
  return groups;
}

double corrected_squared_error(const Problem& pr, std::size_t j, double den, double squares, const double* acc) {
  double e = 0;
  corrected_row(pr, j, den, squares, acc, [&](std::size_t l, double g) {
    const double d = pr.target(j, l) - g;
    e += d * d;
  });
  return e;
}

namespace {

// Row j's squared error sum_l (target - g_l)^2 for its corrected estimate g (depth values), summed in the
// order of corrected_squared_error().
double squared_error(const Problem& pr, std::size_t j, const double* g) {
  double e = 0;
  for (std::size_t l = 0; l < pr.depth; ++l) {
    const double d = pr.target(j, l) - g[l];
    e += d * d;
  }
  return e;
}

}  // namespace

std::size_t squares_bandwidth(const std::vector<double>& enough, double rows, std::size_t best) {
  const double needed = rows - std::floor(rows / 2);  // rows at or above the upper median
  for (std::size_t b = 0; b < best; ++b)
    if (enough[b] >= needed) return b;
  return best;
}

double brier(const Problem& pr, const Corrected& c, Communicator* ranks, std::size_t rows) {
  const std::size_t R = c.self.size();
  std::vector<double> terms(R);
  for (std::size_t q = 0; q < R; ++q) terms[q] = squared_error(pr, c.self[q], c.g.data() + q * pr.depth);
  return total_over_ranks(ranks, terms) / static_cast<double>(ranks ? rows : R);
}

namespace {

// Whether a problem's sweeps go by the score tree (sweep()): then a caller sweeping it at several
// bandwidths builds the tree once, and its rows read every fold's residuals from one payload.
bool uses_tree(const Problem& pr, const SweepPlan& plan) { return plan.expansions && pr.lp->points.dim == 2; }

// A one-dimensional problem's centres in the order of its score tree (score_order(), ties by position),
// as the tree's path of correct() reads them: the tree built on them keeps that order, so its moments,
// the interpolation's rows and each row's own centre read every per-centre value (offsets, residuals,
// points) in sequence rather than scattered over the label-sorted problem (at n = 50,000 each row's dozen
// reads missed the cache: docs/benchmarks.md). The same centres in another order: the same tree, the
// same sums.
struct ScoreOrdered {
  KernelPoints points;
  std::vector<std::size_t> position;  // rank by score -> the problem's sorted position
};

ScoreOrdered score_ordered(const KernelPoints& p) {
  const std::size_t n = p.n;
  const std::vector<std::uint32_t> order = score_order({p.x_t.data(), n});
  ScoreOrdered out;
  out.points.n = n;
  out.points.dim = 2;
  out.points.log_x.resize(2 * n);
  out.points.x_t.resize(2 * n);
  out.position.assign(order.begin(), order.end());
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t i = order[r];
    out.points.log_x[2 * r] = p.log_x[2 * i];
    out.points.log_x[2 * r + 1] = p.log_x[2 * i + 1];
    out.points.x_t[r] = p.x_t[i];
    out.points.x_t[n + r] = p.x_t[n + i];
  }
  return out;
}

// What correct() reads of a problem at every bandwidth: the evaluated rows with their points when they are
// a subset (empty: every row); for the score tree, the centres in its order with, for a subset, each
// row's own centre among them, the tree itself when the caller keeps one (`keep_tree`) with the rows in
// the order its interpolation reads them, and every fold's residuals in that order as the rows of one
// transposed payload (fold m's value l at row m depth + l, as tree_payload_sums() reads it); for the pair
// sweeps every fold's block after another (fold_residuals(); a canonical problem's where the caller
// formed them, fit_corrections(), else fold by fold in each sweep).
struct CorrectionInputs {
  RowSubset subset;
  std::unique_ptr<const ScoreOrdered> by_score;  // the tree's centres (heap: the tree refers to them)
  std::vector<std::size_t> own_ranks;            // a subset's own centres among by_score
  std::unique_ptr<const ScoreTree> tree;
  std::vector<std::uint32_t> order;
  Residuals formed;                    // the residuals where formed here
  std::span<const double> residuals;  // formed, or the caller's
};

CorrectionInputs correction_inputs(const Problem& pr, std::span<const std::size_t> rows, const SweepPlan& plan,
                                   bool keep_tree = false, std::span<const double> residuals = {}) {
  // The rows' points for the score tree, which sweeps them together; the pair sweeps take each fold's apart.
  const bool tree_sweep = uses_tree(pr, plan);
  CorrectionInputs in;
  in.residuals = residuals;
  if (!rows.empty()) {
    if (tree_sweep) in.subset = row_subset(*pr.lp, rows);
    else in.subset.self = positions_of(*pr.lp, rows);
  }
  const std::size_t folds = pr.folds.count, n = pr.lp->points.n, depth = pr.depth;
  if (tree_sweep) {
    auto by_score = std::make_unique<ScoreOrdered>(score_ordered(pr.lp->points));
    if (!rows.empty()) {
      std::vector<std::size_t> rank(n);
      for (std::size_t r = 0; r < n; ++r) rank[by_score->position[r]] = r;
      for (std::size_t j : in.subset.self) in.own_ranks.push_back(rank[j]);
    }
    if (keep_tree) {
      in.tree = std::make_unique<const ScoreTree>(by_score->points, ScoreTree::kGridLeaf);
      in.order = ScoreTree::grid_order(rows.empty() ? by_score->points : in.subset.points);
    }
    const Residuals blocks = fold_residuals(pr, 0, folds, plan.threads);
    const std::size_t block = payload_stride(depth) * n;
    in.formed.resize(folds * depth * n);
    for (std::size_t f = 0; f < folds; ++f)
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t l = 0; l < depth; ++l)
          in.formed[(f * depth + l) * n + r] = blocks[f * block + payload_index(by_score->position[r], l, depth)];
    in.by_score = std::move(by_score);
  } else if (residuals.empty() && depth == 1) {
    in.formed = fold_residuals(pr, 0, folds, plan.threads);
  }
  if (!in.formed.empty()) in.residuals = in.formed;
  return in;
}

// The pair sweeps' fold-matched form: for each fold m with evaluated rows (sorted positions `self`), calls
// sweep_fold(group, rows, residuals) with the fold's indices into `self`, their points as a sweep's rows,
// and every centre's residuals under fold m's model, from `blocks` (every fold's, fold_residuals()) or
// formed here. The folds' sweeps together meet the pairs of one sweep of all the rows.
template <class SweepFold>
void for_each_fold(const Problem& pr, std::span<const std::size_t> self, std::span<const double> blocks, int threads,
                   SweepFold sweep_fold) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t block = payload_stride(pr.depth) * lp.points.n;
  const std::vector<std::vector<std::size_t>> groups = fold_groups(pr, self);
  for (std::size_t m = 0; m < groups.size(); ++m) {
    const std::vector<std::size_t>& group = groups[m];
    if (group.empty()) continue;
    std::vector<std::size_t> rows(group.size());
    for (std::size_t k = 0; k < group.size(); ++k) rows[k] = lp.original[self[group[k]]];
    const Residuals formed = blocks.empty() ? fold_residuals(pr, m, 1, threads) : Residuals{};
    sweep_fold(group, row_subset(lp, rows),
               blocks.empty() ? std::span<const double>(formed) : blocks.subspan(m * block, block));
  }
}

// The corrections at each of `asked` (grid points of `grid`), one per ask. The pair sweeps go once for all:
// each tile's dot products are shared by the asks (SharedDots), so each correction is bitwise the one it
// would be alone (p = 2's narrower correction beside the criterion's: at n = 50,000, K = 10 the criterion
// and both corrections took 4.6 to 5.1 s instead of 5.2 to 5.7 s; docs/history.md, 7.28); the score tree's
// sums go ask by ask. `delta`, where given, receives the first ask's kernel averages of the residuals of
// each evaluated row (rows x depth).
std::vector<Corrected> correct(const Problem& pr, const std::vector<double>& grid, std::span<const CorrectionAt> asked,
                               const CorrectionInputs& in, const SweepPlan& plan, std::vector<double>* delta = nullptr) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n, depth = pr.depth;
  std::vector<Corrected> out(asked.size(), evaluated(pr, in.subset.self));
  std::vector<std::vector<double>> offsets(asked.size(), std::vector<double>(n));
  if (delta) delta->resize(out[0].self.size() * depth);
  auto finish = [&](std::size_t a, std::size_t q, double den, double squares, const double* acc) {
    if (delta && a == 0)
      for (std::size_t l = 0; l < depth; ++l) (*delta)[q * depth + l] = acc[l] / den;
    double* g = out[a].g.data() + q * depth;
    out[a].neighbours[q] = corrected_row(pr, out[a].self[q], den, squares, acc,
                                         [g](std::size_t l, double v) { g[l] = v; }, asked[a].shrinkage);
  };
  if (uses_tree(pr, plan)) {  // every fold's residuals in one payload, each row reading its own fold's
    const ScoreOrdered& centres = *in.by_score;
    const std::size_t width = pr.folds.count * depth;
    for (std::size_t a = 0; a < asked.size(); ++a) {
      const double h = grid[asked[a].at];
      centres.points.centre_offsets(h, offsets[a], plan.threads);
      auto own_fold = [&](std::size_t r, double den, double squares, const double* acc) {
        const std::size_t q = in.subset.self.empty() ? centres.position[r] : r;  // every row: the centres' order
        finish(a, q, den, squares, acc + pr.folds.fold_of[out[a].self[q]] * depth);
      };
      tree_payload_sums(in.subset.self.empty() ? centres.points : in.subset.points, centres.points, in.own_ranks,
                        offsets[a], 1 / h, in.residuals, width, 1 + 0.1 * static_cast<double>(width), in.tree.get(),
                        in.order, plan, own_fold);
    }
    return out;
  }
  for (std::size_t a = 0; a < asked.size(); ++a) lp.points.centre_offsets(grid[asked[a].at], offsets[a], plan.threads);
  for_each_fold(pr, out[0].self, in.residuals, plan.threads,
                [&](const std::vector<std::size_t>& group, const RowSubset& rows, std::span<const double> residuals) {
                  auto part = [&](std::size_t a) {
                    auto in_group = [&finish, &group, a](std::size_t k, double den, double squares, const double* acc) {
                      finish(a, group[k], den, squares, acc);
                    };
                    return PayloadSums(*plan.kernels, offsets[a], 1 / grid[asked[a].at], residuals, depth, in_group,
                                       rows.self);
                  };
                  std::vector<decltype(part(0))> parts;
                  for (std::size_t a = 0; a < asked.size(); ++a) parts.push_back(part(a));
                  sweep(rows.points, lp.points, plan, SharedDots(std::move(parts)));
                });
  return out;
}

// Whether the candidate bandwidths share one sweep's dot products (brier_scores()): for one problem whose
// sweeps go pair by pair (not by the score tree, sweep()), the canonical one.
bool shares_dots(std::size_t problems, std::size_t bandwidths, const LabelledPoints& lp, const SweepPlan& plan) {
  return problems == 1 && bandwidths > 1 && (lp.points.dim != 2 || !plan.expansions);
}

// The criterion's own corrections of one problem: the kernel averages of the residuals (delta) and N of its
// rows (sorted positions `self`) at every bandwidth of the grid, [b][q * depth + l] and [b][q]. The final
// corrections at the chosen bandwidth are bitwise those they give (corrected_value(), either shrinkage) for
// those rows (a row's sums do not depend on which other rows share its sweep), so the final sweep takes only
// the mean's other rows: for the canonical problem at n = 10,000, K = 10 (the criterion on every row) none
// at all, at K = 1,000 a fifth fewer; for the one-dimensional problems, whose criterion scores every row,
// none (their final sweep, with their residuals formed anew, was 12% of a marginal estimate at n = 10,000,
// K = 100). Kept where they take at most kMaxKeptCorrections doubles.
struct CriterionCorrections {
  std::vector<std::size_t> self;
  std::vector<std::vector<double>> delta, neighbours;
};
constexpr std::size_t kMaxKeptCorrections = std::size_t{1} << 25;  // 256 MB

// Doubles of every fold's residuals kept through a canonical fit (fit_corrections()): 400 MB at n = 10,000,
// K = 1,000, where forming them once, each row's design for every fold at once, instead of fold by fold in
// each of its two sweeps took the estimate from 12.0 s to 10.8 s (docs/history.md, 7.22).
constexpr std::size_t kMaxFoldResiduals = std::size_t{1} << 26;

// The criterion's figures per problem q and grid point b, at [q * grid size + b]: the mean leave-one-out
// Brier score of the corrections over the criterion's rows, and how many of those rows have at least
// kLeastNeighbours effective neighbours (for squares_bandwidth()).
struct GridScores {
  std::vector<double> brier, enough;
};

// GridScores of one problem at every bandwidth of `grid`, over the input rows `rows` (all when empty), from
// one sweep whose tiles of dot products all bandwidths share (SharedDots): each Brier score bitwise
// brier(correct(...)), without keeping every bandwidth's corrections unless `keep` asks for them. For the
// canonical problem at K = 1,000 the dot products are half of each sweep (docs/benchmarks.md).
GridScores brier_scores(const Problem& pr, const std::vector<double>& grid, std::span<const std::size_t> rows,
                        std::span<const double> residuals, const SweepPlan& plan, CriterionCorrections* keep = nullptr) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n, depth = pr.depth;
  const std::vector<std::size_t> self = rows.empty() ? evaluated_rows(pr, {}) : positions_of(lp, rows);
  std::vector<std::vector<double>> offsets(grid.size(), std::vector<double>(n)), terms(grid.size()),
      enough(grid.size());
  for (std::size_t b = 0; b < grid.size(); ++b) {
    lp.points.centre_offsets(grid[b], offsets[b], plan.threads);
    terms[b].assign(self.size(), 0.0);
    enough[b].assign(self.size(), 0.0);
  }
  if (keep) {
    keep->self = self;
    keep->delta.assign(grid.size(), std::vector<double>(self.size() * depth));
    keep->neighbours.assign(grid.size(), std::vector<double>(self.size()));
  }
  for_each_fold(pr, self, residuals, plan.threads,
                [&](const std::vector<std::size_t>& group, const RowSubset& fold_rows, std::span<const double> own) {
                  auto part = [&](std::size_t b) {
                    double* delta = keep ? keep->delta[b].data() : nullptr;
                    double* neighbours = keep ? keep->neighbours[b].data() : nullptr;
                    auto finish = [&pr, &self, &group, out = terms[b].data(), many = enough[b].data(), delta,
                                   neighbours, depth](std::size_t k, double den, double squares, const double* acc) {
                      const std::size_t q = group[k];
                      const double rows_neighbours = den * den / squares;
                      many[q] = rows_neighbours >= kLeastNeighbours;
                      out[q] = corrected_squared_error(pr, self[q], den, squares, acc);
                      if (!delta) return;
                      neighbours[q] = rows_neighbours;
                      for (std::size_t l = 0; l < depth; ++l) delta[q * depth + l] = acc[l] / den;
                    };
                    return PayloadSums(*plan.kernels, offsets[b], 1 / grid[b], own, depth, finish, fold_rows.self);
                  };
                  std::vector<decltype(part(0))> parts;
                  for (std::size_t b = 0; b < grid.size(); ++b) parts.push_back(part(b));
                  sweep(fold_rows.points, lp.points, plan, SharedDots(std::move(parts)));
                });
  GridScores scores;
  for (std::size_t b = 0; b < grid.size(); ++b) {
    scores.brier.push_back(accurate_sum(terms[b]) / static_cast<double>(terms[b].size()));
    scores.enough.push_back(accurate_sum(enough[b]));
  }
  return scores;
}

// The corrections at each of `asked` of the input rows `rows` (all when empty), one per ask: from the
// criterion's kept sums where it scored the row, the others swept together (correct()).
std::vector<Corrected> correct_beside_kept(const Problem& pr, const std::vector<double>& grid,
                                          std::span<const CorrectionAt> asked, const CriterionCorrections& kept,
                                          std::span<const std::size_t> rows, std::span<const double> residuals,
                                          const SweepPlan& plan) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t depth = pr.depth;
  std::vector<Corrected> out(asked.size(),
                             evaluated(pr, rows.empty() ? std::vector<std::size_t>{} : positions_of(lp, rows)));
  const std::vector<std::size_t>& self = out[0].self;
  std::vector<std::size_t> kept_at(lp.points.n, kept.self.size());  // each sorted position's kept row, if any
  for (std::size_t q = 0; q < kept.self.size(); ++q) kept_at[kept.self[q]] = q;
  std::vector<std::size_t> missing, missing_at;  // input rows to sweep, and their places in `out`
  for (std::size_t q = 0; q < self.size(); ++q) {
    const std::size_t k = kept_at[self[q]];
    if (k == kept.self.size()) {
      missing.push_back(lp.original[self[q]]);
      missing_at.push_back(q);
      continue;
    }
    for (std::size_t a = 0; a < asked.size(); ++a) {
      const std::size_t b = asked[a].at;
      const double neighbours = kept.neighbours[b][k];
      for (std::size_t l = 0; l < depth; ++l)
        out[a].g[q * depth + l] = corrected_value(pr.pilot[self[q] * depth + l], kept.delta[b][k * depth + l],
                                                  neighbours, asked[a].shrinkage);
      out[a].neighbours[q] = neighbours;
    }
  }
  if (missing.empty()) return out;
  const std::vector<Corrected> swept =
      correct(pr, grid, asked, correction_inputs(pr, missing, plan, false, residuals), plan);
  for (std::size_t a = 0; a < asked.size(); ++a)
    for (std::size_t m = 0; m < missing.size(); ++m) {
      std::copy_n(swept[a].g.begin() + static_cast<std::ptrdiff_t>(m * depth), depth,
                  out[a].g.begin() + static_cast<std::ptrdiff_t>(missing_at[m] * depth));
      out[a].neighbours[missing_at[m]] = swept[a].neighbours[m];
    }
  return out;
}

// correct() for every problem at each of `asked`, [ask][problem]. The sums do not depend on how the
// problems are split.
std::vector<std::vector<Corrected>> correct_all(const std::vector<Problem>& problems, const std::vector<double>& grid,
                                                std::span<const CorrectionAt> asked, std::span<const std::size_t> rows,
                                                const SweepPlan& plan) {
  std::vector<std::vector<Corrected>> out(asked.size(), std::vector<Corrected>(problems.size()));
  const Share mine = for_each_problem(problems.size(), plan, [&](std::size_t q, const SweepPlan& own) {
    std::vector<Corrected> each = correct(problems[q], grid, asked, correction_inputs(problems[q], rows, own), own);
    for (std::size_t a = 0; a < asked.size(); ++a) out[a][q] = std::move(each[a]);
  });
  if (mine.size() == problems.size() || plan.owned_problems) return out;  // owned: the others' stay empty
  for (std::vector<Corrected>& at : out) {
    for (std::size_t q = 0; q < problems.size(); ++q)
      if (q < mine.begin || q >= mine.end)
        at[q] = evaluated(problems[q], rows.empty() ? std::vector<std::size_t>{} : positions_of(*problems[q].lp, rows));
    for (Corrected& c : at) {
      combine_shares(plan.communicator, c.g);
      combine_shares(plan.communicator, c.neighbours);
    }
  }
  return out;
}

// GridScores of the problems `scored` (indices into `problems`, criterion_problems()) at every bandwidth of
// `grid`, over the input rows `rows` (all when empty), each Brier score bitwise brier(correct(...)), at
// [s * grid size + b] for the s-th scored problem. Each problem is swept at every bandwidth in turn, so
// that its score tree and its correction inputs are built once (at K = 1,000, n = 50,000 the trees'
// sorting and building were a tenth of a marginal estimate).
// `keep` (one per problem), where given, receives each scored problem's criterion corrections.
GridScores brier_grid(const std::vector<Problem>& problems, std::span<const std::size_t> scored,
                      const std::vector<double>& grid, std::span<const std::size_t> rows, const SweepPlan& plan,
                      std::vector<CriterionCorrections>* keep = nullptr) {
  const std::size_t B = grid.size();
  GridScores scores{std::vector<double>(scored.size() * B, 0.0), std::vector<double>(scored.size() * B, 0.0)};
  // Over every problem, as the pilots were shared out (a rank holds its own problems' pilots only), each
  // scored one to its place in `scored`.
  std::vector<std::size_t> place(problems.size(), scored.size());
  for (std::size_t s = 0; s < scored.size(); ++s) place[scored[s]] = s;
  const Share mine = for_each_problem(problems.size(), plan, [&](std::size_t p, const SweepPlan& own) {
    const std::size_t q = place[p];
    if (q == scored.size()) return;
    const Problem& pr = problems[p];
    const CorrectionInputs in = correction_inputs(pr, rows, own, true);
    CriterionCorrections* kept = keep ? &(*keep)[p] : nullptr;
    if (kept) {
      kept->delta.resize(B);
      kept->neighbours.resize(B);
    }
    for (std::size_t b = 0; b < B; ++b) {
      const CorrectionAt at[] = {{b}};
      Corrected c = std::move(correct(pr, grid, at, in, own, kept ? &kept->delta[b] : nullptr)[0]);
      scores.brier[q * B + b] = brier(pr, c);
      scores.enough[q * B + b] = static_cast<double>(
          std::count_if(c.neighbours.begin(), c.neighbours.end(), [](double v) { return v >= kLeastNeighbours; }));
      if (!kept) continue;
      if (b == 0) kept->self = std::move(c.self);
      kept->neighbours[b] = std::move(c.neighbours);
    }
  });
  if (mine.size() != problems.size()) {
    combine_shares(plan.communicator, scores.brier);
    combine_shares(plan.communicator, scores.enough);
  }
  return scores;
}

}  // namespace

ScoredProblems criterion_problems(const std::vector<Problem>& problems, const SweepPlan& plan) {
  const std::size_t count = problems.size();
  ScoredProblems out;
  if (count <= kCriterionProblems) {
    out.index.resize(count);
    std::iota(out.index.begin(), out.index.end(), std::size_t{0});
    out.weight.assign(count, 1.0);
    return out;
  }
  // Each problem's positives; where the ranks own the problems, from its owner (the others hold none of
  // its rows), so that every rank samples the same classes.
  std::vector<double> positives(count, 0.0);
  const Share held = plan.owned_problems ? share_of(count, plan.communicator) : Share{0, count};
  for (std::size_t q = held.begin; q < held.end; ++q) {
    const std::vector<std::size_t>& runs = problems[q].lp->class_begin;
    positives[q] = runs.size() > 2 ? static_cast<double>(runs[2] - runs[1]) : 0.0;
  }
  if (plan.owned_problems) combine_shares(plan.communicator, positives);
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return positives[a] > positives[b]; });
  const std::size_t certain = kCriterionProblems / 2, sampled = kCriterionProblems - certain;
  std::vector<double> weight(count, 0.0);
  for (std::size_t r = 0; r < certain; ++r) weight[order[r]] = 1.0;
  std::vector<std::size_t> rest(order.begin() + static_cast<std::ptrdiff_t>(certain), order.end());
  std::sort(rest.begin(), rest.end());  // the rest in class order, sampled evenly
  for (std::size_t s = 0; s < sampled; ++s)
    weight[rest[s * rest.size() / sampled]] = static_cast<double>(rest.size()) / static_cast<double>(sampled);
  for (std::size_t q = 0; q < count; ++q)
    if (weight[q] > 0) {
      out.index.push_back(q);
      out.weight.push_back(weight[q]);
    }
  return out;
}

Fit fit_corrections(const std::vector<Problem>& problems, const std::vector<double>& grid, std::size_t max_rows,
                    std::size_t mean_rows, const SweepPlan& plan, std::size_t n, bool for_squares) {
  const std::vector<std::size_t> rows = criterion_rows(n, max_rows), averaged = criterion_rows(n, mean_rows);
  const bool all_rows = rows.size() == n;
  const std::span<const std::size_t> criterion = all_rows ? std::span<const std::size_t>{} : rows;
  const std::span<const std::size_t> mean = averaged.size() == n ? std::span<const std::size_t>{} : averaged;
  Fit fit;
  fit.selection.criterion = BandwidthCriterion::loo_regression;
  fit.selection.grid = grid;
  fit.selection.rows = rows.size();
  fit.averaged_rows = averaged.size();
  if (grid.size() == 1 && (all_rows || !mean.empty())) {  // one candidate: its corrections are the fit, one pass
    const CorrectionAt only[] = {{0}};
    fit.corrected = std::move(correct_all(problems, grid, only, mean, plan)[0]);
    std::vector<double> briers(problems.size(), 0.0);
    for (std::size_t q = 0; q < problems.size(); ++q)
      if (!fit.corrected[q].self.empty()) briers[q] = brier(problems[q], fit.corrected[q]);
    if (plan.owned_problems) combine_shares(plan.communicator, briers);  // each from its owner
    double score = 0;
    for (std::size_t q = 0; q < problems.size(); ++q) score -= briers[q];
    fit.selection.score = {score};
    fit.selection.bandwidth = grid[0];
    fit.selection.best_score = score;
    fit.selection.rows = averaged.size();
    return fit;
  }
  // Otherwise the criterion first, then the corrections at the chosen bandwidth on the mean's rows.
  const bool shared = shares_dots(problems.size(), grid.size(), *problems.front().lp, plan);
  // The criterion's corrections, one per problem, kept for the final ones where alone (a distributed
  // sweep's rows are the ranks', its problems shared out) and small enough: the shared sweep's kernel
  // averages, the others' with their neighbours where the criterion scored every row (the score tree
  // interpolates a subset's sums between points of its own, so its rows' bits depend on the subset).
  // Where the criterion scores a sample of the problems, the others' corrections are swept at the chosen
  // bandwidth in any case, and none are kept.
  const ScoredProblems scored = criterion_problems(problems, plan);
  std::size_t kept_values = 0;
  for (const Problem& pr : problems) kept_values += grid.size() * rows.size() * (shared ? pr.depth : pr.depth + 1);
  std::vector<CriterionCorrections> kept;
  if (!plan.communicator && kept_values <= kMaxKeptCorrections && (shared || all_rows) &&
      scored.index.size() == problems.size())
    kept.resize(problems.size());
  // The shared sweep's problem (canonical): every fold's residuals formed once for the criterion and the
  // final corrections, where they take at most kMaxFoldResiduals doubles (else fold by fold in each).
  const Problem& front = problems.front();
  const std::size_t residual_values = front.folds.count * payload_stride(front.depth) * n;
  Residuals residuals =
      shared && residual_values <= kMaxFoldResiduals ? fold_residuals(front, 0, front.folds.count, plan.threads)
                                                     : Residuals{};
  std::vector<CriterionCorrections>* keep = kept.empty() ? nullptr : &kept;
  const GridScores scores = shared ? brier_scores(front, grid, criterion, residuals, plan, keep ? &kept[0] : nullptr)
                                   : brier_grid(problems, scored.index, grid, criterion, plan, keep);
  const std::size_t B = grid.size();  // the scores' problems: one when shared
  std::vector<double> enough(B, 0.0);
  std::size_t best = 0;
  for (std::size_t b = 0; b < B; ++b) {
    double score = 0;
    for (std::size_t q = 0; q < scores.brier.size() / B; ++q) {
      const double weight = shared ? 1.0 : scored.weight[q];
      score -= weight * scores.brier[q * B + b];
      enough[b] += weight * scores.enough[q * B + b];
    }
    fit.selection.score.push_back(score);
    if (b == 0 || score > fit.selection.score[best]) best = b;
  }
  fit.selection.bandwidth = grid[best];
  fit.selection.best_score = fit.selection.score[best];
  // The corrections of the mean's rows at the criterion's choice and, p = 2, at a narrower grid point kept
  // whole (squares_bandwidth()), [ask][problem]: from the criterion's kept sums where it has them, the rest
  // of both in one sweep.
  const std::size_t narrower =
      for_squares ? squares_bandwidth(enough, static_cast<double>(rows.size() * (shared ? 1 : problems.size())), best)
                  : best;
  std::vector<CorrectionAt> asked{{best, Shrinkage::garrote}};
  if (narrower < best) asked.push_back({narrower, Shrinkage::whole});
  std::vector<std::vector<Corrected>> corrected;
  if (!kept.empty()) {
    corrected.resize(asked.size());
    for (std::size_t q = 0; q < problems.size(); ++q) {
      std::vector<Corrected> each = correct_beside_kept(problems[q], grid, asked, kept[q], mean, residuals, plan);
      for (std::size_t a = 0; a < asked.size(); ++a) corrected[a].push_back(std::move(each[a]));
    }
  } else if (shared) {
    for (Corrected& c : correct(front, grid, asked, correction_inputs(front, mean, plan, false, residuals), plan))
      corrected.push_back({std::move(c)});
  } else {
    corrected = correct_all(problems, grid, asked, mean, plan);
  }
  fit.corrected = std::move(corrected[0]);
  if (narrower < best) {
    fit.narrowed_at = narrower;
    fit.narrowed = std::move(corrected[1]);
  }
  return fit;
}

}  // namespace ecekde::detail
