// The pilot stage (the estimator's stages: core/crossfit.cpp): the registry of pilot families and the
// selection among them by held-out log-loss (pilots.cpp); the families themselves: families.hpp.
#pragma once

#include <cstddef>
#include <vector>

#include "core/crossfit/problem.hpp"
#include "core/estimate_steps.hpp"

namespace ecekde::detail {

struct RingLayout;

// The kernel problems of `in` with their cross-fitted pilots; on a ring (own_rows: canonical only), of
// this rank's rows, fitted on every rank's.
std::vector<Problem> piloted_problems(const Prepared& in, const EstimateOptions& options, const RingLayout* ring);

// Whether one-dimensional problems (`problems` of them: one, or marginal's K) each try a step candidate
// (step_candidate()): where a class has enough positives for a map of its own, as for the class intercepts.
bool tries_steps(std::size_t problems);

}  // namespace ecekde::detail
