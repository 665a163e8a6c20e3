// The pilot families' registry: which candidates each problem tries beside its base pilot (canonical: the
// structured design; one-dimensional: each class's own Beta map), and the selection rule, the lowest
// held-out log-loss (each row's pilot fitted without its fold, so the loss is cross-validated). A family's
// design (and its fit, where crossfit_pilot()'s is not enough) lives in a file of its own (families.hpp);
// a canonical family is then one line of kCanonicalCandidates, a one-dimensional one a line of
// kScoreCandidates.
#include "core/crossfit/pilots.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>
#include <utility>

#include "core/crossfit.hpp"
#include "core/crossfit/families.hpp"
#include "core/crossfit/folds.hpp"
#include "core/crossfit/pilot_fit.hpp"
#include "core/crossfit/work.hpp"
#include "core/distributed.hpp"
#include "core/messages.hpp"
#include "core/parallel.hpp"
#include "core/ring.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

namespace {

// The canonical candidate fitted last, on the pilot kept before it (families.hpp).
constexpr const char* kTrees = "trees";

// The canonical pilot's per-class biases: always up to kMaxClassBiases classes; up to kMaxBiasCandidate a
// pilot without them and one with them are both fitted and the better kept (docs/history.md, 7.10): at
// K = 100, n = 3,000, 100 biases fitted on 30 positives each flip the sign of small components where the
// truth has no biases. Their Hessian costs K^2 / 2 products per row and Newton step.
constexpr std::size_t kMaxClassBiases = 64;
constexpr std::size_t kMaxBiasCandidate = 128;

// The canonical pilot's full-matrix candidate (docs/history.md, 7.9): its ridge on W (mean log-loss
// scale), and the most classes it is tried for. Its Hessian costs K^4 / 2 products per row and Newton step:
// at n = 10,000 it adds 17-20% to the estimate's time at K = 10 and 25-40% at K = 16 (7.15); at K = 12 a
// random matrix map read canonical CE_2^2 21% low without it, its intervals missing the truth.
constexpr double kMatrixPenalty = 3e-3;
constexpr std::size_t kMaxMatrixClasses = 16;
// The canonical pilot's top-class-bias candidate (docs/history.md, 7.14, 7.16): the most classes it is
// tried for, as for the class biases (with which it is fitted): those cost K^2 / 2 products per row and
// Newton step, the top biases D + K (LogitDesign::top).
constexpr std::size_t kMaxTopBiasClasses = kMaxBiasCandidate;

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

// The canonical candidates beside the structured pilot, in the order they are tried (each offered for the
// input's number of classes).
struct CanonicalCandidate {
  const char* name;  // Result::pilot
  bool (*offered)(std::size_t classes);
  LogitDesign (*design)(const LabelledPoints& lp, const CheckedPredictions& pred,
                        std::shared_ptr<const LogitSpline> spline);
};

constexpr CanonicalCandidate kCanonicalCandidates[] = {
    {"full-matrix", [](std::size_t K) { return K <= kMaxMatrixClasses; },
     [](const LabelledPoints& lp, const CheckedPredictions& pred, std::shared_ptr<const LogitSpline> spline) {
       return canonical_design(lp, pred, std::move(spline), true, kMatrixPenalty);
     }},
    {"top-class-biases", [](std::size_t K) { return K <= kMaxTopBiasClasses; },
     [](const LabelledPoints& lp, const CheckedPredictions& pred, std::shared_ptr<const LogitSpline> spline) {
       return canonical_design(lp, pred, std::move(spline), true, 0, true);
     }},
    {"class-biases", [](std::size_t K) { return K > kMaxClassBiases && K <= kMaxBiasCandidate; },
     [](const LabelledPoints& lp, const CheckedPredictions& pred, std::shared_ptr<const LogitSpline> spline) {
       return canonical_design(lp, pred, std::move(spline), true);
     }},
};

// The canonical problem's pilot (on a ring, of this rank's rows, fitted on every rank's).
void select_canonical_pilot(Problem& canonical, const Prepared& in, const EstimateOptions& options,
                            const std::vector<std::size_t>& folds, const RingLayout* ring) {
  const std::vector<LabelledPoints> top = make_problems(in.pred, CalibrationType::top_label);
  const std::vector<char> trains = pilot_training_rows(in.pred, ring ? ring->n : in.pred.n, ring);
  const std::vector<std::vector<double>> features =
      top_label_features(top[0], folds, options.folds, in.plan, ring, trains);
  Communicator* ranks = ring ? ring->comm : nullptr;
  canonical.saturated = any_saturated(in.problems, ranks);
  const auto spline = canonical_spline(in.pred, canonical.saturated, ranks);
  const std::size_t K = in.pred.k;
  const LogitDesign structured = canonical_design(in.problems[0], in.pred, spline, K <= kMaxClassBiases);
  // Each fold's top-label adjustment (it writes the last feature of every class, the same L values in
  // every candidate's rows): formed once.
  const auto adjust = top_label_adjustment(in.problems[0], in.pred, features);
  // Fits a design's pilot into pr from `start`; returns its first fold's parameters.
  auto fit = [&](Problem& pr, const LogitDesign& design, std::span<const double> start) {
    const FoldDesigns designs(design, adjust);
    return (ring ? crossfit_pilot_on_ring(pr, designs, *in.plan.kernels, folds, options.folds, in.plan.control,
                                          ring->comm, start, trains)
                 : crossfit_pilot(pr, designs, *in.plan.kernels, folds, options.folds, in.plan.threads,
                                  in.plan.control, in.plan.communicator, start, trains))[0];
  };
  auto log_loss = [&](const Problem& pr) {
    return held_out_log_loss(pr, ring ? ring->comm : nullptr, ring ? ring->n : in.pred.n);
  };
  // The structured pilot, or a candidate where that predicts the held-out labels better: one with a full
  // matrix (K <= kMaxMatrixClasses), one with a bias per class where it is the top class (K <=
  // kMaxTopBiasClasses), or one with per-class biases (64 < K <= 128); the lowest held-out log-loss is
  // kept. Each candidate's fit starts from the structured one's (its added parameters at 0): Newton then
  // needs fewer steps.
  const std::vector<double> fitted = fit(canonical, structured, {});
  const std::string_view forced = in.plan.pilot;
  auto keep_if_better = [&](const LogitDesign& design, const char* name) {
    if (!forced.empty() && forced != name) return;
    Problem candidate = make_problem(in.problems[0]);
    fit(candidate, design, extended_start(fitted, structured, design));
    if (!forced.empty() || log_loss(candidate) < log_loss(canonical)) {
      canonical.pilot = std::move(candidate.pilot);
      canonical.folds = std::move(candidate.folds);
      canonical.map = name;
    }
  };
  for (const CanonicalCandidate& candidate : kCanonicalCandidates)
    if (candidate.offered(K)) keep_if_better(candidate.design(in.problems[0], in.pred, spline), candidate.name);
  // Last, the trees on the kept pilot.
  if (offers_trees(ring ? ring->n : in.pred.n, K, options.folds) && (forced.empty() || forced == kTrees)) {
    Problem trees = trees_candidate(canonical, folds, options.folds, trains, in.plan, ring);
    if (!forced.empty() || log_loss(trees) < log_loss(canonical)) {
      canonical.pilot = std::move(trees.pilot);
      canonical.folds = std::move(trees.folds);
      canonical.map = kTrees;
    }
  }
}

// The one-dimensional candidates beside each problem's own Beta map ("beta"), in the order they are
// tried. A family formed from a problem's own fit (beside_own: its design and each fold's parameters) is
// scored over the problem's rows, and its pilots are kept until the choice (such families are offered at
// K <= kMaxBiasCandidate only). pooled-beta, offered at any K, has an interface of its own (from_pairs):
// its loss is the pooled fit's over each class's pairs, known before any class's pilot is formed, and the
// classes' pilots are predicted only where it is kept; under beside_own its K pilots would be held at once
// beside the own ones (400 MB more at K = 1,000, n = 50,000).
struct PairsReading {
  double (*loss)(std::size_t q, const ScoreStage& stage);
  void (*predict)(Problem& pr, const ScoreStage& stage);
};

struct ScoreCandidate {
  const char* name;  // Result::pilot
  bool (*offered)(const ScoreStage& stage);
  std::optional<Problem> (*beside_own)(const OwnFit& own, const ScoreStage& stage);  // nullopt: the own map
  PairsReading from_pairs;
};

constexpr ScoreCandidate kScoreCandidates[] = {
    {"beta-step", [](const ScoreStage& stage) { return tries_steps(stage.problems); }, step_candidate, {}},
    {"pooled-beta", [](const ScoreStage& stage) { return stage.pooled != nullptr; }, nullptr,
     {pooled_beta_loss, pooled_beta_pilot}},
    {"pooled-intercepts",
     [](const ScoreStage& stage) { return stage.pooled && stage.problems <= kMaxBiasCandidate; },
     pooled_intercepts_candidate, {}},
};
constexpr std::size_t kScoreCandidateCount = std::size(kScoreCandidates);

// The held-out log-loss of problem q's pilot `pr` over the rows it is scored on: with a pooled fit, its
// class's pairs (all its rows where n (K - 1) <= plan.pooled_negatives; a sampled negative pair counts
// stride times), so that every candidate's sum is comparable with pooled-beta's; else all its rows.
double scored_loss(const Problem& pr, std::size_t q, const ScoreStage& stage) {
  double loss = 0;
  if (const PooledFit* pooled = stage.pooled) {
    for (std::size_t pair = pooled->pairs.first[q]; pair < pooled->pairs.first[q + 1]; ++pair) {
      const std::size_t i = pooled->pairs.position[pair];
      const double count = pr.labels[i] ? 1 : pooled->pairs.stride;
      loss += count * pilot_log_loss(pr, i);
    }
  } else {
    for (std::size_t i = 0; i < pr.labels.size(); ++i) loss += pilot_log_loss(pr, i);
  }
  return loss;
}

// The one-dimensional problems' pilots (one, or marginal's K): each problem's own Beta map, then the
// candidates of kScoreCandidates that are offered, each problem's held-out log-loss under each summed over
// the problems: the pilot of the lowest sum is every problem's. One choice for all classes, not one per
// class: each choice reads the labels once, and K of them (each keeping the pilot that agrees better with
// its class's labels) made calibrated K = 100 models read marginal CE_1 = 0.048 instead of 0.012.
void select_score_pilots(std::vector<Problem>& problems, const Prepared& in, const EstimateOptions& options,
                         const std::vector<std::size_t>& folds) {
  // One problem per task (marginal has K of them; one problem's folds are fitted on the threads instead);
  // each fit is serial, so the pilots do not depend on the thread count. Split across ranks, each rank
  // fits its share of the problems (marginal), or of the folds (one problem: its one task runs inline, on
  // the calling thread, as combining needs).
  const std::size_t n = in.pred.n, count = problems.size();
  Communicator* comm = in.plan.communicator;
  const bool by_problem = comm && count > 1;
  // One answer for every class: the pooled pilot's parameters are predicted at each class's rows.
  const bool saturated = any_saturated(in.problems, in.plan.owned_problems ? comm : nullptr);
  const Share mine = share_of(count, by_problem ? comm : nullptr);
  const double counted = static_cast<double>(count) / static_cast<double>(std::max<std::size_t>(mine.size(), 1));
  WorkLedger::start(in.plan.control, own_pilots_work(count, n) + pooled_work(count, n, in.plan));
  // Marginal: the pooled fit, the same on every rank (its pairs are every rank's).
  std::optional<PooledFit> pooled;
  if (count > 1) {
    pooled = fit_pooled(in.problems, folds, n, options.folds, in.plan, saturated);
    WorkLedger::done(in.plan.control, pooled_work(count, n, in.plan));
  }
  const ScoreStage stage{count, folds, options.folds, in.plan, count == 1 ? in.plan.threads : 1,
                         by_problem ? nullptr : comm, pooled ? &*pooled : nullptr};
  std::array<bool, kScoreCandidateCount> offered{};
  for (std::size_t c = 0; c < kScoreCandidateCount; ++c) offered[c] = kScoreCandidates[c].offered(stage);
  std::vector<double> own_loss(count, 0.0);
  std::array<std::vector<double>, kScoreCandidateCount> loss;
  std::array<std::vector<Problem>, kScoreCandidateCount> formed;  // beside_own's pilots and fold models
  for (std::size_t c = 0; c < kScoreCandidateCount; ++c) {
    loss[c].assign(count, 0.0);
    if (offered[c] && kScoreCandidates[c].beside_own) formed[c].resize(count);
  }
  parallel_for(
      mine.size(), in.plan.threads,
      [&](std::size_t own, int) {
        const std::size_t q = mine.begin + own;
        Problem& pr = problems[q];
        LogitDesign beta = beta_design(*pr.lp, score_spline(*pr.lp, saturated));
        cache_rows(beta, n, kMaxCachedDesign);  // read by the fits, the step's threshold and its design
        const std::vector<std::vector<double>> theta =
            crossfit_pilot(pr, FoldDesigns(beta), *in.plan.kernels, folds, options.folds, stage.fold_threads,
                           in.plan.control, stage.fold_ranks);
        own_loss[q] = scored_loss(pr, q, stage);
        for (std::size_t c = 0; c < kScoreCandidateCount; ++c) {
          const ScoreCandidate& candidate = kScoreCandidates[c];
          if (!offered[c]) continue;
          if (!candidate.beside_own) {
            loss[c][q] = candidate.from_pairs.loss(q, stage);
            continue;
          }
          std::optional<Problem> with_family = candidate.beside_own(OwnFit{pr, beta, theta}, stage);
          loss[c][q] = with_family ? scored_loss(*with_family, q, stage) : own_loss[q];
          if (with_family) formed[c][q] = std::move(*with_family);
        }
        WorkLedger::done(in.plan.control, own_pilots_work(count, n) / static_cast<double>(count) * counted);
      },
      in.plan.control);
  if (by_problem) {
    combine_shares(comm, own_loss);
    for (std::vector<double>& candidate_loss : loss) combine_shares(comm, candidate_loss);
  }
  auto total = [](const std::vector<double>& terms) { return std::accumulate(terms.begin(), terms.end(), 0.0); };
  // The candidates in turn, each kept where its sum is lower than every one before it (or by its name,
  // where the plan names one).
  std::optional<std::size_t> kept;
  double lowest = total(own_loss);
  const std::string_view forced = in.plan.pilot;
  for (std::size_t c = 0; c < kScoreCandidateCount; ++c)
    if (offered[c] && (forced.empty() ? total(loss[c]) < lowest : forced == kScoreCandidates[c].name))
      kept = c, lowest = total(loss[c]);
  if (kept) {
    const ScoreCandidate& candidate = kScoreCandidates[*kept];
    if (candidate.beside_own) {
      for (std::size_t q = mine.begin; q < mine.end; ++q)
        if (!formed[*kept][q].pilot.empty()) {
          problems[q].pilot = std::move(formed[*kept][q].pilot);
          problems[q].folds = std::move(formed[*kept][q].folds);
        }
    } else {
      parallel_for(mine.size(), in.plan.threads,
                   [&](std::size_t own, int) { candidate.from_pairs.predict(problems[mine.begin + own], stage); });
    }
    for (Problem& pr : problems) pr.map = candidate.name;
  }
  if (by_problem && !in.plan.owned_problems)  // owned: each pilot stays with its problem's owner
    for (std::size_t q = 0; q < count; ++q) {
      const bool own = q >= mine.begin && q < mine.end;
      if (!own) problems[q].pilot.assign(n, 0.0);
      combine_shares(comm, problems[q].pilot);
      // Corrected on every rank (for_each_problem): each rank needs every problem's fold models, which only
      // the fitting rank holds; the others read them from a table of its predictions.
      if (!problems_in_turn(count, in.plan)) continue;
      std::vector<double> table(options.folds * n, 0.0);
      if (own) problems[q].folds.predict(0, options.folds, table, 1, in.plan.threads);
      combine_shares(comm, table);
      problems[q].folds = fold_models_of_table(problems[q], std::move(table), options.folds, folds);
    }
}

}  // namespace

bool tries_steps(std::size_t problems) { return problems <= kMaxBiasCandidate; }

std::vector<Problem> piloted_problems(const Prepared& in, const EstimateOptions& options, const RingLayout* ring) {
  const std::vector<std::size_t> folds = in.folds.empty() ? folds_of(in.pred, options.folds, ring) : in.folds;
  std::vector<Problem> problems;
  for (const LabelledPoints& lp : in.problems) problems.push_back(make_problem(lp));
  if (options.type == CalibrationType::canonical) {
    select_canonical_pilot(problems[0], in, options, folds, ring);
  } else {
    ECEKDE_ASSERT(!ring);
    select_score_pilots(problems, in, options, folds);
  }
  return problems;
}

}  // namespace ecekde::detail
