// The kernel problems behind each calibration type. Every type reduces to one or more problems
// "points x_j on a simplex with integer labels": canonical is one problem on f with labels y; binary,
// top-label and each marginal class are one-dimensional problems on x = (s, 1 - s) with 0/1 labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/inputs.hpp"
#include "core/sweep.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::detail {

/// Points sorted by label, so that each class is a contiguous run of centres.
struct LabelledPoints {
  KernelPoints points;
  std::size_t classes = 0;               // L
  std::vector<std::size_t> class_begin;  // L + 1 run boundaries
  std::vector<std::size_t> original;     // sorted position -> input row
  bool one_dimensional = false;          // x = (s, 1 - s), labels 0/1; the error compares r_1 with s

  /// Sorts rows of the row-major n x dim array x by label (stable) and prepares them.
  static LabelledPoints make(const std::vector<double>& x, std::size_t dim,
                             const std::vector<std::int32_t>& labels, std::size_t classes,
                             bool one_dimensional);

  /// The class of centre i (sorted position).
  std::size_t label(std::size_t i) const;
};

/// The one-dimensional problem x_j = (s_j, rest_j), labels 0/1, rows in input order (rest_j = 1 - s_j as
/// make_problems() forms it, from the other columns).
LabelledPoints one_dimensional_problem(const std::vector<double>& s, const std::vector<double>& rest,
                                       const std::vector<std::int32_t>& positive);

/// The column of row j's largest probability; ties go to the lowest index.
std::size_t top_index(const CheckedPredictions& pred, std::size_t j);

/// Marginal's problem rows: per class c, s_c (the column), rest_c (the other columns' sum, formed as
/// make_problems() forms it) and positive_c = [y = c], each of n rows in input order.
struct MarginalRows {
  std::vector<std::vector<double>> s, rest;
  std::vector<std::vector<std::int32_t>> positive;
};
MarginalRows marginal_rows(const CheckedPredictions& pred, int threads = 1);

/// The problems of `type` on validated predictions, in a fixed order (marginal: class 0, 1, ...), formed
/// on `threads` (marginal's classes; the problems do not depend on the count).
std::vector<LabelledPoints> make_problems(const CheckedPredictions& pred, CalibrationType type, int threads = 1);

/// Checks that `type` applies to predictions with k columns.
void check_type_applies(CalibrationType type, std::size_t k);

/// What each problem's mean per-row error is multiplied by before summing over problems.
double problem_weight(CalibrationType type);

/// At least this many problems per thread before problems are spread over the threads one per task.
inline constexpr std::size_t kProblemsPerThread = 4;

/// Calls each(q, plan_q) for every problem q < count. Many problems (marginal: K of them) are spread over
/// the threads, one problem per task, each swept on one thread (plan_q): the per-problem steps that do not
/// split by rows (the score tree's sort and moments) then run in parallel too; split across ranks, each
/// rank takes its share of the problems. Few problems go one after another, each swept on all threads and
/// ranks. Returns the problems this rank computed: every problem unless they were split across ranks
/// (then the caller combines the results, zero where another rank computed them).
/// Whether for_each_problem() takes the problems one after another, each on every thread and rank.
inline bool problems_in_turn(std::size_t count, const SweepPlan& plan) {
  const std::size_t ranks = plan.communicator ? static_cast<std::size_t>(plan.communicator->size()) : 1;
  return !plan.owned_problems && count < kProblemsPerThread * static_cast<std::size_t>(plan.threads) * ranks;
}

template <class Each>
Share for_each_problem(std::size_t count, const SweepPlan& plan, Each each) {
  if (problems_in_turn(count, plan)) {
    for (std::size_t q = 0; q < count; ++q) each(q, plan);
    return {0, count};
  }
  SweepPlan serial = plan;
  serial.threads = 1;
  serial.communicator = nullptr;
  const Share mine = share_of(count, plan.communicator);
  parallel_for(mine.size(), plan.threads, [&](std::size_t own, int) { each(mine.begin + own, serial); }, plan.control);
  return mine;
}

}  // namespace ecekde::detail
