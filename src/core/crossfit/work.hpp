// The cost ledger (the estimator's stages: core/crossfit.cpp): each stage's work in kernel evaluations, for
// progress (work_ledger.hpp).
#pragma once

#include <cstddef>

#include "core/estimate_steps.hpp"

namespace ecekde::detail {

// The pilot's fits of `count` problems of n rows each (kPilotRowWork a row).
double pilot_work(std::size_t count, std::size_t n);

// The one-dimensional problems' own pilots: the Beta fits, and the step candidates' (about as many again).
double own_pilots_work(std::size_t problems, std::size_t n);

// Marginal's pooled fit over its pairs (about n + n (K - 1) / pooled_stride of them); none for one problem.
double pooled_work(std::size_t problems, std::size_t n, const SweepPlan& plan);

// The whole estimate's work: its pilots' and fit_corrections()' over a grid of `bandwidths`.
double crossfit_work(const Prepared& in, const EstimateOptions& options, std::size_t bandwidths);

}  // namespace ecekde::detail
