// The cross-fit estimator. For each kernel problem (canonical: f with labels y; one-dimensional: a score
// s with 0/1 labels b):
//   1. a pilot recalibration map pi, a small multinomial logistic model fitted with k-fold cross-fitting (folds, 5)
//      (each row's pilot is fitted without its fold's labels, also through its features; tied rows are
//      dealt to the folds in turn, folds_of): temperature, class biases, a spline in logit f shared by the
//      classes and the top-label pilot's recalibration (canonical; at K <= 16 also the same with a full
//      K x K matrix on log f, at K <= 128 with a bias per predicted class and at 64 < K <= 128 with
//      per-class biases, each kept where its held-out log-loss over all rows is lower), or Beta
//      calibration with a spline in logit s (one-dimensional; the same with a jump at a threshold found in
//      each fold, and for marginal one pooled over its classes, each kept where it predicts the held-out
//      labels better);
//   2. the leave-one-out kernel estimate of E[y | f_j] as the pilot plus the kernel-smoothed residuals,
//      g_j = pi_j + sum_{i != j} w_ji (e_{y_i} - pi_i) / sum_{i != j} w_ji (each component's correction
//      kept only where it exceeds its noise level, and shrunk there), the bandwidth chosen from a grid by the leave-one-out Brier
//      score of g;
//   3. CE_p^p = E[(y - f) . phi_p(E[y|f] - f)] with phi_p(t) = sign(t) |t|^(p-1) (an identity, since
//      E[y - f | f] = E[y|f] - f), estimated by the row mean of (e_{y_j} - f_j) . phi_p(g_j - f_j).
// g_j does not depend on y_j, so the label noise of row j averages out instead of being counted as
// miscalibration: on calibrated predictions the estimate has mean 0 at any bandwidth and any pilot.
#include "core/crossfit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/logit_fit.hpp"
#include "core/numeric.hpp"
#include "core/reducers.hpp"
#include "core/ring.hpp"
#include "core/score_tree.hpp"
#include "core/messages.hpp"
#include "ecekde/random.hpp"

namespace ecekde::detail {

namespace {

constexpr double kPilotPenalty = 1e-4;      // ridge on the pilot's parameters (mean log-loss scale)
// Doubles (512 MB) of a pilot's design rows kept for its Newton steps; a larger design's rows are recomputed
// at every step. The canonical design is 6 K values per row: 240 MB at n = 5,000, K = 1,000, where keeping
// it took the estimate from 18.0 s to 13.4 s (2 threads) for 150 MB more peak memory.
constexpr std::size_t kMaxCachedDesign = std::size_t{1} << 26;
constexpr double kFeatureFloor = 1e-12;     // probabilities enter the pilot's features at least at this
// The canonical pilot's per-class biases: always up to kMaxClassBiases classes; up to kMaxBiasCandidate a
// pilot without them and one with them are both fitted and the better kept (docs/validation.md, 7.10): at
// K = 100, n = 3,000, 100 biases fitted on 30 positives each flip the sign of small components where the
// truth has no biases. Their Hessian costs K^2 / 2 products per row and Newton step.
constexpr std::size_t kMaxClassBiases = 64;
constexpr std::size_t kMaxBiasCandidate = 128;
constexpr double kFewNeighbours = 5;        // median effective neighbours below this: a warning
// The canonical pilot's full-matrix candidate (docs/validation.md, 7.9): its ridge on W (mean log-loss
// scale), and the most classes it is tried for. Its Hessian costs K^4 / 2 products per row and Newton step:
// at n = 10,000 it adds 17-20% to the estimate's time at K = 10 and 25-40% at K = 16 (7.15); at K = 12 a
// random matrix map read canonical CE_2^2 21% low without it, its intervals missing the truth.
constexpr double kMatrixPenalty = 3e-3;
constexpr std::size_t kMaxMatrixClasses = 16;
// The canonical pilot's top-class-bias candidate (docs/validation.md, 7.14, 7.16): the most classes it is
// tried for, as for the class biases (with which it is fitted): those cost K^2 / 2 products per row and
// Newton step, the top biases D + K (LogitDesign::top).
constexpr std::size_t kMaxTopBiasClasses = kMaxBiasCandidate;

// The residual kernel's candidate bandwidths: 10^linspace(-3, 1, 9). The widest is nearly flat (the
// correction is then the mean residual, about 0), so the grid includes "trust the pilot".
std::vector<double> residual_grid() {
  std::vector<double> grid;
  for (int i = 0; i < 9; ++i) grid.push_back(std::pow(10.0, -3.0 + 0.5 * i));
  return grid;
}

double safe_log(double v, double floor) { return std::log(std::max(v, floor)); }

// logit(s) = log s - log(1 - s), with 1 - s given as `rest` for precision near 1, floored like the features.
double logit(double s, double rest) { return safe_log(s, kFeatureFloor) - safe_log(rest, kFeatureFloor); }

// Saturated probabilities: below kFeatureFloor, or within it of 1 (the zeros of rounded or truncated
// outputs, a softmax that underflowed, a tree's pure leaf). Their logarithms say nothing about the map, the
// floor is arbitrary, and a zero's offset sat at log 1e-308, so no pilot could give a class of f_c = 0 the
// probability its labels show: canonical CE_1 read 99% low on a truncated softmax at K = 10
// (docs/validation.md, 7.12). Where an input has any, its pilots set their level by indicators with
// parameters of their own (LogitSpline::saturated), floor their offsets at kFeatureFloor, and keep them out
// of the spline.
bool saturated(double v) { return v < kFeatureFloor; }

// A saturated probability's indicator takes this value, -log kFeatureFloor (27.6), the distance in log
// probability from the floor to 1: lifting a zero to a probability of 0.01 then takes a parameter of 0.83,
// not 23, so the pilots' ridge (which pulls it back towards the floor) barely bites.
const double kSaturatedIndicator = -std::log(kFeatureFloor);

// Whether any coordinate of the problems' points is saturated, on any of `ranks` (rows or problems split
// among them; null: this process holds them all).
bool any_saturated(std::span<const LabelledPoints> problems, Communicator* ranks) {
  std::vector<double> count{0.0};
  for (const LabelledPoints& lp : problems)
    count[0] += static_cast<double>(std::count_if(lp.points.x_t.begin(), lp.points.x_t.end(), saturated));
  combine_shares(ranks, count);
  return count[0] > 0;
}

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

  LogitSpline(std::vector<double> values, bool saturated, Communicator* ranks = nullptr) : saturated_(saturated) {
    std::vector<double> count{static_cast<double>(values.size())};
    combine_shares(ranks, count);
    if (count[0] == 0) {  // every value saturated: the basis is 0 wherever it is evaluated
      for (std::size_t q = 0; q < kKnots; ++q) knots_[q] = 1e-6 * static_cast<double>(q);
      return;
    }
    std::array<std::size_t, kKnots> at{};
    for (std::size_t q = 0; q < kKnots; ++q)
      at[q] = static_cast<std::size_t>((0.05 + 0.9 * static_cast<double>(q) / (kKnots - 1)) * (count[0] - 1));
    const std::vector<double> knots = order_statistics(ranks, values, at);  // sorts values
    std::copy(knots.begin(), knots.end(), knots_.begin());
    for (std::size_t q = 1; q < kKnots; ++q) knots_[q] = std::max(knots_[q], knots_[q - 1] + 1e-6);
    scale_.fill(1.0);
    std::array<double, kFunctions> sum{}, sum_sq{}, b{};
    for (double t : values) {
      basis(t, b.data());
      for (std::size_t f = 0; f < kFunctions; ++f) sum[f] += b[f], sum_sq[f] += b[f] * b[f];
    }
    if (ranks) {
      std::vector<double> sums(sum.begin(), sum.end());
      sums.insert(sums.end(), sum_sq.begin(), sum_sq.end());
      ranks->all_sum(sums);
      std::copy_n(sums.begin(), kFunctions, sum.begin());
      std::copy_n(sums.begin() + kFunctions, kFunctions, sum_sq.begin());
    }
    const double m = count[0];
    for (std::size_t f = 0; f < kFunctions; ++f) {
      const double var = sum_sq[f] / m - (sum[f] / m) * (sum[f] / m);
      scale_[f] = var > 0 ? 1 / std::sqrt(var) : 1.0;
    }
  }

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

// phi_p(t) = sign(t) |t|^(p - 1), with phi_1(0) = 0.
double phi(double t, double p) { return pow_abs_derivative(t, p) / p; }

// One kernel problem as the estimator sees it: points in label-sorted order, each row's targets (one-hot
// class or 0/1) and the values f the error compares with (depth columns: K, or 1 for one dimension).
struct Problem {
  const LabelledPoints* lp = nullptr;
  std::size_t depth = 0;
  std::vector<int> labels;    // sorted position -> class (or 0/1)
  std::vector<double> pilot;  // n x depth: the cross-fitted pilot, sorted order
  const char* map = "";       // the pilot's family (Result::pilot)
  bool saturated = false;     // canonical: the input has saturated probabilities (any_saturated)

  double target(std::size_t j, std::size_t l) const {
    return depth == 1 ? labels[j] : static_cast<double>(static_cast<std::size_t>(labels[j]) == l);
  }
  double value(std::size_t j, std::size_t l) const { return lp->points.x(j, l); }
};

Problem make_problem(const LabelledPoints& lp) {
  Problem pr;
  pr.lp = &lp;
  pr.depth = lp.one_dimensional ? 1 : lp.classes;
  pr.map = lp.one_dimensional ? "beta" : "structured";
  pr.labels.resize(lp.points.n);
  for (std::size_t j = 0; j < lp.points.n; ++j) pr.labels[j] = static_cast<int>(lp.label(j));
  return pr;
}

// Each fold's training rows and held-out rows (sorted positions).
struct FoldRows {
  std::vector<std::vector<std::size_t>> train, held_out;
};

FoldRows fold_rows(const LabelledPoints& lp, const std::vector<std::size_t>& fold_of_input, std::size_t folds) {
  FoldRows out{std::vector<std::vector<std::size_t>>(folds), std::vector<std::vector<std::size_t>>(folds)};
  for (std::size_t j = 0; j < lp.points.n; ++j)
    for (std::size_t f = 0; f < folds; ++f) (fold_of_input[lp.original[j]] == f ? out.held_out : out.train)[f].push_back(j);
  return out;
}

// Writes the pilot of the rows `rows` (sorted positions) under theta into pr.pilot.
void predict_pilot(Problem& pr, const LogitDesign& design, std::span<const double> theta, std::span<const std::size_t> rows) {
  // Predicted in chunks, so that the probabilities in flight stay small at K = 1,000.
  constexpr std::size_t kChunk = 256;
  std::vector<double> prob(std::min(kChunk, rows.size()) * design.L);
  for (std::size_t begin = 0; begin < rows.size(); begin += kChunk) {
    const std::span<const std::size_t> chunk = rows.subspan(begin, std::min(kChunk, rows.size() - begin));
    predict_logit(design, theta, chunk, prob.data());
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

// The design each fold's pilot is fitted on: the same for every fold (one-dimensional problems), the
// shared design with a few features rewritten per fold (`adjust`, one per fold: the canonical pilot's
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

  void cache(std::size_t n) {
    if (own.empty()) cache_rows(shared, n, kMaxCachedDesign);
  }

  LogitDesign of(std::size_t fold) const {
    if (!own.empty()) return own[fold];
    LogitDesign d = shared;
    if (!adjust.empty()) d.adjust = adjust[fold];
    return d;
  }
};

// The ridge of a pilot's fit on `rows`: kPilotPenalty, scaled for two-class designs by 4 pi (1 - pi), pi
// the share of positives among those rows (every rank's with `ranks`; never a held-out row's label), and
// at least 1e-3 of it. The fits minimise a mean log-loss whose curvature is about pi per row, so a fixed
// ridge shrank a rare class's map towards f, the identity: on an ImageNet-shaped model (K = 1,000, the
// pooled fit on every pair, pi = 1 / K) marginal CE_2^2 read 39% low with it and 18% low with a ridge
// 1,000 times smaller (docs/validation.md, 7.11). The floor keeps a class without positives finite.
double pilot_penalty(const Problem& pr, const LogitDesign& design, std::span<const std::size_t> rows,
                     Communicator* ranks) {
  if (!design.binary()) return kPilotPenalty;
  std::array<double, 2> counts{0.0, static_cast<double>(rows.size())};
  for (std::size_t j : rows) counts[0] += pr.labels[j] == 1;
  combine_shares(ranks, counts);
  const double pi = counts[1] > 0 ? counts[0] / counts[1] : 0.5;
  return kPilotPenalty * std::max(4 * pi * (1 - pi), 1e-3);
}

// Fits the designs with cross-fitting and writes each row's held-out pilot into pr.pilot: the positive
// class's probability (one dimension) or all L probabilities. The folds are independent fits (in parallel
// on `threads`, each writing only its held-out rows; split across the ranks of `comm`, each rank fits its
// share and the pilots are combined), stopped by `control` between Newton steps. Returns every fold's
// parameters (on every rank).
std::vector<std::vector<double>> crossfit_pilot(Problem& pr, FoldDesigns designs, const TileKernels& kernels,
                                                const std::vector<std::size_t>& fold_of_input, std::size_t folds,
                                                int threads, const RunControl* control, Communicator* comm = nullptr,
                                                std::span<const double> start = {}) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n, parameters = designs.shared.parameters();
  designs.cache(n);
  pr.pilot.assign(n * pr.depth, 0.0);
  const FoldRows split = fold_rows(lp, fold_of_input, folds);
  const auto& train = split.train;
  const auto& held_out = split.held_out;
  // A fold holding every row (tiny n) has nothing to learn from: its pilot is the identity map, f itself.
  auto fit = [&](std::size_t f, std::span<const double> start, bool predict) {
    const LogitDesign design = designs.of(f);
    std::vector<double> theta =
        train[f].empty() ? std::vector<double>(parameters, 0.0)
                         : fit_logit(design, kernels, pr.labels, train[f], pilot_penalty(pr, design, train[f], nullptr),
                                     control, start);
    if (predict) predict_pilot(pr, design, theta, held_out[f]);
    return theta;
  };
  // Fold 0 is fitted first (on every rank), and the other folds start from its solution: their training
  // rows overlap by about 3/4, so Newton needs a few steps from there instead of about ten from the
  // offsets. Each fit still runs to the Newton decrement's rounding floor.
  const Share mine = share_of(folds, comm);
  std::vector<std::vector<double>> theta(folds, std::vector<double>(parameters, 0.0));
  std::vector<double> first = fit(0, start, mine.begin == 0 && mine.size() > 0);
  parallel_for(
      mine.size(), threads,
      [&](std::size_t own_fold, int) {
        const std::size_t f = mine.begin + own_fold;
        if (f > 0 && !held_out[f].empty()) theta[f] = fit(f, first, true);
      },
      control);
  combine_shares(comm, pr.pilot);
  for (std::size_t f = 1; f < folds; ++f) combine_shares(comm, theta[f]);
  theta[0] = std::move(first);
  return theta;
}

// crossfit_pilot() when each rank holds only its own rows (own_rows): every fold is fitted on all ranks'
// training rows, one fold after another on the calling thread (each objective's sums combined over the
// ranks), and each rank predicts its own held-out rows. Returns every fold's parameters.
std::vector<std::vector<double>> crossfit_pilot_on_ring(Problem& pr, FoldDesigns designs, const TileKernels& kernels,
                                                        const std::vector<std::size_t>& fold_of_input,
                                                        std::size_t folds, const RunControl* control,
                                                        Communicator* ranks, std::span<const double> start = {}) {
  const LabelledPoints& lp = *pr.lp;
  designs.cache(lp.points.n);
  pr.pilot.assign(lp.points.n * pr.depth, 0.0);
  const FoldRows split = fold_rows(lp, fold_of_input, folds);
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
    predict_pilot(pr, design, theta[f], held_out[f]);
  }
  return theta;
}

// The spline in logit(s) of a one-dimensional problem, over its scores (no labels), those saturated left out
// where `saturated` (any_saturated() over every problem whose pilots share parameters with this one's).
std::shared_ptr<const LogitSpline> score_spline(const LabelledPoints& lp, bool saturated,
                                                Communicator* ranks = nullptr) {
  std::vector<double> t;
  t.reserve(lp.points.n);
  for (std::size_t j = 0; j < lp.points.n; ++j) {
    const double s = lp.points.x(j, 0), r = lp.points.x(j, 1);
    if (!saturated || !(detail::saturated(s) || detail::saturated(r))) t.push_back(logit(s, r));
  }
  return std::make_shared<const LogitSpline>(std::move(t), saturated, ranks);
}

// The most features a Beta design has (beta_design(): log s, log(1 - s), the intercept, the spline and two
// saturated indicators), which a step design (step_design()) holds in a buffer of its own.
constexpr std::size_t kMaxBetaFeatures = 3 + LogitSpline::kFunctions + 2;

// Beta calibration of a one-dimensional problem, bent by a spline in logit(s):
// logit P(b = 1 | s) = logit(s) + a log s + c log(1 - s) + d + sum_f e_f N_f(logit s) (+ a fixed
// `log_odds_offset`: a fit on a sample that keeps 1 in m negatives adds log m, then predicts without it).
// With a saturated input (the spline says so), two more terms u [s saturated] + v [1 - s saturated] set the
// level of those scores, whose spline terms are 0 and whose offsets are floored at kFeatureFloor.
LogitDesign beta_design(const LabelledPoints& lp, std::shared_ptr<const LogitSpline> spline, double log_odds_offset = 0) {
  constexpr std::size_t kFirstSpline = 3;  // after log s, log(1 - s) and the intercept
  LogitDesign d;
  d.L = 2;
  d.D = kFirstSpline + LogitSpline::kFunctions + (spline->saturated() ? 2 : 0);
  d.row = [&lp, spline, log_odds_offset, D = d.D](std::size_t j, double* offset, double* x) {
    const double s = lp.points.x(j, 0), r = lp.points.x(j, 1);
    const bool indicators = spline->saturated();
    const bool low = indicators && saturated(s), high = indicators && saturated(r);
    const double floor = indicators ? kFeatureFloor : kLogFloor;
    offset[0] = safe_log(r, floor);
    offset[1] = safe_log(s, floor) + log_odds_offset;
    std::fill_n(x, 2 * D, 0.0);  // class 0: no features
    x[D] = safe_log(s, kFeatureFloor);
    x[D + 1] = safe_log(r, kFeatureFloor);
    x[D + 2] = 1;
    if (!(low || high)) spline->basis(logit(s, r), x + D + kFirstSpline);
    if (indicators) {
      x[D + kFirstSpline + LogitSpline::kFunctions] = low ? kSaturatedIndicator : 0.0;
      x[D + kFirstSpline + LogitSpline::kFunctions + 1] = high ? kSaturatedIndicator : 0.0;
    }
  };
  return d;
}

// A Beta design (beta_design()) with a step: one more term u [logit s > step] lets the map jump
// (step_threshold() finds the step; `logits` holds each row's logit s). Its rows are the Beta design's
// (read from its table where cache_rows() wrote one) and that feature; where the Beta design has its
// table of differences (all its fits read of a row), so does this one, the same with that feature.
LogitDesign step_design(LogitDesign beta, std::shared_ptr<const std::vector<double>> logits, double step) {
  ECEKDE_ASSERT(beta.binary() && beta.D <= kMaxBetaFeatures);
  LogitDesign d;
  d.L = 2;
  d.D = beta.D + 1;
  if (beta.differences) {
    const std::size_t n = logits->size(), width = 1 + beta.D;
    auto differences = std::make_shared<std::vector<double>>(n * (width + 1));
    for (std::size_t j = 0; j < n; ++j) {
      double* out = differences->data() + j * (width + 1);
      std::copy_n(beta.differences->data() + j * width, width, out);
      out[width] = (*logits)[j] > step ? 1.0 : 0.0;
    }
    d.differences = std::move(differences);
  }
  d.row = [beta = std::move(beta), logits = std::move(logits), step](std::size_t j, double* offset, double* x) {
    std::array<double, 2 * kMaxBetaFeatures> features;
    if (beta.table) {
      const double* row = beta.table->data() + j * beta.row_size();
      std::copy_n(row, 2, offset);
      std::copy_n(row + 2, 2 * beta.D, features.data());
    } else {
      beta.row(j, offset, features.data());
    }
    const std::size_t D = beta.D + 1;
    std::copy_n(features.data(), beta.D, x);  // class 0: no features
    x[beta.D] = 0;
    std::copy_n(features.data() + beta.D, beta.D, x + D);
    x[2 * D - 1] = (*logits)[j] > step ? 1.0 : 0.0;
  };
  return d;
}

// A row's top class (the first of equal ones) and the sum of its other probabilities.
std::pair<std::size_t, double> top_and_rest(const double* f, std::size_t K) {
  const auto top = static_cast<std::size_t>(std::max_element(f, f + K) - f);
  double rest = 0;
  for (std::size_t c = 0; c < K; ++c)
    if (c != top) rest += f[c];
  return {top, rest};
}

// The canonical pilot's spline in logit f, over every probability of the input (no labels), those saturated
// left out where `saturated`.
std::shared_ptr<const LogitSpline> canonical_spline(const CheckedPredictions& pred, bool saturated,
                                                    Communicator* ranks = nullptr) {
  std::vector<double> t;
  t.reserve(pred.f.size());
  for (double f : pred.f)  // the spline sorts them: any order
    if (!saturated || !(detail::saturated(f) || detail::saturated(1 - f))) t.push_back(logit(f, 1 - f));
  return std::make_shared<const LogitSpline>(std::move(t), saturated, ranks);
}

// The canonical pilot: z_jc = log f_jc + a log f_jc + b_c + gamma t_jc + sum_f e_f N_f(logit f_jc), where t_j
// moves the top class's probability to a top-label pilot's value (top_label_adjustment(): each fold's
// own) and rescales the others in proportion (gamma = 1 does exactly that), and the spline, shared by
// the classes, bends every probability alike. A row's probabilities are read from the input's rows
// (`pred`, the same values as lp's points, which holds them transposed: a row's K values n apart). The
// rows leave t_j at 0 for the adjustment to write.
// With a matrix penalty, the design also takes a full K x K matrix W on log f (Dirichlet calibration's,
// z_jc += sum_m W_cm log f_jm), penalised by it: the matrix can move probability from one class to
// another, which the shared terms cannot. With a saturated input (the spline says so), one more term
// u [f_jc saturated] sets the level of classes of (nearly) zero probability, whose offsets are then floored
// at kFeatureFloor; saturated probabilities (and a top class of probability 1) have no spline terms.
// With `top_biases`, K more parameters v_c (LogitDesign::top) give each class a bias of its own where it
// is the top class: a model over- or underconfident by how much depends on the class it predicts, which
// the shared top-label term averages over the classes.
LogitDesign canonical_design(const LabelledPoints& lp, const CheckedPredictions& pred,
                             std::shared_ptr<const LogitSpline> spline, bool class_bias, double matrix_penalty = 0,
                             bool top_biases = false) {
  constexpr std::size_t kFirstSpline = 2;  // after log f and the top-label adjustment's feature
  LogitDesign d;
  d.L = lp.classes;
  d.D = kFirstSpline + LogitSpline::kFunctions + (spline->saturated() ? 1 : 0);
  d.class_bias = class_bias;
  d.M = matrix_penalty > 0 ? lp.classes : 0;
  d.matrix_penalty = matrix_penalty;
  if (top_biases) {
    auto tops = std::make_shared<std::vector<std::uint32_t>>(lp.points.n);
    const std::size_t K = lp.classes;
    for (std::size_t j = 0; j < lp.points.n; ++j)
      (*tops)[j] = static_cast<std::uint32_t>(top_and_rest(pred.f.data() + lp.original[j] * K, K).first);
    d.top = std::move(tops);
  }
  d.row = [&lp, &pred, spline, D = d.D, M = d.M](std::size_t j, double* offset, double* x) {
    const std::size_t K = lp.classes;
    const double* f = pred.f.data() + lp.original[j] * K;
    const auto [top, rest] = top_and_rest(f, K);
    const bool indicator = spline->saturated();
    for (std::size_t c = 0; c < K; ++c) {
      const double log_f = safe_log(f[c], kFeatureFloor), other = c == top ? rest : 1 - f[c];
      const bool low = indicator && saturated(f[c]);
      offset[c] = indicator ? log_f : lp.points.log_x[j * K + c];
      x[D * c] = log_f;
      x[D * c + 1] = 0;
      if (low || (indicator && saturated(other)))
        std::fill_n(x + D * c + kFirstSpline, LogitSpline::kFunctions, 0.0);
      else
        spline->basis(log_f - safe_log(other, kFeatureFloor), x + D * c + kFirstSpline);  // logit(f, other)
      if (indicator) x[D * c + kFirstSpline + LogitSpline::kFunctions] = low ? kSaturatedIndicator : 0.0;
      if (M > 0) x[D * K + c] = log_f;
    }
  };
  return d;
}

// A candidate design's starting parameters from a fitted design's (theta): the fitted design's features
// (the candidate's own after them at 0), its class biases where both have them, and the rest at 0.
std::vector<double> extended_start(std::span<const double> theta, const LogitDesign& from, const LogitDesign& to) {
  ECEKDE_ASSERT(to.D >= from.D && to.L == from.L);
  std::vector<double> start(to.parameters(), 0.0);
  std::copy_n(theta.begin(), from.D, start.begin());
  if (from.class_bias && to.class_bias)
    std::copy_n(theta.begin() + static_cast<std::ptrdiff_t>(from.D), from.L, start.begin() + static_cast<std::ptrdiff_t>(to.D));
  return start;
}

// -log pi_j(y_j) of row j (sorted position; one dimension: pi_j or 1 - pi_j). With each pilot fitted
// without its row's fold, its mean over the rows is the pilot's cross-validated log-loss: held_out_log_loss,
// on a ring (own_rows) over every rank's rows, `rows` of them in all.
double pilot_log_loss(const Problem& pr, std::size_t j) {
  const double pilot = pr.depth == 1 ? (pr.labels[j] ? pr.pilot[j] : 1 - pr.pilot[j])
                                     : pr.pilot[j * pr.depth + static_cast<std::size_t>(pr.labels[j])];
  return -safe_log(pilot, kLogFloor);
}

double held_out_log_loss(const Problem& pr, Communicator* ranks, std::size_t rows) {
  const std::size_t n = pr.lp->points.n;
  std::vector<double> terms(n);
  for (std::size_t j = 0; j < n; ++j) terms[j] = pilot_log_loss(pr, j);
  return total_over_ranks(ranks, terms) / static_cast<double>(rows);
}

// Each fold's adjustment of the canonical design (LogitDesign::adjust): t_j from that fold's top-label
// feature (input row order), log t - log s for the top class s and log(1 - t) - log(rest) for the others.
std::vector<std::function<void(std::size_t, double*)>> top_label_adjustment(
    const LabelledPoints& lp, const CheckedPredictions& pred, const LogitDesign& design,
    const std::vector<std::vector<double>>& features) {
  struct Top {
    std::size_t top;
    double log_s, log_rest;
  };
  const std::size_t K = lp.classes;
  auto tops = std::make_shared<std::vector<Top>>(lp.points.n);
  for (std::size_t j = 0; j < lp.points.n; ++j) {
    const double* f = pred.f.data() + lp.original[j] * K;
    const auto [top, rest] = top_and_rest(f, K);
    (*tops)[j] = {top, safe_log(f[top], kFeatureFloor), safe_log(rest, kFeatureFloor)};
  }
  std::vector<std::function<void(std::size_t, double*)>> out;
  for (const std::vector<double>& feature : features)
    out.emplace_back([&lp, &feature, tops, L = design.L, D = design.D](std::size_t j, double* row) {
      const Top& r = (*tops)[j];
      const double t = feature[lp.original[j]];
      const double up = safe_log(t, kFeatureFloor) - r.log_s, down = safe_log(1 - t, kFeatureFloor) - r.log_rest;
      double* x = row + L;
      for (std::size_t c = 0; c < L; ++c) x[D * c + 1] = c == r.top ? up : down;
    });
  return out;
}

// The leave-one-out corrected estimate g (rows x depth) of one problem at bandwidth h, for the evaluated rows
// of its CorrectionInputs (every row, in sorted order, unless a subset), with each row's effective number of
// neighbours N = (sum w)^2 / sum w^2. Each component's correction delta is kept only where it exceeds its own
// noise level s = sqrt(pi (1 - pi) / N): where the kernel sees only label noise (classes of tiny probability,
// thin neighbourhoods) g stays with the pilot, whose sign of g - f is far more reliable (docs/validation.md,
// Section 7: this took the bias of CE_1 on an imbalanced K = 10 model from -17% to -10%). Above it, delta
// shrinks to delta - s^2 / delta (a garrote): continuous at s, so a correction barely above the noise is
// small and rarely flips that sign, and a real one loses only O(1/N). The soft threshold delta - s biased g
// towards the pilot by O(N^-1/2), the order of the standard error: with few distinct predictions, where the
// pilot cannot follow the cells, p = 2 intervals covered 72-88%; a hard threshold (delta kept whole) cost
// CE_1 instead (docs/validation.md, 7.8).
struct Corrected {
  std::vector<double> g, neighbours;
  std::vector<std::size_t> self;  // sorted position of each evaluated row
};

// The sorted positions of the evaluated rows: `self`, or every row when it is empty.
std::vector<std::size_t> evaluated_rows(const Problem& pr, std::vector<std::size_t> self) {
  if (self.empty()) {
    self.resize(pr.lp->points.n);
    std::iota(self.begin(), self.end(), std::size_t{0});
  }
  return self;
}

// A correction before its values (g and N zero) of the rows at sorted positions `self` (empty: every row).
Corrected evaluated(const Problem& pr, std::vector<std::size_t> self) {
  Corrected out;
  out.self = evaluated_rows(pr, std::move(self));
  out.g.assign(out.self.size() * pr.depth, 0.0);
  out.neighbours.assign(out.self.size(), 0.0);
  return out;
}

// The residuals e_{y_i} - pi_i of every centre, laid out as PayloadSums reads them.
std::vector<double> residuals_of(const Problem& pr) {
  const std::size_t n = pr.lp->points.n, depth = pr.depth;
  std::vector<double> residuals(payload_stride(depth) * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0; l < depth; ++l)
      residuals[payload_index(i, l, depth)] = pr.target(i, l) - pr.pilot[i * depth + l];
  return residuals;
}

// Row j's corrected estimate g_jl (l < depth, handed to put(l, g_jl)) from its kernel sums: D_j = den,
// Q_j = squares, A_j = acc. Returns its effective number of neighbours.
template <class Put>
double corrected_row(const Problem& pr, std::size_t j, double den, double squares, const double* acc, Put put) {
  const double neighbours = den * den / squares;
  for (std::size_t l = 0; l < pr.depth; ++l) {
    const double pi = pr.pilot[j * pr.depth + l], delta = acc[l] / den;
    const double noise = std::sqrt(std::max(pi * (1 - pi), 0.0) / neighbours);
    const double size = std::fabs(delta), kept = size > noise ? size - noise * noise / size : 0.0;
    put(l, pi + (delta < 0 ? -kept : kept));
  }
  return neighbours;
}

// Row j's squared error sum_l (target - g_jl)^2, its term of the Brier criterion, from its kernel sums.
double corrected_squared_error(const Problem& pr, std::size_t j, double den, double squares, const double* acc) {
  double e = 0;
  corrected_row(pr, j, den, squares, acc, [&](std::size_t l, double g) {
    const double d = pr.target(j, l) - g;
    e += d * d;
  });
  return e;
}

// What correct() reads of a problem at every bandwidth: the centres' residuals, the evaluated rows with
// their points when they are a subset (empty: every row), and the centres' score tree when the caller
// keeps one, with the rows in the order it walks them. Formed once for a grid of bandwidths.
struct CorrectionInputs {
  std::vector<double> residuals;
  RowSubset subset;
  const ScoreTree* tree = nullptr;
  std::vector<std::uint32_t> order;
};

CorrectionInputs correction_inputs(const Problem& pr, std::span<const std::size_t> rows,
                                   const ScoreTree* tree = nullptr) {
  CorrectionInputs in{residuals_of(pr), rows.empty() ? RowSubset{} : row_subset(*pr.lp, rows), tree, {}};
  if (tree) in.order = tree->row_order(rows.empty() ? pr.lp->points : in.subset.points, in.subset.self);
  return in;
}

Corrected correct(const Problem& pr, double h, const CorrectionInputs& in, const SweepPlan& plan) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n, depth = pr.depth;
  std::vector<double> offsets(n);
  lp.points.centre_offsets(h, offsets);
  Corrected out = evaluated(pr, in.subset.self);
  auto finish = [&](std::size_t q, double den, double squares, const double* acc) {
    double* g = out.g.data() + q * depth;
    out.neighbours[q] = corrected_row(pr, out.self[q], den, squares, acc, [g](std::size_t l, double v) { g[l] = v; });
  };
  if (in.subset.self.empty()) {
    sweep(lp.points, plan,
          PayloadSums(*plan.kernels, offsets, 1 / h, in.residuals, depth, finish, {}, in.tree, in.order));
  } else {
    sweep(in.subset.points, lp.points, plan,
          PayloadSums(*plan.kernels, offsets, 1 / h, in.residuals, depth, finish, in.subset.self, in.tree,
                      in.order));
  }
  return out;
}

// Whether the candidate bandwidths share one sweep's dot products (brier_scores()): for one problem whose
// sweeps go pair by pair (not by the score tree, sweep()), the canonical one.
bool shares_dots(std::size_t problems, std::size_t bandwidths, const LabelledPoints& lp, const SweepPlan& plan) {
  return problems == 1 && bandwidths > 1 && (lp.points.dim != 2 || !plan.expansions);
}

// The mean leave-one-out Brier score of the corrections at every bandwidth of `grid`, over the input rows
// `rows` (all when empty), from one sweep whose tiles of dot products all bandwidths share (SharedDots):
// bitwise brier(correct(...)) at each, without keeping every bandwidth's corrections. For the canonical
// problem at K = 1,000 the dot products are half of each sweep (docs/benchmarks.md).
std::vector<double> brier_scores(const Problem& pr, const std::vector<double>& grid, std::span<const std::size_t> rows,
                                 const SweepPlan& plan) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n, depth = pr.depth;
  const std::vector<double> residuals = residuals_of(pr);
  const RowSubset subset = rows.empty() ? RowSubset{} : row_subset(lp, rows);
  const std::vector<std::size_t> self = evaluated_rows(pr, subset.self);
  std::vector<std::vector<double>> offsets(grid.size(), std::vector<double>(n)), terms(grid.size());
  auto part = [&](std::size_t b) {
    lp.points.centre_offsets(grid[b], offsets[b]);
    terms[b].assign(self.size(), 0.0);
    auto finish = [&pr, &self, out = terms[b].data()](std::size_t q, double den, double squares, const double* acc) {
      out[q] = corrected_squared_error(pr, self[q], den, squares, acc);
    };
    return PayloadSums(*plan.kernels, offsets[b], 1 / grid[b], residuals, depth, finish, subset.self);
  };
  std::vector<decltype(part(0))> parts;
  for (std::size_t b = 0; b < grid.size(); ++b) parts.push_back(part(b));
  const SharedDots together(std::move(parts));
  if (rows.empty()) sweep(lp.points, plan, together);
  else sweep(subset.points, lp.points, plan, together);
  std::vector<double> scores;
  for (const std::vector<double>& t : terms) scores.push_back(accurate_sum(t) / static_cast<double>(t.size()));
  return scores;
}

// Mean leave-one-out Brier score of a corrected estimate; on a ring (own_rows), over every rank's rows,
// `rows` of them in all.
double brier(const Problem& pr, const Corrected& c, Communicator* ranks = nullptr, std::size_t rows = 0) {
  const std::size_t R = c.self.size(), depth = pr.depth;
  std::vector<double> terms(R);
  for (std::size_t q = 0; q < R; ++q) {
    double e = 0;
    for (std::size_t l = 0; l < depth; ++l) {
      const double d = pr.target(c.self[q], l) - c.g[q * depth + l];
      e += d * d;
    }
    terms[q] = e;
  }
  return total_over_ranks(ranks, terms) / static_cast<double>(ranks ? rows : R);
}

// The median (the upper one of an even count) of every rank's values, n of them in all.
double median(std::vector<double> v, Communicator* ranks, std::size_t n) {
  const std::size_t middle = n / 2;
  return order_statistics(ranks, v, std::span<const std::size_t>(&middle, 1))[0];
}

// The corrected estimates of every problem at one bandwidth shared by all, chosen from `grid` by the
// Brier score summed over the problems (averaged over `rows`); the full corrections at that bandwidth.
struct Fit {
  std::vector<Corrected> corrected;  // per problem, every row in sorted order
  BandwidthSelection selection;
};

// Whether a problem's sweeps go by the score tree (sweep()): then a caller sweeping it at several
// bandwidths builds the tree once.
bool uses_tree(const Problem& pr, const SweepPlan& plan) { return plan.expansions && pr.lp->points.dim == 2; }

// correct() for every problem at one bandwidth. The sums do not depend on how the problems are split.
std::vector<Corrected> correct_all(const std::vector<Problem>& problems, double h, std::span<const std::size_t> rows,
                                   const SweepPlan& plan) {
  std::vector<Corrected> out(problems.size());
  const Share mine = for_each_problem(
      problems.size(), plan, [&](std::size_t q, const SweepPlan& own) {
        out[q] = correct(problems[q], h, correction_inputs(problems[q], rows), own);
      });
  if (mine.size() == problems.size() || plan.owned_problems) return out;  // owned: the others' stay empty
  for (std::size_t q = 0; q < problems.size(); ++q)
    if (q < mine.begin || q >= mine.end)
      out[q] = evaluated(problems[q], rows.empty() ? std::vector<std::size_t>{} : positions_of(*problems[q].lp, rows));
  for (Corrected& c : out) {
    combine_shares(plan.communicator, c.g);
    combine_shares(plan.communicator, c.neighbours);
  }
  return out;
}

// The mean leave-one-out Brier score of every problem's corrections at every bandwidth of `grid`, over the
// input rows `rows` (all when empty): scores[q * grid.size() + b], each bitwise brier(correct(...)). Each
// problem is swept at every bandwidth in turn, so that its score tree and its correction inputs are built
// once (at K = 1,000, n = 50,000 the trees' sorting and building were a tenth of a marginal estimate).
std::vector<double> brier_grid(const std::vector<Problem>& problems, const std::vector<double>& grid,
                               std::span<const std::size_t> rows, const SweepPlan& plan) {
  const std::size_t B = grid.size();
  std::vector<double> scores(problems.size() * B, 0.0);
  const Share mine = for_each_problem(problems.size(), plan, [&](std::size_t q, const SweepPlan& own) {
    const Problem& pr = problems[q];
    std::optional<ScoreTree> tree;
    if (uses_tree(pr, own)) tree.emplace(pr.lp->points, ScoreTree::kGridLeaf);
    const CorrectionInputs in = correction_inputs(pr, rows, tree ? &*tree : nullptr);
    for (std::size_t b = 0; b < B; ++b)
      scores[q * B + b] = brier(pr, correct(pr, grid[b], in, own));
  });
  if (mine.size() != problems.size()) combine_shares(plan.communicator, scores);
  return scores;
}

Fit fit_corrections(const std::vector<Problem>& problems, const std::vector<double>& grid, std::size_t max_rows,
                    const SweepPlan& plan, std::size_t n) {
  const std::vector<std::size_t> rows = criterion_rows(n, max_rows);
  const bool all_rows = rows.size() == n;
  const std::span<const std::size_t> criterion = all_rows ? std::span<const std::size_t>{} : rows;
  Fit fit;
  fit.selection.criterion = BandwidthCriterion::loo_regression;
  fit.selection.grid = grid;
  fit.selection.rows = rows.size();
  if (grid.size() == 1 && all_rows) {  // one candidate on every row: its corrections are the fit, one pass
    fit.corrected = correct_all(problems, grid[0], {}, plan);
    std::vector<double> briers(problems.size(), 0.0);
    for (std::size_t q = 0; q < problems.size(); ++q)
      if (!fit.corrected[q].self.empty()) briers[q] = brier(problems[q], fit.corrected[q]);
    if (plan.owned_problems) combine_shares(plan.communicator, briers);  // each from its owner
    double score = 0;
    for (std::size_t q = 0; q < problems.size(); ++q) score -= briers[q];
    fit.selection.score = {score};
    fit.selection.bandwidth = grid[0];
    fit.selection.best_score = score;
    return fit;
  }
  // Otherwise the criterion first, then the corrections at the chosen bandwidth on every row.
  const bool shared = shares_dots(problems.size(), grid.size(), *problems.front().lp, plan);
  const std::vector<double> briers = shared ? brier_scores(problems.front(), grid, criterion, plan)
                                            : brier_grid(problems, grid, criterion, plan);
  std::size_t best = 0;
  for (std::size_t b = 0; b < grid.size(); ++b) {
    double score = 0;
    if (shared) {
      score = -briers[b];
    } else {
      for (std::size_t q = 0; q < problems.size(); ++q) score -= briers[q * grid.size() + b];
    }
    fit.selection.score.push_back(score);
    if (b == 0 || score > fit.selection.score[best]) best = b;
  }
  fit.selection.bandwidth = grid[best];
  fit.selection.best_score = fit.selection.score[best];
  fit.corrected = correct_all(problems, grid[best], {}, plan);
  return fit;
}


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
  for (std::size_t b = 0; b < H; ++b) lp.points.centre_offsets(bandwidths[b], offsets[b]);
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

// The corrected estimate of every one of this rank's rows at bandwidth h, over every rank's centres.
Corrected ring_correct(const Problem& pr, double h, const RingLayout& at, const SweepPlan& plan) {
  const std::size_t width = pr.depth + 3;
  const std::vector<double> sums = ring_payload_sums(pr, std::span<const double>(&h, 1), pr.lp->points, {}, at, plan)[0];
  Corrected out = evaluated(pr, {});
  for (std::size_t q = 0; q < out.self.size(); ++q) {
    const double* row = sums.data() + q * width;
    double* g = out.g.data() + q * pr.depth;
    out.neighbours[q] = corrected_row(pr, q, row[1], row[2], row + 3, [g](std::size_t l, double v) { g[l] = v; });
  }
  return out;
}

// fit_corrections() for one problem whose rows are split over the ranks (own_rows): the criterion's rows
// are the whole input's (criterion_rows of all n), each rank scoring those among its own.
Fit ring_fit_corrections(const Problem& pr, const std::vector<double>& grid, std::size_t max_rows, const RingLayout& at,
                         const SweepPlan& plan) {
  const LabelledPoints& lp = *pr.lp;
  const std::vector<std::size_t> chosen = criterion_rows(at.n, max_rows), mine = own_rows_of(at, chosen);
  const bool all_rows = chosen.size() == at.n;
  const RowSubset subset = all_rows ? RowSubset{} : row_subset(lp, mine);
  const KernelPoints& side = all_rows ? lp.points : subset.points;
  const std::vector<std::size_t> self = evaluated_rows(pr, subset.self);
  Fit fit;
  fit.selection.criterion = BandwidthCriterion::loo_regression;
  fit.selection.grid = grid;
  fit.selection.rows = chosen.size();
  if (grid.size() == 1 && all_rows) {  // one candidate on every row: its corrections are the fit, one pass
    fit.corrected.push_back(ring_correct(pr, grid[0], at, plan));
    fit.selection.score = {-brier(pr, fit.corrected[0], at.comm, at.n)};
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
  fit.corrected.push_back(ring_correct(pr, grid[best], at, plan));
  return fit;
}

// Kernel evaluations of fit_corrections() over a grid of `bandwidths` for `count` problems on n points of
// dimension `dim` with `depth` values per row: a sweep of the criterion's rows per bandwidth, then the full
// sweep at the chosen one, unless one bandwidth on all rows is the whole fit (PayloadSums' cost per pair).
double fit_work(std::size_t count, std::size_t n, std::size_t dim, std::size_t depth, std::size_t bandwidths,
                std::size_t max_rows, const SweepPlan& plan) {
  const std::size_t rows = max_rows == 0 ? n : std::min(n, max_rows);
  const double swept_rows = static_cast<double>(bandwidths * rows + (bandwidths == 1 && rows == n ? 0 : n));
  return static_cast<double>(count) * (1 + 0.1 * static_cast<double>(depth)) * row_work(plan, dim, n) * swept_rows;
}

// Per input row: the estimate's term sum_l (target - f) phi_p(g - f) and its influence term
// term + max(p - 1, 1) sum_l (target - g) phi_p(g - f), added into term/influence (weighted). The second
// part is the row's effect on its neighbours' estimates (weight p - 1 from the influence function). For
// p < 2 it is weighted as at p = 2, an upper bound: where g - f is within noise of 0 a neighbour's label
// can flip its sign, a dependence between rows that the linear influence term misses (at p = 1 it would
// vanish); docs/validation.md, 7.5, measured p = 1 coverage of 87-91% without this and 96-99% with it.
void add_row_terms(const Problem& pr, const Corrected& c, double p, double weight, std::span<double> term,
                   std::span<double> influence) {
  const LabelledPoints& lp = *pr.lp;
  for (std::size_t j = 0; j < lp.points.n; ++j) {
    double t = 0, extra = 0;
    for (std::size_t l = 0; l < pr.depth; ++l) {
      const double f = pr.value(j, l), g = c.g[j * pr.depth + l], y = pr.target(j, l);
      const double ph = phi(g - f, p);
      t += (y - f) * ph;
      extra += (y - g) * ph;
    }
    term[lp.original[j]] += weight * t;
    influence[lp.original[j]] += weight * (t + std::max(p - 1, 1.0) * extra);
  }
}

// The pilot's logistic fits on the Beta design (every fold), in kernel evaluations per row, for progress:
// about 11 us per row on one thread, the time the score tree's sweeps take for about 3,000 evaluations
// (measured at n = 5,000, K = 1,000: marginal spent its first 55 s in the pilots at 0% done).
constexpr double kPilotRowWork = 3000;

double pilot_work(std::size_t count, std::size_t n) {
  return static_cast<double>(count) * static_cast<double>(n) * kPilotRowWork;
}

// Whether one-dimensional problems (`problems` of them: one, or marginal's K) each try a step candidate
// (step_candidate()): where a class has enough positives for a map of its own, as for the class intercepts.
bool tries_steps(std::size_t problems) { return problems <= kMaxBiasCandidate; }

// The one-dimensional problems' own pilots: the Beta fits, and the step candidates' (about as many again).
double own_pilots_work(std::size_t problems, std::size_t n) {
  return pilot_work(problems, n) * (tries_steps(problems) ? 2 : 1);
}

// Marginal's pooled pilot (below) is fitted on every positive (row, class) pair, a row and its label's
// class, and on at most about plan.pooled_negatives negative ones: above that, on a label-free sample of
// them, one in pooled_stride(). The positives carry what the fit learns (1 in K pairs); a sample of all
// pairs kept about 500 of them at n = 10,000 and at n = 50,000 alike (K = 1,000).
constexpr std::uint64_t kPooledSeed = 0x706f6f6c6564ULL;

std::size_t pooled_stride(std::size_t n, std::size_t k, const SweepPlan& plan) {
  return std::max<std::size_t>(1, (n * (k - 1) + plan.pooled_negatives - 1) / plan.pooled_negatives);
}

// Marginal's pooled fit over its pairs (about n + n (K - 1) / pooled_stride of them); none for one problem.
double pooled_work(std::size_t problems, std::size_t n, const SweepPlan& plan) {
  return problems > 1 ? pilot_work(1, n + n * (problems - 1) / pooled_stride(n, problems, plan)) : 0.0;
}

// The canonical pilot's top-label feature for each fold's fit: the one-dimensional problem's pilot fitted
// without that fold, at every row (input row order). Not its kernel-corrected estimate: a row's
// leave-one-out correction is its neighbours' labels without its own, so among rows with the same
// prediction the feature took one value per label, and a pilot fitted on such rows learned its labels
// from it (perfect separation) and passed each held-out row's own label into its neighbours' pilots. With
// few distinct predictions canonical figures then read up to 5 times their truth (docs/validation.md,
// 7.8). Nor one cross-fitted value per row: a training row's value was then fitted on the held-out fold's
// labels, which the canonical fit learned back (tied rows spread over the folds read a calibrated
// three-cell model at CE_1 = 0.08). Fold f's canonical fit sees no label of fold f, directly or not.
std::vector<std::vector<double>> top_label_features(const LabelledPoints& lp, const std::vector<std::size_t>& folds,
                                                    std::size_t fold_count, const SweepPlan& plan,
                                                    const RingLayout* ring) {
  std::vector<Problem> problems{make_problem(lp)};
  const std::size_t n = lp.points.n;
  WorkLedger::start(plan.control, pilot_work(1, n));
  Communicator* ranks = ring ? ring->comm : nullptr;
  const LogitDesign design = beta_design(lp, score_spline(lp, any_saturated({&lp, 1}, ranks), ranks));
  const std::vector<std::vector<double>> theta =
      ring ? crossfit_pilot_on_ring(problems[0], FoldDesigns(design), *plan.kernels, folds, fold_count, plan.control,
                                    ring->comm)
           : crossfit_pilot(problems[0], FoldDesigns(design), *plan.kernels, folds, fold_count, plan.threads,
                            plan.control, plan.communicator);
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  std::vector<double> prob(2 * n);
  std::vector<std::vector<double>> out(fold_count, std::vector<double>(n));
  for (std::size_t f = 0; f < fold_count; ++f) {
    predict_logit(design, theta[f], rows, prob.data());
    for (std::size_t j = 0; j < n; ++j) out[f][lp.original[j]] = prob[2 * j + 1];
  }
  WorkLedger::done(plan.control, pilot_work(1, n));
  return out;
}

std::string count_text(std::size_t count, const char* what) {
  return std::to_string(count) + " " + what + (count == 1 ? "" : "s");
}

}  // namespace

std::vector<std::size_t> folds_of(const CheckedPredictions& pred, std::size_t folds, const RingLayout* ring) {
  std::vector<std::uint64_t> hashes(pred.n);
  const std::size_t first = pred.k <= 2 ? pred.k - 1 : 0;
  for (std::size_t j = 0; j < pred.n; ++j) {
    std::uint64_t h = 0x63726f7373666974ULL;
    for (std::size_t c = first; c < pred.k; ++c) {
      // Rounded to float: the same predictions read from float32 or float64 files share their folds.
      const double rounded = static_cast<float>(pred.f[j * pred.k + c]);
      std::uint64_t bits;
      std::memcpy(&bits, &rounded, sizeof bits);
      h = Rng(h ^ bits).next();  // seeding mixes the bits (splitmix64)
    }
    hashes[j] = h;
  }
  // How many rows with each of this rank's hashes came before its first row, on the earlier ranks.
  std::unordered_map<std::uint64_t, std::size_t> dealt;
  for (std::uint64_t h : hashes) dealt.emplace(h, 0);
  if (ring && split_across(ring->comm)) {
    std::vector<double> halves(2 * ring->n, 0.0);  // each hash as two exact 32-bit halves
    for (std::size_t j = 0; j < pred.n; ++j) {
      halves[2 * (ring->first + j)] = static_cast<double>(hashes[j] >> 32);
      halves[2 * (ring->first + j) + 1] = static_cast<double>(hashes[j] & 0xffffffffULL);
    }
    combine_shares(ring->comm, halves);
    for (std::size_t r = 0; r < ring->first; ++r) {
      const auto h = (static_cast<std::uint64_t>(halves[2 * r]) << 32) | static_cast<std::uint64_t>(halves[2 * r + 1]);
      if (const auto at = dealt.find(h); at != dealt.end()) ++at->second;
    }
  }
  std::vector<std::size_t> fold(pred.n);
  for (std::size_t j = 0; j < pred.n; ++j) fold[j] = (hashes[j] % folds + dealt[hashes[j]]++ % folds) % folds;
  return fold;
}

double normal_quantile(double level) {
  // Bisection on P(|Z| <= z) = erf(z / sqrt 2): 200 halvings of [0, 40] reach the rounding limit.
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erf(mid / std::sqrt(2.0)) < level ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

// Marginal's pooled pilot (docs/validation.md, 7.10): one Beta map with its spline, fitted on the (row,
// class) pairs of every class at once, with the same folds (a pair takes its row's fold, so no row's
// label reaches its own pilot through another class). At large K a class has few positives (30 at
// n = 3,000, K = 100), too few for its own parameters; when the classes share a miscalibration the pooled
// fit has them all. It replaces the classes' own pilots where it predicts their held-out labels better.

struct PooledPairs {
  LabelledPoints lp;                  // the pairs as one one-dimensional problem
  std::vector<std::size_t> folds;     // each pair's fold (its row's)
  std::vector<std::size_t> first;     // K + 1: class c's pairs are first[c] .. first[c + 1] - 1
  std::vector<std::size_t> position;  // each pair's sorted position in its class's problem (classes held here)
  double stride = 1;                  // the negative pairs kept: 1 in stride (each stands for stride pairs)
  std::shared_ptr<const LogitSpline> spline;  // over the pairs a label-free sample would keep, not the labels'
};

// The pairs of the pooled fit, in class-then-row order: every positive one, and the negative ones whose
// hash of (row, class) falls in one of pooled_stride() equal parts (all of them where that is 1). Where
// each rank holds only its own classes' problems (owned), the ranks count and fill their classes' pairs
// (with each pair's row, for its fold) and add up the rest. `saturated`: any_saturated() over every class.
PooledPairs pooled_pairs(const std::vector<LabelledPoints>& problems, const std::vector<std::size_t>& folds,
                         std::size_t n, const SweepPlan& plan, bool saturated) {
  const std::size_t K = problems.size(), stride = pooled_stride(n, K, plan);
  auto sampled = [&](std::size_t row, std::size_t c) {
    return stride == 1 || Rng(kPooledSeed ^ (row * K + c)).next() % stride == 0;
  };
  const Share mine = plan.owned_problems ? share_of(K, plan.communicator) : Share{0, K};
  std::vector<double> counts(K, 0.0);
  for (std::size_t c = mine.begin; c < mine.end; ++c)
    for (std::size_t i = 0; i < n; ++i) counts[c] += problems[c].label(i) == 1 || sampled(problems[c].original[i], c);
  if (plan.owned_problems) combine_shares(plan.communicator, counts);
  PooledPairs out;
  out.stride = static_cast<double>(stride);
  out.first.assign(K + 1, 0);
  for (std::size_t c = 0; c < K; ++c) out.first[c + 1] = out.first[c] + static_cast<std::size_t>(counts[c]);
  const std::size_t pairs = out.first[K];
  std::vector<double> values(4 * pairs, 0.0);  // s, rest, positive, row
  std::vector<std::size_t> position(n);
  out.position.assign(pairs, 0);
  for (std::size_t c = mine.begin; c < mine.end; ++c) {
    const LabelledPoints& lp = problems[c];
    for (std::size_t i = 0; i < n; ++i) position[lp.original[i]] = i;
    for (std::size_t row = 0, pair = out.first[c]; row < n; ++row) {
      const std::size_t i = position[row];
      if (lp.label(i) != 1 && !sampled(row, c)) continue;
      values[4 * pair] = lp.points.x(i, 0);
      values[4 * pair + 1] = lp.points.x(i, 1);
      values[4 * pair + 2] = static_cast<double>(lp.label(i));
      values[4 * pair + 3] = static_cast<double>(row);
      out.position[pair++] = i;
    }
  }
  if (plan.owned_problems) combine_shares(plan.communicator, values);
  std::vector<double> s(pairs), rest(pairs), spline_logits;
  std::vector<std::int32_t> positive(pairs);
  out.folds.resize(pairs);
  for (std::size_t c = 0; c < K; ++c)
    for (std::size_t pair = out.first[c]; pair < out.first[c + 1]; ++pair) {
      const auto row = static_cast<std::size_t>(values[4 * pair + 3]);
      s[pair] = values[4 * pair], rest[pair] = values[4 * pair + 1];
      positive[pair] = static_cast<std::int32_t>(values[4 * pair + 2]);
      out.folds[pair] = folds[row];
      // The spline's knots are quantiles: taken over every kept pair, a held-out row's label (which keeps
      // its positive pair) would move them.
      if (sampled(row, c) && !(saturated && (detail::saturated(s[pair]) || detail::saturated(rest[pair]))))
        spline_logits.push_back(logit(s[pair], rest[pair]));
    }
  out.lp = one_dimensional_problem(s, rest, positive);
  out.spline = std::make_shared<const LogitSpline>(std::move(spline_logits), saturated);
  return out;
}

// A pair's -log of the pooled pilot at its label, with the fit's sampling offset (log stride) taken back
// out, times the number of pairs it stands for: the sum over the pairs estimates the sum over all n K.
double pooled_pair_loss(const Problem& pairs, std::size_t i, double stride) {
  const double sampled = pairs.pilot[i], scale = sampled + stride * (1 - sampled);
  return pairs.labels[i] ? -safe_log(sampled / scale, kLogFloor)
                         : stride * -safe_log(stride * (1 - sampled) / scale, kLogFloor);
}

// Writes each row's pilot under its fold's parameters into pr.pilot.
void predict_folds(Problem& pr, const LogitDesign& design, const std::vector<std::vector<double>>& theta,
                   const std::vector<std::size_t>& fold_of_input) {
  pr.pilot.assign(pr.lp->points.n, 0.0);
  const FoldRows split = fold_rows(*pr.lp, fold_of_input, theta.size());
  for (std::size_t f = 0; f < theta.size(); ++f) predict_pilot(pr, design, theta[f], split.held_out[f]);
}

// Class pr's pilot from the pooled map plus an intercept of the class's own (docs/validation.md, 7.12): in
// fold f, logit pi_j = the pooled map's log-odds at s_j under fold f's parameters + b_f, b_f fitted on the
// class's training rows of fold f with those log-odds as offsets; each row's pilot is its fold's. A class
// has one parameter here instead of its own map's eight, so a per-class shift (class biases, label shift)
// is followed where the class's positives are too few for a map of its own. Returns the pilot (sorted
// positions).
std::vector<double> pooled_with_intercept(const Problem& pr, const LogitDesign& pooled,
                                          const std::vector<std::vector<double>>& theta,
                                          const std::vector<std::size_t>& fold_of_input, const TileKernels& kernels,
                                          const RunControl* control) {
  const std::size_t n = pr.lp->points.n;
  const FoldRows split = fold_rows(*pr.lp, fold_of_input, theta.size());
  std::vector<std::size_t> every(n);
  std::iota(every.begin(), every.end(), std::size_t{0});
  std::vector<double> prob(2 * n), log_odds(n), pilot(n, 0.0);
  LogitDesign shifted;
  shifted.L = 2;
  shifted.D = 1;
  shifted.row = [&log_odds](std::size_t j, double* offset, double* x) {
    offset[0] = 0, offset[1] = log_odds[j];
    x[0] = 0, x[1] = 1;
  };
  for (std::size_t f = 0; f < theta.size(); ++f) {
    if (split.held_out[f].empty()) continue;
    predict_logit(pooled, theta[f], every, prob.data());
    for (std::size_t j = 0; j < n; ++j)
      log_odds[j] = safe_log(prob[2 * j + 1], kLogFloor) - safe_log(prob[2 * j], kLogFloor);
    const double lambda = pilot_penalty(pr, shifted, split.train[f], nullptr);
    const double b =
        split.train[f].empty() ? 0.0 : fit_logit(shifted, kernels, pr.labels, split.train[f], lambda, control)[0];
    for (std::size_t j : split.held_out[f]) pilot[j] = 1 / (1 + std::exp(-(log_odds[j] + b)));
  }
  return pilot;
}

// A one-dimensional problem's rows in decreasing logit s, sorted once for every fold's step threshold:
// their sorted positions, logits, labels and folds, each in that order.
struct ByScore {
  std::vector<std::size_t> row, fold;
  std::vector<double> logit;
  std::vector<int> label;

  ByScore(const Problem& pr, std::span<const double> logits, const std::vector<std::size_t>& fold_of_input) {
    const std::size_t n = logits.size();
    row.resize(n);
    std::iota(row.begin(), row.end(), std::size_t{0});
    std::sort(row.begin(), row.end(),
              [&](std::size_t a, std::size_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    for (std::size_t j : row) {
      fold.push_back(fold_of_input[pr.lp->original[j]]);
      logit.push_back(logits[j]);
      label.push_back(pr.labels[j]);
    }
  }
};

// The step candidate's threshold in fold f (docs/validation.md, 7.14): where the fold's smooth pilot
// (theta under `beta`, fitted on the rows of the other folds) misses most. Over those rows in decreasing
// logit s, U(t) = sum_{logit s > t} (b - pi) and V(t) = sum_{logit s > t} pi (1 - pi): U^2 / V is the score
// statistic of a jump u [logit s > t] added to the smooth map. A smooth map that rounds a jump errs low on
// one side and high on the other, so U peaks at the jump. Thresholds lie midway between distinct scores
// with at least a fiftieth of the rows (and 20) and kMinStepLabels of each label on either side, so that
// no side is (nearly) separated by its labels, where the jump's fit would grow without bound; none where
// there is no such place.
std::optional<double> step_threshold(const ByScore& order, const LogitDesign& beta, std::span<const double> theta,
                                     std::size_t f) {
  constexpr double kMinStepLabels = 10;
  const std::size_t n = order.row.size();
  std::size_t m = 0;
  double positives = 0;
  for (std::size_t k = 0; k < n; ++k)
    if (order.fold[k] != f) ++m, positives += order.label[k];
  const std::size_t side = std::max<std::size_t>(20, m / 50);
  if (m < 2 * side || positives < 2 * kMinStepLabels || static_cast<double>(m) - positives < 2 * kMinStepLabels)
    return std::nullopt;
  // Every row's pi in the order of the rows (reading the design's rows in the order of the scores missed
  // the cache at every row): from the design's differences (one exp per row) where it has them.
  std::vector<double> pi(n);
  if (beta.differences) {
    const std::size_t width = 1 + beta.D;
    for (std::size_t j = 0; j < n; ++j) {
      const double* row = beta.differences->data() + j * width;
      double margin = row[0];
      for (std::size_t d = 0; d < beta.D; ++d) margin += row[1 + d] * theta[d];
      pi[j] = 1 / (1 + std::exp(-margin));
    }
  } else {
    std::vector<double> prob(2 * n);
    predict_logit(beta, theta, order.row, prob.data());
    for (std::size_t k = 0; k < n; ++k) pi[order.row[k]] = prob[2 * k + 1];
  }
  // Each training row in turn: the sums over the rows above it, then the row itself added.
  std::optional<double> best;
  double u = 0, v = 0, above = 0, most = 0, last = 0;  // above: the positives above; last: the last row's logit
  std::size_t rows_above = 0;
  for (std::size_t k = 0; k < n && rows_above + side <= m; ++k) {
    if (order.fold[k] == f) continue;
    const double z = order.logit[k], b = order.label[k], rows = static_cast<double>(rows_above);
    const bool labels_apart = std::min({above, rows - above, positives - above,
                                        static_cast<double>(m) - rows - (positives - above)}) < kMinStepLabels;
    if (rows_above >= side && z != last && v > 0 && !labels_apart && u * u / v > most)
      most = u * u / v, best = 0.5 * (last + z);
    const double p = pi[order.row[k]];
    u += b - p;
    v += p * (1 - p);
    above += b;
    last = z;
    ++rows_above;
  }
  return best;
}

// The step candidate of a one-dimensional problem: its Beta pilot with a jump (step_design()), each fold's
// at the threshold step_threshold() finds under that fold's smooth fit (`theta`, under `beta`, best with
// its rows cached). Fitted and predicted as crossfit_pilot() does; nullopt where a fold has no threshold.
std::optional<Problem> step_candidate(const Problem& pr, const LogitDesign& beta,
                                      const std::vector<std::vector<double>>& theta,
                                      const std::vector<std::size_t>& fold_of_input, const TileKernels& kernels,
                                      int threads, const RunControl* control, Communicator* comm) {
  const LabelledPoints& lp = *pr.lp;
  const std::size_t n = lp.points.n;
  auto logits = std::make_shared<std::vector<double>>(n);
  for (std::size_t j = 0; j < n; ++j) (*logits)[j] = logit(lp.points.x(j, 0), lp.points.x(j, 1));
  const ByScore order(pr, *logits, fold_of_input);
  std::vector<LogitDesign> designs;
  for (std::size_t f = 0; f < theta.size(); ++f) {
    const std::optional<double> at = step_threshold(order, beta, theta[f], f);
    if (!at) return std::nullopt;
    designs.push_back(step_design(beta, logits, *at));
  }
  Problem candidate = make_problem(lp);
  std::vector<double> start = theta[0];
  start.push_back(0.0);  // the jump's parameter, the design's last feature
  crossfit_pilot(candidate, FoldDesigns(std::move(designs)), kernels, fold_of_input, theta.size(), threads, control,
                 comm, start);
  return candidate;
}

// The kernel problems of `in` with their cross-fitted pilots; on a ring (own_rows: canonical only), of
// this rank's rows, fitted on every rank's.
std::vector<Problem> piloted_problems(const Prepared& in, const EstimateOptions& options, const RingLayout* ring) {
  const std::vector<std::size_t> folds = in.folds.empty() ? folds_of(in.pred, options.folds, ring) : in.folds;
  std::vector<Problem> problems;
  for (const LabelledPoints& lp : in.problems) problems.push_back(make_problem(lp));
  if (options.type == CalibrationType::canonical) {
    const std::vector<LabelledPoints> top = make_problems(in.pred, CalibrationType::top_label);
    const std::vector<std::vector<double>> features = top_label_features(top[0], folds, options.folds, in.plan, ring);
    Communicator* ranks = ring ? ring->comm : nullptr;
    problems[0].saturated = any_saturated(in.problems, ranks);
    const auto spline = canonical_spline(in.pred, problems[0].saturated, ranks);
    const std::size_t K = in.pred.k;
    const LogitDesign structured = canonical_design(in.problems[0], in.pred, spline, K <= kMaxClassBiases);
    // Each fold's top-label adjustment of a design (it rewrites feature 1 of each class, D apart): formed
    // once for the designs of the structured one's D.
    const auto adjust = top_label_adjustment(in.problems[0], in.pred, structured, features);
    auto adjust_of = [&](const LogitDesign& design) {
      return design.D == structured.D ? adjust : top_label_adjustment(in.problems[0], in.pred, design, features);
    };
    // Fits a design's pilot into pr from `start`; returns its first fold's parameters.
    auto fit = [&](Problem& pr, const LogitDesign& design, std::span<const double> start) {
      const FoldDesigns designs(design, adjust_of(design));
      return (ring ? crossfit_pilot_on_ring(pr, designs, *in.plan.kernels, folds, options.folds, in.plan.control,
                                            ring->comm, start)
                   : crossfit_pilot(pr, designs, *in.plan.kernels, folds, options.folds, in.plan.threads,
                                    in.plan.control, in.plan.communicator, start))[0];
    };
    auto log_loss = [&](const Problem& pr) {
      return held_out_log_loss(pr, ring ? ring->comm : nullptr, ring ? ring->n : in.pred.n);
    };
    // The structured pilot, or a candidate where that predicts the held-out labels better: one with a full
    // matrix (K <= kMaxMatrixClasses), one with a bias per class where it is the top class (K <=
    // kMaxTopBiasClasses), or one with per-class biases (64 < K <= 128); the lowest held-out log-loss is
    // kept. Each candidate's fit starts from the structured one's (its added parameters at 0): Newton then
    // needs fewer steps.
    const std::vector<double> fitted = fit(problems[0], structured, {});
    const std::string_view forced = in.plan.pilot;
    auto keep_if_better = [&](const LogitDesign& design, const char* name) {
      if (!forced.empty() && forced != name) return;
      Problem candidate = make_problem(in.problems[0]);
      fit(candidate, design, extended_start(fitted, structured, design));
      if (!forced.empty() || log_loss(candidate) < log_loss(problems[0])) {
        problems[0].pilot = std::move(candidate.pilot);
        problems[0].map = name;
      }
    };
    if (K <= kMaxMatrixClasses)
      keep_if_better(canonical_design(in.problems[0], in.pred, spline, true, kMatrixPenalty), "full-matrix");
    if (K <= kMaxTopBiasClasses)
      keep_if_better(canonical_design(in.problems[0], in.pred, spline, true, 0, true), "top-class-biases");
    if (K > kMaxClassBiases && K <= kMaxBiasCandidate)
      keep_if_better(canonical_design(in.problems[0], in.pred, spline, true), "class-biases");
  } else {
    ECEKDE_ASSERT(!ring);
    // One problem per task (marginal has K of them; one problem's folds are fitted on the threads instead);
    // each fit is serial, so the pilots do not depend on the thread count. Split across ranks, each rank
    // fits its share of the problems (marginal), or of the folds (one problem: its one task runs inline, on
    // the calling thread, as combining needs).
    const std::size_t n = in.pred.n;
    Communicator* comm = in.plan.communicator;
    const bool by_problem = comm && problems.size() > 1;
    const int fold_threads = problems.size() == 1 ? in.plan.threads : 1;
    // One answer for every class: the pooled pilot's parameters are predicted at each class's rows.
    const bool saturated = any_saturated(in.problems, in.plan.owned_problems ? comm : nullptr);
    const Share mine = share_of(problems.size(), by_problem ? comm : nullptr);
    const double counted = static_cast<double>(problems.size()) / static_cast<double>(std::max<std::size_t>(mine.size(), 1));
    WorkLedger::start(in.plan.control, own_pilots_work(problems.size(), n) + pooled_work(problems.size(), n, in.plan));
    // Marginal: the pooled fit, the same on every rank (its pairs are every rank's), and each pair's
    // -log of its held-out pooled pilot at its label.
    std::optional<PooledPairs> pooled;
    std::vector<std::vector<double>> pooled_theta;
    std::vector<double> pair_loss;
    if (problems.size() > 1) {
      pooled = pooled_pairs(in.problems, folds, n, in.plan, saturated);
      Problem pairs = make_problem(pooled->lp);
      pooled_theta = crossfit_pilot(pairs, FoldDesigns(beta_design(pooled->lp, pooled->spline, std::log(pooled->stride))),
                                    *in.plan.kernels, pooled->folds, options.folds, in.plan.threads, in.plan.control);
      pair_loss.resize(pooled->lp.points.n);
      for (std::size_t i = 0; i < pair_loss.size(); ++i)
        pair_loss[pooled->lp.original[i]] = pooled_pair_loss(pairs, i, pooled->stride);
      WorkLedger::done(in.plan.control, pooled_work(problems.size(), n, in.plan));
    }
    // The held-out log-loss of each class's own pilot, of the pooled one and (K <= kMaxBiasCandidate) of the
    // pooled one with the class's intercept and of the class's own with a step over the class's pairs (all
    // its rows where n (K - 1) <= plan.pooled_negatives; a sampled negative pair counts stride times; one
    // problem: its rows), summed over the classes: the pilot of the lowest sum is every class's. Over the
    // pairs, the pooled side is already known. One choice for all classes, not one per class: each choice
    // reads the labels once, and K of them (each keeping the pilot that agrees better with its class's
    // labels) made calibrated K = 100 models read marginal CE_1 = 0.048 instead of 0.012.
    const bool intercepts = pooled && problems.size() <= kMaxBiasCandidate;
    const bool steps = tries_steps(problems.size());
    std::vector<double> own_loss(problems.size(), 0.0), pooled_loss(problems.size(), 0.0),
        intercept_loss(problems.size(), 0.0), step_loss(problems.size(), 0.0);
    std::vector<std::vector<double>> with_intercept(problems.size()), with_step(problems.size());
    parallel_for(
        mine.size(), in.plan.threads,
        [&](std::size_t own, int) {
          const std::size_t q = mine.begin + own;
          Problem& pr = problems[q];
          LogitDesign beta = beta_design(*pr.lp, score_spline(*pr.lp, saturated));
          cache_rows(beta, n, kMaxCachedDesign);  // read by the fits, the step's threshold and its design
          Communicator* fold_ranks = by_problem ? nullptr : comm;
          const std::vector<std::vector<double>> theta = crossfit_pilot(
              pr, FoldDesigns(beta), *in.plan.kernels, folds, options.folds, fold_threads, in.plan.control, fold_ranks);
          std::optional<Problem> shifted, stepped;
          if (intercepts) {
            shifted = make_problem(*pr.lp);
            shifted->pilot = pooled_with_intercept(pr, beta_design(*pr.lp, pooled->spline), pooled_theta, folds,
                                                   *in.plan.kernels, in.plan.control);
          }
          if (steps)
            stepped = step_candidate(pr, beta, theta, folds, *in.plan.kernels, fold_threads, in.plan.control,
                                     fold_ranks);
          const Problem& with_jump = stepped ? *stepped : pr;  // no threshold: the step candidate is the own map
          for (std::size_t pair = pooled ? pooled->first[q] : 0; pooled && pair < pooled->first[q + 1]; ++pair) {
            const std::size_t i = pooled->position[pair];
            const double count = pr.labels[i] ? 1 : pooled->stride;
            own_loss[q] += count * pilot_log_loss(pr, i);
            pooled_loss[q] += pair_loss[pair];
            if (shifted) intercept_loss[q] += count * pilot_log_loss(*shifted, i);
            step_loss[q] += count * pilot_log_loss(with_jump, i);
          }
          for (std::size_t i = 0; !pooled && i < n; ++i) {
            own_loss[q] += pilot_log_loss(pr, i);
            step_loss[q] += pilot_log_loss(with_jump, i);
          }
          if (shifted) with_intercept[q] = std::move(shifted->pilot);
          if (stepped) with_step[q] = std::move(stepped->pilot);
          WorkLedger::done(in.plan.control, own_pilots_work(problems.size(), n) / static_cast<double>(problems.size()) * counted);
        },
        in.plan.control);
    if (by_problem)
      for (std::vector<double>* loss : {&own_loss, &pooled_loss, &intercept_loss, &step_loss})
        combine_shares(comm, *loss);
    auto total = [](const std::vector<double>& loss) { return std::accumulate(loss.begin(), loss.end(), 0.0); };
    // The candidates in turn, each kept where its sum is lower than every one before it.
    enum class Pilot { own, step, pooled, intercepts } kept = Pilot::own;
    const char* kept_name = problems[0].map;  // the own maps'
    double lowest = total(own_loss);
    const std::string_view forced = in.plan.pilot;
    for (const auto& [candidate, name, offered, loss] :
         {std::tuple{Pilot::step, "beta-step", steps, &step_loss},
          std::tuple{Pilot::pooled, "pooled-beta", pooled.has_value(), &pooled_loss},
          std::tuple{Pilot::intercepts, "pooled-intercepts", intercepts, &intercept_loss}})
      if (offered && (forced.empty() ? total(*loss) < lowest : forced == name))
        kept = candidate, kept_name = name, lowest = total(*loss);
    if (kept == Pilot::step) {
      for (std::size_t q = mine.begin; q < mine.end; ++q)
        if (!with_step[q].empty()) problems[q].pilot = std::move(with_step[q]);
    } else if (kept == Pilot::intercepts) {
      for (std::size_t q = mine.begin; q < mine.end; ++q) problems[q].pilot = std::move(with_intercept[q]);
    } else if (kept == Pilot::pooled) {
      parallel_for(mine.size(), in.plan.threads, [&](std::size_t own, int) {
        Problem& pr = problems[mine.begin + own];
        predict_folds(pr, beta_design(*pr.lp, pooled->spline), pooled_theta, folds);
      });
    }
    for (Problem& pr : problems) pr.map = kept_name;
    if (by_problem && !in.plan.owned_problems)  // owned: each pilot stays with its problem's owner
      for (std::size_t q = 0; q < problems.size(); ++q) {
        if (q < mine.begin || q >= mine.end) problems[q].pilot.assign(n, 0.0);
        combine_shares(comm, problems[q].pilot);
      }
  }
  return problems;
}

}  // namespace

std::vector<std::vector<double>> crossfit_pilots(const Prepared& in, const EstimateOptions& options) {
  std::vector<std::vector<double>> out;
  for (const Problem& pr : piloted_problems(in, options, nullptr)) {
    const std::size_t n = pr.pilot.empty() ? 0 : pr.lp->points.n;  // owned: the other ranks' problems have none
    std::vector<double> pilot(n * pr.depth);
    for (std::size_t j = 0; j < n; ++j)
      std::copy_n(pr.pilot.begin() + static_cast<std::ptrdiff_t>(j * pr.depth), pr.depth,
                  pilot.begin() + static_cast<std::ptrdiff_t>(pr.lp->original[j] * pr.depth));
    out.push_back(std::move(pilot));
  }
  return out;
}

Result crossfit_estimate(const Prepared& in, const EstimateOptions& options, const RingLayout* ring) {
  if (!ring) check_same_options(options, in);  // a ring's ranks hold different rows: checked by its caller
  Communicator* ranks = ring ? ring->comm : nullptr;  // own_rows: the sums over rows are combined over these
  Result r;
  r.estimator = Estimator::crossfit;
  r.type = options.type;
  r.p = options.p;
  r.n = ring ? ring->n : in.pred.n;
  r.k = in.pred.k;
  const std::size_t n = r.n, own = in.pred.n;
  const std::size_t max_rows = options.bandwidth_selection.max_rows;
  std::vector<double> grid = options.bandwidth ? std::vector<double>{*options.bandwidth}
                             : options.bandwidth_selection.grid.empty() ? residual_grid()
                                                                        : options.bandwidth_selection.grid;
  for (double h : grid)
    if (!(std::isfinite(h) && h > 0)) fail_with("bandwidth grid values must be finite numbers > 0, got ", h);
  std::sort(grid.begin(), grid.end());

  const LabelledPoints& first = in.problems.front();
  double work = fit_work(in.problems.size(), own, first.points.dim, first.one_dimensional ? 1 : first.classes,
                         grid.size(), max_rows, in.plan);
  work += options.type == CalibrationType::canonical ? pilot_work(1, own)
                                                     : own_pilots_work(in.problems.size(), own) +
                                                           pooled_work(in.problems.size(), own, in.plan);
  const PlannedWork planned(in.plan.control, work);

  std::vector<Problem> problems = piloted_problems(in, options, ring);
  // Canonical with saturated probabilities: the corrections' kernel reads them at kFeatureFloor, as the
  // pilot does. With zeros at 1e-308 the kernel between rows whose zeros differ is exp(-708 f_ik / h), so
  // no bandwidth of the grid was flat: each row's correction was the mean residual of the few rows with
  // its own zeros (210 patterns at K = 10), whose noise flipped signs of g - f (a tempered truncated
  // softmax read canonical CE_1 20% low, 9% with the floor; docs/validation.md, 7.12). The corrections'
  // kernel only smooths residuals; the paper's estimator keeps its own.
  LabelledPoints floored;
  if (problems[0].saturated) {
    floored = *problems[0].lp;
    const double floor = std::log(kFeatureFloor);
    for (double& v : floored.points.log_x) v = std::max(v, floor);
    problems[0].lp = &floored;
  }
  Fit fit = ring ? ring_fit_corrections(problems[0], grid, max_rows, *ring, in.plan)
                 : fit_corrections(problems, grid, max_rows, in.plan, n);
  r.bandwidth = fit.selection.bandwidth;
  r.pilot = problems[0].map;
  if (!options.bandwidth) r.selection = std::move(fit.selection);

  const double weight = problem_weight(options.type);
  // Owned problems (own rows' marginal): each rank holds its share of the classes over every row, and
  // the per-row terms go from rank to rank, each adding its classes in turn: the order of one process.
  const bool owned = in.plan.owned_problems;
  const Share mine = owned ? share_of(problems.size(), in.plan.communicator) : Share{0, problems.size()};
  std::vector<double> term(own, 0.0), influence(own, 0.0), class_ce(problems.size(), 0.0);
  auto add_own_classes = [&](std::span<double> terms) {
    std::span<double> t = terms.first(own), i = terms.subspan(own);
    for (std::size_t q = mine.begin; q < mine.end; ++q) {
      if (options.type == CalibrationType::marginal) {
        std::vector<double> class_term(own, 0.0), unused(own, 0.0);
        add_row_terms(problems[q], fit.corrected[q], options.p, weight, class_term, unused);
        class_ce[q] = total_over_ranks(ranks, class_term) / static_cast<double>(n);
      }
      add_row_terms(problems[q], fit.corrected[q], options.p, weight, t, i);
    }
  };
  if (!owned) {
    std::vector<double> both(2 * own, 0.0);
    add_own_classes(both);
    std::copy_n(both.begin(), own, term.begin());
    std::copy_n(both.begin() + static_cast<std::ptrdiff_t>(own), own, influence.begin());
  } else {
    const std::vector<double> both = in_rank_order(in.plan.communicator, 2 * own, add_own_classes);
    std::copy_n(both.begin(), own, term.begin());
    std::copy_n(both.begin() + static_cast<std::ptrdiff_t>(own), own, influence.begin());
    combine_shares(in.plan.communicator, class_ce);
  }
  if (options.type == CalibrationType::marginal) r.class_ce_pow_p = class_ce;
  const double raw = total_over_ranks(ranks, term) / static_cast<double>(n);
  const double mean_influence = total_over_ranks(ranks, influence) / static_cast<double>(n);
  for (double& v : influence) v = (v - mean_influence) * (v - mean_influence);
  r.standard_error = std::sqrt(total_over_ranks(ranks, influence) / static_cast<double>(n - 1) / static_cast<double>(n));
  r.ce_pow_p = std::max(raw, 0.0);
  r.ce = root_of(r.ce_pow_p, options.p);
  const double z = normal_quantile(options.level);
  r.ce_pow_p_interval = Bounds{options.level, std::max(raw - z * r.standard_error, 0.0), std::max(raw + z * r.standard_error, 0.0)};
  r.ce_interval = Bounds{options.level, root_of(r.ce_pow_p_interval->lower, options.p),
                         root_of(r.ce_pow_p_interval->upper, options.p)};

  // What a reader must know before trusting the figure.
  if (options.type == CalibrationType::canonical && n < 20 * (r.k + 2))
    r.warnings.push_back("only " + count_text(n, "sample") + " for " + std::to_string(r.k) +
                         " classes: the recalibration map behind the canonical estimate is poorly determined");
  // Per problem: its positives, negatives and median neighbours (owned: from each problem's owner).
  std::vector<double> facts(3 * problems.size(), 0.0);
  for (std::size_t q = mine.begin; q < mine.end; ++q) {
    const LabelledPoints& lp = *problems[q].lp;
    if (lp.one_dimensional) {
      ECEKDE_ASSERT(!ring);  // the ring runs canonical problems only
      facts[3 * q] = static_cast<double>(lp.class_begin[2] - lp.class_begin[1]);
      facts[3 * q + 1] = static_cast<double>(lp.class_begin[1]);
    }
    facts[3 * q + 2] = median(fit.corrected[q].neighbours, ranks, n);
  }
  if (owned) combine_shares(in.plan.communicator, facts);
  std::vector<std::pair<std::size_t, std::string>> rare;  // (class, "3 positives"): one line for them all
  bool few_neighbours = false;
  for (std::size_t q = 0; q < problems.size(); ++q) {
    const LabelledPoints& lp = *problems[q].lp;
    if (lp.one_dimensional) {
      const auto positives = static_cast<std::size_t>(facts[3 * q]), negatives = static_cast<std::size_t>(facts[3 * q + 1]);
      const std::size_t fewest = std::min(positives, negatives);
      if (fewest < 10) {
        const std::string count = count_text(fewest, positives < negatives ? "positive" : "negative");
        if (options.type == CalibrationType::marginal)
          rare.emplace_back(q, count);
        else
          r.warnings.push_back("the labels have only " + count + ": its calibration error is poorly determined");
      }
    }
    const double neighbours = facts[3 * q + 2];
    if (neighbours < kFewNeighbours && !few_neighbours) {  // said once, for the first problem it concerns
      few_neighbours = true;
      r.warnings.push_back("the kernel estimate rests on few neighbours (median " +
                           std::to_string(static_cast<int>(std::round(neighbours))) + " at h = " +
                           std::to_string(r.bandwidth) + "): the figure is not reliable");
    }
  }
  if (rare.size() == 1) {
    r.warnings.push_back("class " + std::to_string(rare[0].first) + " has only " + rare[0].second +
                         ": its calibration error is poorly determined");
  } else if (!rare.empty()) {  // one line, however many classes (K = 1,000 gave a thousand lines)
    constexpr std::size_t kListed = 5;
    std::string line = std::to_string(rare.size()) + " classes have fewer than 10 positives or negatives (";
    for (std::size_t i = 0; i < std::min(rare.size(), kListed); ++i)
      line += (i ? ", class " : "class ") + std::to_string(rare[i].first) + ": " + rare[i].second;
    if (rare.size() > kListed) line += ", and " + std::to_string(rare.size() - kListed) + " more";
    r.warnings.push_back(line + "): their calibration errors are poorly determined");
  }
  return r;
}

}  // namespace ecekde::detail
