// Cross-fitting a pilot (the estimator's stages: core/crossfit.cpp): a design's fit on each fold's training
// rows, predicted at the fold's held-out rows. The pilot families (families.hpp) give the designs; the
// registry (pilots.cpp) picks among them.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "core/crossfit/problem.hpp"
#include "core/logit_fit.hpp"

namespace ecekde::detail {

// Doubles (1 GiB) of a pilot's design rows kept for its Newton steps; a larger design's rows are recomputed
// at every step. The canonical design is 6 K values per row (7 K with saturated probabilities): 240 MB at
// n = 5,000, K = 1,000, where keeping it took the estimate from 18.0 s to 13.4 s (2 threads) for 150 MB more
// peak memory; 560 MB at n = 10,000 with saturated probabilities, above the 512 MB limit of before.
inline constexpr std::size_t kMaxCachedDesign = std::size_t{1} << 27;

// The design each fold's pilot is fitted on: the same for every fold (one-dimensional problems), the
// shared design with its last feature written per fold (`adjust`, one per fold: the canonical pilot's
// top-label feature, itself fitted without the fold; the folds then share one table of rows), or a design
// of each fold's own with the same parameters (`own`: the step candidate's threshold, found on the fold's
// training rows; such designs read another's table, step_design(), and keep none).
struct FoldDesigns {
  LogitDesign shared;
  std::vector<std::function<void(std::size_t, double*)>> adjust;
  std::vector<LogitDesign> own;

  FoldDesigns(LogitDesign every_fold, std::vector<std::function<void(std::size_t, double*)>> per_fold = {})
      : shared(std::move(every_fold)), adjust(std::move(per_fold)) {}
  explicit FoldDesigns(std::vector<LogitDesign> each_fold) : shared(each_fold.at(0)), own(std::move(each_fold)) {}

  void cache(std::size_t n, int threads) {
    if (own.empty()) cache_rows(shared, n, kMaxCachedDesign, threads);
  }

  LogitDesign of(std::size_t fold) const {
    if (!own.empty()) return own[fold];
    LogitDesign d = shared;
    if (!adjust.empty()) d.adjust = adjust[fold];
    return d;
  }
};

// Writes the pilot of the rows `rows` (sorted positions) under theta into pr.pilot.
void predict_pilot(Problem& pr, const LogitDesign& design, const TileKernels& kernels, std::span<const double> theta,
                   std::span<const std::size_t> rows);

// The fold models (Problem::folds) of a pilot fitted as crossfit_pilot() fits it: `designs` under each
// fold's `theta`. Their rows are formed when the models are read (the fits' cached tables are not kept),
// once for every fold read together where the folds share a design.
FoldModels fold_models(const Problem& pr, FoldDesigns designs, std::vector<std::vector<double>> theta,
                       const std::vector<std::size_t>& fold_of_input, const TileKernels& kernels);

// Fold models read from a table of every fold's pilots (`count` blocks of n x depth, sorted order): a
// problem whose pilots another rank fitted (pilots.cpp).
FoldModels fold_models_of_table(const Problem& pr, std::vector<double> table, std::size_t count,
                                const std::vector<std::size_t>& fold_of_input);

// A design without its cached rows (cache_rows()): what a fold model keeps of it.
LogitDesign without_cache(LogitDesign design);

// The ridge of a pilot's fit on `rows`: kPilotPenalty, scaled for two-class designs by 4 pi (1 - pi), pi
// the share of positives among those rows (every rank's with `ranks`; never a held-out row's label), and
// at least 1e-3 of it. The fits minimise a mean log-loss whose curvature is about pi per row, so a fixed
// ridge shrank a rare class's map towards f, the identity: on an ImageNet-shaped model (K = 1,000, the
// pooled fit on every pair, pi = 1 / K) marginal CE_2^2 read 39% low with it and 18% low with a ridge
// 1,000 times smaller (docs/history.md, 7.11). The floor keeps a class without positives finite.
double pilot_penalty(const Problem& pr, const LogitDesign& design, std::span<const std::size_t> rows,
                     Communicator* ranks);

// The cross-fitted pilot of a problem: each fold's design fitted on the other folds' rows (those `trains`
// marks, by input row, where given: fold_rows) and predicted on its own held-out rows into pr.pilot, the
// class's probability (one dimension) or all L probabilities. The folds are independent fits (in parallel
// on `threads`, each writing only its held-out rows; split across the ranks of `comm`, each rank fits its
// share and the pilots are combined), stopped by `control` between Newton steps. Returns every fold's
// parameters (on every rank), and sets pr.folds.
std::vector<std::vector<double>> crossfit_pilot(Problem& pr, FoldDesigns designs, const TileKernels& kernels,
                                                const std::vector<std::size_t>& fold_of_input, std::size_t folds,
                                                int threads, const RunControl* control, Communicator* comm = nullptr,
                                                std::span<const double> start = {}, std::span<const char> trains = {});

// crossfit_pilot() when each rank holds only its own rows (own_rows): every fold is fitted on all ranks'
// training rows, one fold after another on the calling thread (each objective's sums combined over the
// ranks), and each rank predicts its own held-out rows. Returns every fold's parameters and sets pr.folds.
// Defined with the other distributed variants (on_ring.cpp).
std::vector<std::vector<double>> crossfit_pilot_on_ring(Problem& pr, FoldDesigns designs, const TileKernels& kernels,
                                                        const std::vector<std::size_t>& fold_of_input,
                                                        std::size_t folds, const RunControl* control,
                                                        Communicator* ranks, std::span<const double> start = {},
                                                        std::span<const char> trains = {});

// Writes each row's pilot under its fold's parameters into pr.pilot, and sets pr.folds.
void predict_folds(Problem& pr, const LogitDesign& design, const TileKernels& kernels,
                   const std::vector<std::vector<double>>& theta, const std::vector<std::size_t>& fold_of_input);

}  // namespace ecekde::detail
