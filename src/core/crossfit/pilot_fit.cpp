#include "core/crossfit/pilot_fit.hpp"

#include <algorithm>
#include <array>
#include <numeric>

#include "core/crossfit/folds.hpp"
#include "core/parallel.hpp"
#include "core/ring.hpp"

namespace ecekde::detail {

namespace {

constexpr double kPilotPenalty = 1e-4;      // ridge on the pilot's parameters (mean log-loss scale)

}  // namespace

void predict_pilot(Problem& pr, const LogitDesign& design, const TileKernels& kernels, std::span<const double> theta,
                   std::span<const std::size_t> rows) {
  // Predicted in chunks, so that the probabilities in flight stay small at K = 1,000.
  constexpr std::size_t kChunk = 256;
  std::vector<double> prob(std::min(kChunk, rows.size()) * design.L);
  for (std::size_t begin = 0; begin < rows.size(); begin += kChunk) {
    const std::span<const std::size_t> chunk = rows.subspan(begin, std::min(kChunk, rows.size() - begin));
    predict_logit(design, kernels, theta, chunk, prob.data());
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      const std::size_t j = chunk[i];
      if (pr.depth == 1) {
        pr.pilot[j] = prob[i * 2 + 1];
      } else {
        std::copy_n(prob.begin() + static_cast<std::ptrdiff_t>(i * design.L), pr.depth,
                    pr.pilot.begin() + static_cast<std::ptrdiff_t>(j * pr.depth));
      }
    }
  }
}

LogitDesign without_cache(LogitDesign design) {
  design.table.reset();
  design.differences.reset();
  return design;
}

namespace {

std::vector<std::uint32_t> sorted_folds(const LabelledPoints& lp, const std::vector<std::size_t>& fold_of_input) {
  std::vector<std::uint32_t> out(lp.points.n);
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = static_cast<std::uint32_t>(fold_of_input[lp.original[j]]);
  return out;
}

}  // namespace

FoldModels fold_models_of_table(const Problem& pr, std::vector<double> table, std::size_t count,
                                const std::vector<std::size_t>& fold_of_input) {
  const std::size_t block = pr.lp->points.n * pr.depth;
  ECEKDE_ASSERT(table.size() == count * block);
  FoldModels out;
  out.count = count;
  out.fold_of = sorted_folds(*pr.lp, fold_of_input);
  out.predict = [table = std::move(table), n = pr.lp->points.n, depth = pr.depth](
                    std::size_t first, std::size_t folds, std::span<double> pilot, std::size_t stride, int) {
    for (std::size_t r = 0; r < folds * n; ++r)
      std::copy_n(table.begin() + static_cast<std::ptrdiff_t>((first * n + r) * depth), depth,
                  pilot.begin() + static_cast<std::ptrdiff_t>(r * stride));
  };
  return out;
}

FoldModels fold_models(const Problem& pr, FoldDesigns designs, std::vector<std::vector<double>> theta,
                       const std::vector<std::size_t>& fold_of_input, const TileKernels& kernels) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n, depth = pr.depth;
  FoldModels out;
  out.count = theta.size();
  out.fold_of = sorted_folds(lp, fold_of_input);
  designs.shared = without_cache(std::move(designs.shared));
  for (LogitDesign& d : designs.own) d = without_cache(std::move(d));
  out.predict = [designs = std::move(designs), theta = std::move(theta), &kernels, n, depth](
                    std::size_t first, std::size_t folds, std::span<double> pilot, std::size_t stride, int threads) {
    ECEKDE_ASSERT(first + folds <= theta.size() && stride >= depth && pilot.size() == folds * n * stride);
    std::vector<LogitDesign> each;
    for (std::size_t f = first; f < first + folds; ++f) each.push_back(designs.of(f));
    const std::span<const std::vector<double>> thetas(theta.data() + first, folds);
    const std::size_t L = each[0].L;
    // In chunks of rows on the threads, each row formed once for every fold of a shared design.
    constexpr std::size_t kChunk = 256;
    parallel_for((n + kChunk - 1) / kChunk, threads, [&](std::size_t c, int) {
      std::vector<std::size_t> rows(std::min(kChunk, n - c * kChunk));
      std::iota(rows.begin(), rows.end(), c * kChunk);
      std::vector<double> prob(folds * rows.size() * L);
      std::vector<double*> out(folds);
      for (std::size_t f = 0; f < folds; ++f) out[f] = prob.data() + f * rows.size() * L;
      if (designs.own.empty()) {
        predict_logit_each(each, kernels, thetas, rows, out);
      } else {
        for (std::size_t f = 0; f < folds; ++f) predict_logit(each[f], kernels, thetas[f], rows, out[f]);
      }
      for (std::size_t f = 0; f < folds; ++f)
        for (std::size_t i = 0; i < rows.size(); ++i) {
          double* to = pilot.data() + (f * n + rows[i]) * stride;
          if (depth == 1) *to = out[f][i * 2 + 1];
          else std::copy_n(out[f] + i * L, depth, to);
        }
    });
  };
  return out;
}

double pilot_penalty(const Problem& pr, const LogitDesign& design, std::span<const std::size_t> rows,
                     Communicator* ranks) {
  if (!design.binary()) return kPilotPenalty;
  std::array<double, 2> counts{0.0, static_cast<double>(rows.size())};
  for (std::size_t j : rows) counts[0] += pr.labels[j] == 1;
  combine_shares(ranks, counts);
  const double pi = counts[1] > 0 ? counts[0] / counts[1] : 0.5;
  return kPilotPenalty * std::max(4 * pi * (1 - pi), 1e-3);
}


std::vector<std::vector<double>> crossfit_pilot(Problem& pr, FoldDesigns designs, const TileKernels& kernels,
                                                const std::vector<std::size_t>& fold_of_input, std::size_t folds,
                                                int threads, const RunControl* control, Communicator* comm,
                                                std::span<const double> start, std::span<const char> trains) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n, parameters = designs.shared.parameters();
  const FoldDesigns uncached = designs;
  designs.cache(n, threads);
  pr.pilot.assign(n * pr.depth, 0.0);
  const FoldRows split = fold_rows(lp, fold_of_input, folds, trains);
  const auto& train = split.train;
  const auto& held_out = split.held_out;
  // A fold holding every row (tiny n) has nothing to learn from: its pilot is the identity map, f itself.
  auto fit = [&](std::size_t f, std::span<const double> start, bool predict, int fit_threads) {
    const LogitDesign design = designs.of(f);
    std::vector<double> theta =
        train[f].empty() ? std::vector<double>(parameters, 0.0)
                         : fit_logit(design, kernels, pr.labels, train[f], pilot_penalty(pr, design, train[f], nullptr),
                                     control, start, nullptr, fit_threads);
    if (predict) predict_pilot(pr, design, kernels, theta, held_out[f]);
    return theta;
  };
  // Fold 0 is fitted first (on every rank), and the other folds start from its solution: their training
  // rows overlap by about 3/4, so Newton needs a few steps from there instead of about ten from the
  // offsets. Each fit still runs to the Newton decrement's rounding floor. Fold 0's fit takes the threads
  // (where its design allows: fit_logit), the others one each.
  const Share mine = share_of(folds, comm);
  std::vector<std::vector<double>> theta(folds, std::vector<double>(parameters, 0.0));
  std::vector<double> first = fit(0, start, mine.begin == 0 && mine.size() > 0, threads);
  parallel_for(
      mine.size(), threads,
      [&](std::size_t own_fold, int) {
        const std::size_t f = mine.begin + own_fold;
        if (f > 0 && !held_out[f].empty()) theta[f] = fit(f, first, true, 1);
      },
      control);
  combine_shares(comm, pr.pilot);
  for (std::size_t f = 1; f < folds; ++f) combine_shares(comm, theta[f]);
  theta[0] = std::move(first);
  pr.folds = fold_models(pr, uncached, theta, fold_of_input, kernels);
  return theta;
}

void predict_folds(Problem& pr, const LogitDesign& design, const TileKernels& kernels,
                   const std::vector<std::vector<double>>& theta, const std::vector<std::size_t>& fold_of_input) {
  pr.pilot.assign(pr.lp->points.n, 0.0);
  const FoldRows split = fold_rows(*pr.lp, fold_of_input, theta.size());
  for (std::size_t f = 0; f < theta.size(); ++f) predict_pilot(pr, design, kernels, theta[f], split.held_out[f]);
  pr.folds = fold_models(pr, FoldDesigns(design), theta, fold_of_input, kernels);
}

}  // namespace ecekde::detail
