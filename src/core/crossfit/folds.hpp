// The cross-fit estimator's folds (its stages: core/crossfit.cpp): each input row's fold is folds_of()'s
// (crossfit.hpp); here, each fold's rows of a problem, and the rows the canonical pilots learn from.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/problems.hpp"

namespace ecekde::detail {

struct RingLayout;

// Each fold's training rows and held-out rows (sorted positions).
struct FoldRows {
  std::vector<std::vector<std::size_t>> train, held_out;
};

// `trains`, by input row (empty: every row): the rows the fits may learn from; every row is held out in
// its own fold all the same.
FoldRows fold_rows(const LabelledPoints& lp, const std::vector<std::size_t>& fold_of_input, std::size_t folds,
                   std::span<const char> trains = {});

// The canonical pilots are fitted on every row up to kMaxPilotRows, beyond that on a sample of about
// kMaxPilotRows of them: each row kept with probability kMaxPilotRows / n, decided by its key as folds_of()
// deals the folds (the hash of its predictions and its turn among tied rows: the same rows on any thread
// and rank count and in any order of distinct rows). Every row is still predicted by the fit of the folds
// it is not in. The pilots' parameters (at most K^2 + O(K) for K <= 16, O(K) above) are then known to a
// few parts in a thousand, far below the corrections' noise, while the fits' cost (about a third of the
// CPU time at n = 200,000, K = 10, with the row mean over 23,809 rows as at n = 10^6) stops growing with n.
inline constexpr std::size_t kMaxPilotRows = 200000;

// By input row of `pred` (on a ring, this rank's rows of n in all): whether the canonical pilots learn
// from it; empty when every row does.
std::vector<char> pilot_training_rows(const CheckedPredictions& pred, std::size_t n, const RingLayout* ring);

}  // namespace ecekde::detail
