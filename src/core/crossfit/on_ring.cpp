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
// `bandwidths` and each of this rank's evaluated rows (the points `side`; own centre at self[q], or q when
// self is empty), m, D, Q and A (depth values) over every rank's centres, each block's sums merged into
// the row's as the blocks come round. Bandwidths share each tile's dot products (SharedDots).
std::vector<std::vector<double>> ring_payload_sums(const Problem& pr, std::span<const double> bandwidths,
                                                   const KernelPoints& side, std::span<const std::size_t> self,
                                                   const RingLayout& at, const SweepPlan& plan) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t H = bandwidths.size(), depth = pr.depth, width = depth + 3, stride = payload_stride(depth);
  std::vector<std::vector<double>> offsets(H, std::vector<double>(lp.points.n));
  for (std::size_t b = 0; b < H; ++b) lp.points.centre_offsets(bandwidths[b], offsets[b], plan.threads);
  std::vector<std::vector<double>> sums(H, std::vector<double>(side.n * width, 0.0));
  for (auto& per_bandwidth : sums)
    for (std::size_t q = 0; q < side.n; ++q) per_bandwidth[q * width] = -std::numeric_limits<double>::infinity();
  const std::vector<std::size_t> nobody(side.n, std::numeric_limits<std::size_t>::max());
  const CentreBlock::Shape shape{lp.classes, lp.points.dim, H, stride};
  around_the_ring(at, CentreBlock::pack(lp, offsets, at.largest, residuals_of(pr), stride), shape,
                  [&](const CentreBlock& block, bool own) {
                    auto part = [&](std::size_t b) {
                      auto merge = [row = sums[b].data(), width, depth](std::size_t q, double m, const double* r) {
                        merge_payload_sums(row + q * width, m, r, depth);
                      };
                      auto unused = [](std::size_t, double, double, const double*) {};
                      return WithScale(PayloadSums(*plan.kernels, block.offsets()[b], 1 / bandwidths[b], block.payload(),
                                                   depth, unused, own ? self : std::span<const std::size_t>(nobody)),
                                       merge);
                    };
                    std::vector<decltype(part(0))> parts;
                    for (std::size_t b = 0; b < H; ++b) parts.push_back(part(b));
                    sweep_block(side, block, plan, SharedDots(std::move(parts)));
                  });
  return sums;
}

// The corrected estimate at bandwidth h of this rank's rows among the input rows `rows` (all when empty),
// over every rank's centres.
Corrected ring_correct(const Problem& pr, double h, std::span<const std::size_t> rows, const RingLayout& at,
                       const SweepPlan& plan) {
  const std::size_t width = pr.depth + 3;
  const RowSubset subset = rows.empty() ? RowSubset{} : row_subset(*pr.lp, own_rows_of(at, rows));
  const KernelPoints& side = rows.empty() ? pr.lp->points : subset.points;
  const std::vector<double> sums = ring_payload_sums(pr, std::span<const double>(&h, 1), side, subset.self, at, plan)[0];
  Corrected out = evaluated(pr, subset.self);
  for (std::size_t q = 0; q < out.self.size(); ++q) {
    const double* row = sums.data() + q * width;
    double* g = out.g.data() + q * pr.depth;
    out.neighbours[q] =
        corrected_row(pr, out.self[q], row[1], row[2], row + 3, [g](std::size_t l, double v) { g[l] = v; });
  }
  return out;
}

}  // namespace

Fit ring_fit_corrections(const Problem& pr, const std::vector<double>& grid, std::size_t max_rows,
                         std::size_t mean_rows, const RingLayout& at, const SweepPlan& plan) {
  const LabelledPoints& lp = *pr.lp;
  const std::vector<std::size_t> chosen = criterion_rows(at.n, max_rows), mine = own_rows_of(at, chosen);
  const std::vector<std::size_t> averaged = criterion_rows(at.n, mean_rows);
  const std::span<const std::size_t> mean = averaged.size() == at.n ? std::span<const std::size_t>{} : averaged;
  const bool all_rows = chosen.size() == at.n;
  const RowSubset subset = all_rows ? RowSubset{} : row_subset(lp, mine);
  const KernelPoints& side = all_rows ? lp.points : subset.points;
  const std::vector<std::size_t> self = evaluated_rows(pr, subset.self);
  Fit fit;
  fit.selection.criterion = BandwidthCriterion::loo_regression;
  fit.selection.grid = grid;
  fit.selection.rows = chosen.size();
  fit.averaged_rows = averaged.size();
  if (grid.size() == 1 && (all_rows || !mean.empty())) {  // one candidate: its corrections are the fit, one pass
    fit.corrected.push_back(ring_correct(pr, grid[0], mean, at, plan));
    fit.selection.score = {-brier(pr, fit.corrected[0], at.comm, averaged.size())};
    fit.selection.rows = averaged.size();
    fit.selection.bandwidth = grid[0];
    fit.selection.best_score = fit.selection.score[0];
    return fit;
  }
  // Each bandwidth's score: minus the mean over every rank's criterion rows of the squared error of g.
  const std::size_t width = pr.depth + 3;
  const std::size_t group = std::max<std::size_t>(1, kRingSumsBytes / (sizeof(double) * width * std::max<std::size_t>(side.n, 1)));
  for (std::size_t b0 = 0; b0 < grid.size(); b0 += group) {
    const std::size_t count = std::min(group, grid.size() - b0);
    const auto sums = ring_payload_sums(pr, std::span<const double>(grid).subspan(b0, count), side, subset.self, at, plan);
    for (const std::vector<double>& per_bandwidth : sums) {
      std::vector<double> terms(side.n);
      for (std::size_t q = 0; q < side.n; ++q) {
        const double* row = per_bandwidth.data() + q * width;
        terms[q] = corrected_squared_error(pr, self[q], row[1], row[2], row + 3);
      }
      fit.selection.score.push_back(-total_over_ranks(at.comm, terms) / static_cast<double>(chosen.size()));
    }
  }
  std::size_t best = 0;
  for (std::size_t b = 1; b < grid.size(); ++b)
    if (fit.selection.score[b] > fit.selection.score[best]) best = b;
  fit.selection.bandwidth = grid[best];
  fit.selection.best_score = fit.selection.score[best];
  fit.corrected.push_back(ring_correct(pr, grid[best], mean, at, plan));
  return fit;
}

}  // namespace ecekde::detail
