// The cross-fit estimator's shared vocabulary (its stages: core/crossfit.cpp): one kernel problem as the
// stages see it, and how probabilities enter the pilots' features (their floor, saturated values, the
// spline in logits).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/problems.hpp"
#include "ecekde/communicator.hpp"

namespace ecekde::detail {

inline constexpr double kFeatureFloor = 1e-12;  // probabilities enter the pilot's features at least at this

inline double safe_log(double v, double floor) { return std::log(std::max(v, floor)); }

// logit(s) = log s - log(1 - s), with 1 - s given as `rest` for precision near 1, floored like the features.
inline double logit(double s, double rest) { return safe_log(s, kFeatureFloor) - safe_log(rest, kFeatureFloor); }

// Saturated probabilities: below kFeatureFloor, or within it of 1 (the zeros of rounded or truncated
// outputs, a softmax that underflowed, a tree's pure leaf). Their logarithms say nothing about the map, the
// floor is arbitrary, and a zero's offset sat at log 1e-308, so no pilot could give a class of f_c = 0 the
// probability its labels show: canonical CE_1 read 99% low on a truncated softmax at K = 10
// (docs/history.md, 7.12). Where an input has any, its pilots set their level by indicators with
// parameters of their own (LogitSpline::saturated), floor their offsets at kFeatureFloor, and keep them out
// of the spline.
inline bool saturated(double v) { return v < kFeatureFloor; }

// A saturated probability's indicator takes this value, -log kFeatureFloor (27.6), the distance in log
// probability from the floor to 1: lifting a zero to a probability of 0.01 then takes a parameter of 0.83,
// not 23, so the pilots' ridge (which pulls it back towards the floor) barely bites.
inline const double kSaturatedIndicator = -std::log(kFeatureFloor);

// Whether any coordinate of the problems' points is saturated, on any of `ranks` (rows or problems split
// among them; null: this process holds them all).
bool any_saturated(std::span<const LabelledPoints> problems, Communicator* ranks);

// A restricted cubic spline basis (linear beyond the outer knots) of a score's logit, with knots at fixed
// quantiles of the values it is built from (no labels) and each basis function scaled to unit spread over
// them, so that the pilot can bend where a temperature or Beta map cannot (mixing with the uniform
// distribution, non-monotone distortions) at the cost of a few parameters. With `ranks` (own_rows), the
// values are every rank's: the knots are the same order statistics, the spreads the same sums. It also
// carries whether the input has saturated probabilities: the designs then give them indicators, and the
// values it is built from leave them out.
class LogitSpline {
 public:
  static constexpr std::size_t kKnots = 5, kFunctions = kKnots - 2;

  LogitSpline(std::vector<double> values, bool saturated, Communicator* ranks = nullptr);

  bool saturated() const { return saturated_; }

  void basis(double t, double* out) const {
    auto cube = [](double v) { return v > 0 ? v * v * v : 0.0; };
    const double last = knots_[kKnots - 1], before = knots_[kKnots - 2], span = last - before;
    for (std::size_t f = 0; f < kFunctions; ++f) {
      const double k = knots_[f];
      out[f] = (cube(t - k) - cube(t - before) * (last - k) / span + cube(t - last) * (before - k) / span) * scale_[f];
    }
  }

 private:
  std::array<double, kKnots> knots_{};
  std::array<double, kFunctions> scale_{};
  bool saturated_ = false;
};

// Each fold's pilot model of a problem, read at every row. Row j's correction averages its neighbours'
// residuals under the model of j's own fold (fold-matched residuals): that model never saw y_j, so no
// neighbour's residual is pulled towards it. With each neighbour's own cross-fitted pilot instead, the model
// of a neighbour in another fold was fitted on y_j, and g_j leaned away from y_j by about the pilot's
// leverage: local maps read 6 to 35 points low at narrow bandwidths (docs/history.md, 7.21, 7.22).
struct FoldModels {
  std::vector<std::uint32_t> fold_of;  // each sorted row's fold (32 bits: marginal holds K of these)
  std::size_t count = 0;               // folds
  // Writes the pilots of every row (sorted order) under the models of folds first .. first + folds - 1,
  // one block of n rows after another, into out: value l of row i of the f-th block at
  // out[(f n + i) stride + l] (stride >= depth), on up to `threads` threads.
  std::function<void(std::size_t first, std::size_t folds, std::span<double> out, std::size_t stride, int threads)>
      predict;

  bool fitted() const { return static_cast<bool>(predict); }
};

// One kernel problem as the estimator sees it: points in label-sorted order, each row's targets (one-hot
// class or 0/1) and the values f the error compares with (depth columns: K, or 1 for one dimension).
struct Problem {
  const LabelledPoints* lp = nullptr;
  std::size_t depth = 0;
  std::vector<int> labels;    // sorted position -> class (or 0/1)
  std::vector<double> pilot;  // n x depth: the cross-fitted pilot, sorted order
  const char* map = "";       // the pilot's family (Result::pilot)
  bool saturated = false;     // canonical: the input has saturated probabilities (any_saturated)
  FoldModels folds;           // the models of the pilot's folds (every family sets them)

  double target(std::size_t j, std::size_t l) const {
    return depth == 1 ? labels[j] : static_cast<double>(static_cast<std::size_t>(labels[j]) == l);
  }
  double value(std::size_t j, std::size_t l) const { return lp->points.x(j, l); }
};

Problem make_problem(const LabelledPoints& lp);

}  // namespace ecekde::detail
