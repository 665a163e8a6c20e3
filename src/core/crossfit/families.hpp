// The pilot families (the estimator's stages: core/crossfit.cpp), a file each: a family is its design
// (LogitDesign: each row's offsets and features), fitted on each fold's training rows and predicted at its
// held-out rows by crossfit_pilot() (pilot_fit.hpp) unless it says otherwise. The registry (pilots.cpp)
// lists the candidates and keeps the one of lowest held-out log-loss; a one-dimensional family offers
// itself there through the interface below (ScoreStage, OwnFit), a canonical one through its design.
//   family_beta.cpp       beta: Beta calibration bent by a spline (a one-dimensional problem's own map)
//   family_step.cpp       beta-step: the Beta map with a jump at a threshold found in each fold
//   family_pooled.cpp     pooled-beta, pooled-intercepts: marginal's one map fitted on every class's pairs
//   family_canonical.cpp  structured, full-matrix, top-class-biases, class-biases: the canonical designs
//   family_trees.cpp      trees: boosted trees on log f added to the kept canonical pilot (no design)
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/crossfit/problem.hpp"
#include "core/logit_fit.hpp"

namespace ecekde::detail {

struct RingLayout;
struct PooledFit;

// ---- the one-dimensional families' interface (their registry: pilots.cpp)

// What a one-dimensional candidate is formed from, the same for each of its problems: how many there are
// (one, or marginal's K), each input row's fold, the plan, how one problem's folds are run (on
// `fold_threads`; split over `fold_ranks` where the ranks split the folds, not the problems) and
// marginal's pooled fit (null for one problem).
struct ScoreStage {
  std::size_t problems;
  const std::vector<std::size_t>& folds;
  std::size_t fold_count;
  const SweepPlan& plan;
  int fold_threads;
  Communicator* fold_ranks;
  const PooledFit* pooled;
};

// One problem's own pilot (the beta family, pr.pilot): its Beta design (rows cached) and each fold's
// parameters, which a candidate may start from.
struct OwnFit {
  const Problem& pr;
  const LogitDesign& beta;
  const std::vector<std::vector<double>>& theta;
};

// ---- beta (family_beta.cpp)

// The spline in logit(s) of a one-dimensional problem, over its scores (no labels), those saturated left out
// where `saturated` (any_saturated() over every problem whose pilots share parameters with this one's).
std::shared_ptr<const LogitSpline> score_spline(const LabelledPoints& lp, bool saturated,
                                                Communicator* ranks = nullptr);

// The most features a Beta design has (beta_design(): log s, log(1 - s), the intercept, the spline and two
// saturated indicators), which a step design (step_design()) holds in a buffer of its own.
inline constexpr std::size_t kMaxBetaFeatures = 3 + LogitSpline::kFunctions + 2;

// Beta calibration of a one-dimensional problem, bent by a spline in logit(s):
// logit P(b = 1 | s) = logit(s) + a log s + c log(1 - s) + d + sum_f e_f N_f(logit s) (+ a fixed
// `log_odds_offset`: a fit on a sample that keeps 1 in m negatives adds log m, then predicts without it).
// With a saturated input (the spline says so), two more terms u [s saturated] + v [1 - s saturated] set the
// level of those scores, whose spline terms are 0 and whose offsets are floored at kFeatureFloor.
LogitDesign beta_design(const LabelledPoints& lp, std::shared_ptr<const LogitSpline> spline, double log_odds_offset = 0);

// ---- beta-step (family_step.cpp)

// The step candidate of a one-dimensional problem: its Beta pilot with a jump (step_design()), each fold's
// at the threshold step_threshold() finds under that fold's smooth fit (own.theta under own.beta). Fitted
// and predicted as crossfit_pilot() does; nullopt where a fold has no threshold.
std::optional<Problem> step_candidate(const OwnFit& own, const ScoreStage& stage);

// ---- pooled-beta and pooled-intercepts (family_pooled.cpp)

// Marginal's pooled pilot (docs/history.md, 7.10): one Beta map with its spline, fitted on the (row,
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

// Marginal's pooled pilot (above) is fitted on every positive (row, class) pair, a row and its label's
// class, and on at most about plan.pooled_negatives negative ones: above that, on a label-free sample of
// them, one in pooled_stride(). The positives carry what the fit learns (1 in K pairs); a sample of all
// pairs kept about 500 of them at n = 10,000 and at n = 50,000 alike (K = 1,000).
std::size_t pooled_stride(std::size_t n, std::size_t k, const SweepPlan& plan);

// The pooled fit: the Beta map cross-fitted on the pairs of the n rows' `problems` (`saturated`:
// any_saturated() over every class), and each pair's -log of its held-out pilot at its label, with the
// fit's sampling offset (log stride) taken back out, times the number of pairs it stands for: a class's
// sum over its pairs estimates its sum over all n rows.
struct PooledFit {
  PooledPairs pairs;
  std::vector<std::vector<double>> theta;  // each fold's parameters
  std::vector<double> pair_loss;           // class-then-row order, as pairs.first
};

PooledFit fit_pooled(const std::vector<LabelledPoints>& problems, const std::vector<std::size_t>& folds,
                     std::size_t n, std::size_t fold_count, const SweepPlan& plan, bool saturated);

// pooled-beta: class q's held-out log-loss, the sum of its pairs' pair_loss (read off the pooled fit, with
// no pilot of the class's own), and its pilot, each row's under its fold's parameters.
double pooled_beta_loss(std::size_t q, const ScoreStage& stage);
void pooled_beta_pilot(Problem& pr, const ScoreStage& stage);

// pooled-intercepts: a class's pilot from the pooled map plus an intercept of the class's own
// (docs/history.md, 7.12): in fold f, logit pi_j = the pooled map's log-odds at s_j under fold f's
// parameters + b_f, b_f fitted on the class's training rows of fold f with those log-odds as offsets; each
// row's pilot is its fold's. A class has one parameter here instead of its own map's eight, so a per-class
// shift (class biases, label shift) is followed where the class's positives are too few for a map of its
// own.
std::optional<Problem> pooled_intercepts_candidate(const OwnFit& own, const ScoreStage& stage);

// ---- the canonical designs (family_canonical.cpp)

// The canonical pilot's spline in logit f, over every probability of the input (no labels), those saturated
// left out where `saturated`.
std::shared_ptr<const LogitSpline> canonical_spline(const CheckedPredictions& pred, bool saturated,
                                                    Communicator* ranks = nullptr);

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
                             bool top_biases = false);

// A candidate design's starting parameters from a fitted design's (theta): the fitted design's features
// (the candidate's own after them at 0), its class biases where both have them, and the rest at 0.
std::vector<double> extended_start(std::span<const double> theta, const LogitDesign& from, const LogitDesign& to);

// Each fold's adjustment of the canonical designs (LogitDesign::adjust: their last feature, the same for
// every candidate): t_j from that fold's top-label feature (input row order), log t - log s for the top
// class s and log(1 - t) - log(rest) for the others.
std::vector<std::function<void(std::size_t, double*)>> top_label_adjustment(
    const LabelledPoints& lp, const CheckedPredictions& pred, const std::vector<std::vector<double>>& features);

// The canonical pilot's top-label feature for each fold's fit: the one-dimensional problem's pilot fitted
// without that fold, at every row (input row order). Not its kernel-corrected estimate: a row's
// leave-one-out correction is its neighbours' labels without its own, so among rows with the same
// prediction the feature took one value per label, and a pilot fitted on such rows learned its labels
// from it (perfect separation) and passed each held-out row's own label into its neighbours' pilots. With
// few distinct predictions canonical figures then read up to 5 times their truth (docs/validation.md,
// 7.8). Nor one cross-fitted value per row: a training row's value was then fitted on the held-out fold's
// labels, which the canonical fit learned back (tied rows spread over the folds read a calibrated
// three-cell model at CE_1 = 0.08). Fold f's canonical fit sees no label of fold f, directly or not.
// Fitted on the rows `trains` marks (empty: every row), as the canonical fits are.
std::vector<std::vector<double>> top_label_features(const LabelledPoints& lp, const std::vector<std::size_t>& folds,
                                                    std::size_t fold_count, const SweepPlan& plan,
                                                    const RingLayout* ring, std::span<const char> trains = {});

// ---- trees (family_trees.cpp)

// The canonical pilot's nonparametric candidate (docs/estimator.md, section 2; issue 48): in each fold,
// rounds of boosted regression trees (one per class, depth 3, on log f cut into 32 quantile bins) added to
// the logits of `base`'s model of that fold, learnt from the fold's training rows by Newton steps of the
// softmax log-loss. Their count, the same in every fold, is the one of lowest log-loss on each fold's
// training rows of the next fold when learnt from its others (none where no round lowers it). A parametric
// family follows a map of a few parameters everywhere; the trees follow one confined to a region of the
// simplex (a bump, a step in one class's probability, a ripple). Offered up to kMaxTreeClasses classes (a
// round costs about 3 n K^2 histogram additions) and kMaxTreeRows rows (every fold's model is kept as a
// table of n K probabilities), with at least 3 folds (the rounds are counted on another fold's rows).
inline constexpr std::size_t kMaxTreeClasses = 20;
inline constexpr std::size_t kMaxTreeRows = 200000;
bool offers_trees(std::size_t n, std::size_t classes, std::size_t folds);

// The candidate's pilot and fold models (each fold's at every row, as a table), from `base`'s fitted fold
// models; `trains` marks the rows the fits may learn from (fold_rows()). On a ring (each rank its own
// rows) every sum the trees are grown from is every rank's.
Problem trees_candidate(const Problem& base, const std::vector<std::size_t>& fold_of_input, std::size_t folds,
                        std::span<const char> trains, const SweepPlan& plan, const RingLayout* ring);

}  // namespace ecekde::detail
