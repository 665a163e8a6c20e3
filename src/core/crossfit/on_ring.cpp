// The estimator's distributed variants (its stages: core/crossfit.cpp) where each rank holds only its own
// rows (own_rows): the cross-fitted pilot (pilot_fit.hpp) and the kernel correction (correction.hpp), each
// over every rank's rows, beside their serial forms.
#include <algorithm>
#include <limits>

#include "core/crossfit/correction.hpp"
#include "core/crossfit/folds.hpp"
#include "core/crossfit/pilot_fit.hpp"
#include "core/estimate_steps.hpp"
#include "core/reducers.hpp"
#include "core/ring.hpp"

namespace ecekde::detail {

std::vector<std::vector<double>> crossfit_pilot_on_ring(Problem& pr, FoldDesigns designs, const TileKernels& kernels,
                                                        const std::vector<std::size_t>& fold_of_input,
                                                        std::size_t folds, const RunControl* control,
                                                        Communicator* ranks, std::span<const double> start,
                                                        std::span<const char> trains) {
  const LabelledPoints& lp = *pr.lp;
  const FoldDesigns uncached = designs;
  designs.cache(lp.points.n, 1);
  pr.pilot.assign(lp.points.n * pr.depth, 0.0);
  const FoldRows split = fold_rows(lp, fold_of_input, folds, trains);
  const auto& train = split.train;
  const auto& held_out = split.held_out;
  std::vector<double> training(folds);
  for (std::size_t f = 0; f < folds; ++f) training[f] = static_cast<double>(train[f].size());
  combine_shares(ranks, training);
  std::vector<std::vector<double>> theta(folds);
  for (std::size_t f = 0; f < folds; ++f) {
    const LogitDesign design = designs.of(f);
    theta[f] = training[f] == 0 ? std::vector<double>(design.parameters(), 0.0)
                                : fit_logit(design, kernels, pr.labels, train[f],
                                            pilot_penalty(pr, design, train[f], ranks), control,
                                            f == 0 ? start : theta[0], ranks);
    predict_pilot(pr, design, kernels, theta[f], held_out[f]);
  }
  pr.folds = fold_models(pr, uncached, theta, fold_of_input, kernels);
  return theta;
}

namespace {

// Adds one block's PayloadSums record r (D, Q, A: depth values) of scale m into a row's running (m, D, Q,
// A): both are brought to the larger scale, D and A as the weights, Q as their squares.
void merge_payload_sums(double* acc, double m, const double* r, std::size_t depth) {
  if (m == -std::numeric_limits<double>::infinity()) return;  // the block gave the row nothing
  const bool raise = m > acc[0];
  const double f = std::exp(raise ? acc[0] - m : m - acc[0]);
  if (raise) {
    acc[0] = m;
    acc[1] = acc[1] * f + r[0];
    acc[2] = acc[2] * f * f + r[1];
    for (std::size_t l = 0; l < depth; ++l) acc[3 + l] = acc[3 + l] * f + r[2 + l];
  } else {
    acc[1] += r[0] * f;
    acc[2] += r[1] * f * f;
    for (std::size_t l = 0; l < depth; ++l) acc[3 + l] += r[2 + l] * f;
  }
}

// The corrections' kernel sums of a problem whose rows are split over the ranks (own_rows): for each of
// `bandwidths` and each of this rank's evaluated rows (sorted positions `self`), m, D, Q and A (depth
// values) over every rank's centres, each block's sums merged into the row's as the blocks come round.
// A block carries its centres' residuals under every fold's model, one fold's after another; each fold's
// rows read that fold's (fold-matched residuals, correction.hpp). Bandwidths share each tile's dot products
// (SharedDots).
std::vector<std::vector<double>> ring_payload_sums(const Problem& pr, std::span<const double> bandwidths,
                                                   std::span<const std::size_t> self, const RingLayout& at,
                                                   const SweepPlan& plan) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t H = bandwidths.size(), depth = pr.depth, width = depth + 3, stride = payload_stride(depth);
  const std::size_t folds = pr.folds.count;
  std::vector<std::vector<double>> offsets(H, std::vector<double>(lp.points.n));
  for (std::size_t b = 0; b < H; ++b) lp.points.centre_offsets(bandwidths[b], offsets[b], plan.threads);
  std::vector<std::vector<double>> sums(H, std::vector<double>(self.size() * width, 0.0));
  for (auto& per_bandwidth : sums)
    for (std::size_t q = 0; q < self.size(); ++q) per_bandwidth[q * width] = -std::numeric_limits<double>::infinity();
  const std::vector<std::vector<std::size_t>> groups = fold_groups(pr, self);
  std::vector<RowSubset> sides(folds);
  for (std::size_t m = 0; m < folds; ++m) {
    std::vector<std::size_t> rows(groups[m].size());
    for (std::size_t k = 0; k < rows.size(); ++k) rows[k] = lp.original[self[groups[m][k]]];
    sides[m] = row_subset(lp, rows);
  }
  const CentreBlock::Shape shape{lp.classes, lp.points.dim, H, folds * stride};
  const Residuals residuals = fold_residuals(pr, 0, folds, plan.threads);
  around_the_ring(
      at, CentreBlock::pack(lp, offsets, at.largest, residuals, folds * stride),
      shape, [&](const CentreBlock& block, bool own) {
        const std::size_t count = block.count();
        for (std::size_t m = 0; m < folds; ++m) {
          const std::vector<std::size_t>& group = groups[m];
          if (group.empty()) continue;
          const std::vector<std::size_t> nobody(group.size(), std::numeric_limits<std::size_t>::max());
          const std::span<const double> residuals = block.payload().subspan(m * count * stride, count * stride);
          auto part = [&](std::size_t b) {
            auto merge = [row = sums[b].data(), &group, width, depth](std::size_t k, double scale, const double* r) {
              merge_payload_sums(row + group[k] * width, scale, r, depth);
            };
            auto unused = [](std::size_t, double, double, const double*) {};
            return WithScale(PayloadSums(*plan.kernels, block.offsets()[b], 1 / bandwidths[b], residuals, depth, unused,
                                         own ? std::span<const std::size_t>(sides[m].self)
                                             : std::span<const std::size_t>(nobody)),
                             merge);
          };
          std::vector<decltype(part(0))> parts;
          for (std::size_t b = 0; b < H; ++b) parts.push_back(part(b));
          sweep_block(sides[m].points, block, plan, SharedDots(std::move(parts)));
        }
      });
  return sums;
}

// The corrected estimates at each of `asked` (grid points of `grid`) of this rank's rows among the input
// rows `rows` (all when empty), over every rank's centres, one per ask, from one sweep.
std::vector<Corrected> ring_correct(const Problem& pr, const std::vector<double>& grid,
                                    std::span<const CorrectionAt> asked, std::span<const std::size_t> rows,
                                    const RingLayout& at, const SweepPlan& plan) {
  const std::size_t width = pr.depth + 3;
  const Corrected none = evaluated(pr, rows.empty() ? std::vector<std::size_t>{} : positions_of(*pr.lp, own_rows_of(at, rows)));
  std::vector<double> bandwidths;
  for (const CorrectionAt& a : asked) bandwidths.push_back(grid[a.at]);
  const std::vector<std::vector<double>> sums = ring_payload_sums(pr, bandwidths, none.self, at, plan);
  std::vector<Corrected> out(asked.size(), none);
  for (std::size_t a = 0; a < asked.size(); ++a)
    for (std::size_t q = 0; q < none.self.size(); ++q) {
      const double* row = sums[a].data() + q * width;
      double* g = out[a].g.data() + q * pr.depth;
      out[a].neighbours[q] = corrected_row(
          pr, none.self[q], row[1], row[2], row + 3, [g](std::size_t l, double v) { g[l] = v; }, asked[a].shrinkage);
    }
  return out;
}

}  // namespace

Fit ring_fit_corrections(const Problem& pr, const std::vector<double>& grid, std::size_t max_rows,
                         std::size_t mean_rows, const RingLayout& at, const SweepPlan& plan, bool for_squares) {
  const LabelledPoints& lp = *pr.lp;
  const std::vector<std::size_t> chosen = criterion_rows(at.n, max_rows), mine = own_rows_of(at, chosen);
  const std::vector<std::size_t> averaged = criterion_rows(at.n, mean_rows);
  const std::span<const std::size_t> mean = averaged.size() == at.n ? std::span<const std::size_t>{} : averaged;
  const bool all_rows = chosen.size() == at.n;
  const std::vector<std::size_t> self = evaluated_rows(pr, all_rows ? std::vector<std::size_t>{} : positions_of(lp, mine));
  Fit fit;
  fit.selection.criterion = BandwidthCriterion::loo_regression;
  fit.selection.grid = grid;
  fit.selection.rows = chosen.size();
  fit.averaged_rows = averaged.size();
  if (grid.size() == 1 && (all_rows || !mean.empty())) {  // one candidate: its corrections are the fit, one pass
    const CorrectionAt only[] = {{0}};
    fit.corrected = ring_correct(pr, grid, only, mean, at, plan);
    fit.selection.score = {-brier(pr, fit.corrected[0], at.comm, averaged.size())};
    fit.selection.rows = averaged.size();
    fit.selection.bandwidth = grid[0];
    fit.selection.best_score = fit.selection.score[0];
    return fit;
  }
  // Each bandwidth's score: minus the mean over every rank's criterion rows of the squared error of g; and
  // how many of those rows have at least kLeastNeighbours effective neighbours (squares_bandwidth()).
  std::vector<double> enough;
  const std::size_t width = pr.depth + 3;
  const std::size_t group = std::max<std::size_t>(1, kRingSumsBytes / (sizeof(double) * width * std::max<std::size_t>(self.size(), 1)));
  for (std::size_t b0 = 0; b0 < grid.size(); b0 += group) {
    const std::size_t count = std::min(group, grid.size() - b0);
    const auto sums = ring_payload_sums(pr, std::span<const double>(grid).subspan(b0, count), self, at, plan);
    for (const std::vector<double>& per_bandwidth : sums) {
      std::vector<double> terms(self.size()), many(self.size());
      for (std::size_t q = 0; q < self.size(); ++q) {
        const double* row = per_bandwidth.data() + q * width;
        terms[q] = corrected_squared_error(pr, self[q], row[1], row[2], row + 3);
        many[q] = row[1] * row[1] / row[2] >= kLeastNeighbours;
      }
      fit.selection.score.push_back(-total_over_ranks(at.comm, terms) / static_cast<double>(chosen.size()));
      enough.push_back(total_over_ranks(at.comm, many));
    }
  }
  std::size_t best = 0;
  for (std::size_t b = 1; b < grid.size(); ++b)
    if (fit.selection.score[b] > fit.selection.score[best]) best = b;
  fit.selection.bandwidth = grid[best];
  fit.selection.best_score = fit.selection.score[best];
  // The mean's rows at the criterion's choice and, p = 2, at a narrower grid point kept whole, in one sweep.
  const std::size_t narrower =
      for_squares ? squares_bandwidth(enough, static_cast<double>(chosen.size()), best) : best;
  std::vector<CorrectionAt> asked{{best, Shrinkage::garrote}};
  if (narrower < best) asked.push_back({narrower, Shrinkage::whole});
  std::vector<Corrected> corrected = ring_correct(pr, grid, asked, mean, at, plan);
  fit.corrected.push_back(std::move(corrected[0]));
  if (narrower < best) {
    fit.narrowed_at = narrower;
    fit.narrowed.push_back(std::move(corrected[1]));
  }
  return fit;
}

}  // namespace ecekde::detail
