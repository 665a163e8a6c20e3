// The pooled-beta and pooled-intercepts families: marginal's pooled pilot (families.hpp).
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "core/crossfit/families.hpp"
#include "core/crossfit/folds.hpp"
#include "core/crossfit/pilot_fit.hpp"
#include "core/distributed.hpp"
#include "core/ring.hpp"
#include "ecekde/random.hpp"

namespace ecekde::detail {

namespace {

constexpr std::uint64_t kPooledSeed = 0x706f6f6c6564ULL;

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

// A pair's term of PooledFit::pair_loss (the pilot at sorted position i of the pairs' problem).
double pooled_pair_loss(const Problem& pairs, std::size_t i, double stride) {
  const double sampled = pairs.pilot[i], scale = sampled + stride * (1 - sampled);
  return pairs.labels[i] ? -safe_log(sampled / scale, kLogFloor)
                         : stride * -safe_log(stride * (1 - sampled) / scale, kLogFloor);
}

}  // namespace

std::size_t pooled_stride(std::size_t n, std::size_t k, const SweepPlan& plan) {
  return std::max<std::size_t>(1, (n * (k - 1) + plan.pooled_negatives - 1) / plan.pooled_negatives);
}

PooledFit fit_pooled(const std::vector<LabelledPoints>& problems, const std::vector<std::size_t>& folds,
                     std::size_t n, std::size_t fold_count, const SweepPlan& plan, bool saturated) {
  PooledFit out{pooled_pairs(problems, folds, n, plan, saturated), {}, {}};
  const PooledPairs& pooled = out.pairs;
  Problem pairs = make_problem(pooled.lp);
  out.theta = crossfit_pilot(pairs, FoldDesigns(beta_design(pooled.lp, pooled.spline, std::log(pooled.stride))),
                             *plan.kernels, pooled.folds, fold_count, plan.threads, plan.control);
  out.pair_loss.resize(pooled.lp.points.n);
  for (std::size_t i = 0; i < out.pair_loss.size(); ++i)
    out.pair_loss[pooled.lp.original[i]] = pooled_pair_loss(pairs, i, pooled.stride);
  return out;
}

double pooled_beta_loss(std::size_t q, const ScoreStage& stage) {
  const PooledFit& pooled = *stage.pooled;
  double loss = 0;
  for (std::size_t pair = pooled.pairs.first[q]; pair < pooled.pairs.first[q + 1]; ++pair)
    loss += pooled.pair_loss[pair];
  return loss;
}

void pooled_beta_pilot(Problem& pr, const ScoreStage& stage) {
  predict_folds(pr, beta_design(*pr.lp, stage.pooled->pairs.spline), *stage.plan.kernels, stage.pooled->theta,
                stage.folds);
}

std::optional<Problem> pooled_intercepts_candidate(const OwnFit& own, const ScoreStage& stage) {
  const Problem& pr = own.pr;
  const LogitDesign pooled = beta_design(*pr.lp, stage.pooled->pairs.spline);
  const std::vector<std::vector<double>>& theta = stage.pooled->theta;
  const std::size_t n = pr.lp->points.n;
  const FoldRows split = fold_rows(*pr.lp, stage.folds, theta.size());
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
  // Fold f's pooled log-odds of every row, its pilot's offsets (held by value: the fold models outlive the
  // pooled fit).
  auto pooled_log_odds = [pooled, theta, kernels = stage.plan.kernels, every](std::size_t f, double* prob,
                                                                             double* out) {
    predict_logit(pooled, *kernels, theta[f], every, prob);
    for (std::size_t j = 0; j < every.size(); ++j)
      out[j] = safe_log(prob[2 * j + 1], kLogFloor) - safe_log(prob[2 * j], kLogFloor);
  };
  std::vector<double> intercept(theta.size(), 0.0);
  for (std::size_t f = 0; f < theta.size(); ++f) {
    if (split.held_out[f].empty()) continue;
    pooled_log_odds(f, prob.data(), log_odds.data());
    const double lambda = pilot_penalty(pr, shifted, split.train[f], nullptr);
    const double b = split.train[f].empty() ? 0.0
                                            : fit_logit(shifted, *stage.plan.kernels, pr.labels, split.train[f],
                                                        lambda, stage.plan.control)[0];
    intercept[f] = b;
    for (std::size_t j : split.held_out[f]) pilot[j] = 1 / (1 + std::exp(-(log_odds[j] + b)));
  }
  Problem candidate = make_problem(*pr.lp);
  candidate.pilot = std::move(pilot);
  candidate.folds.count = theta.size();
  candidate.folds.fold_of = own.pr.folds.fold_of;  // the problem's rows, the same folds
  // Fold f's model at every row: the held-out rows' formula (bitwise, at those rows).
  candidate.folds.predict = [pooled_log_odds, intercept, n](std::size_t first, std::size_t folds,
                                                            std::span<double> out, std::size_t stride, int) {
    std::vector<double> prob(2 * n), log_odds(n);
    for (std::size_t f = 0; f < folds; ++f) {
      pooled_log_odds(first + f, prob.data(), log_odds.data());
      for (std::size_t j = 0; j < n; ++j)
        out[(f * n + j) * stride] = 1 / (1 + std::exp(-(log_odds[j] + intercept[first + f])));
    }
  };
  return candidate;
}

}  // namespace ecekde::detail
