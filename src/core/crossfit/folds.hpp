// The cross-fit estimator's folds (its stages: core/crossfit.cpp): each input row's fold is folds_of()'s
// (crossfit.hpp); here, each fold's rows of a problem.
#pragma once

#include <cstddef>
#include <vector>

#include "core/problems.hpp"

namespace ecekde::detail {

// Each fold's training rows and held-out rows (sorted positions).
struct FoldRows {
  std::vector<std::vector<std::size_t>> train, held_out;
};

FoldRows fold_rows(const LabelledPoints& lp, const std::vector<std::size_t>& fold_of_input, std::size_t folds);

}  // namespace ecekde::detail
