// The beta-step family: the Beta pilot with a jump (families.hpp).
#include <algorithm>
#include <array>
#include <numeric>

#include "core/crossfit/families.hpp"
#include "core/crossfit/pilot_fit.hpp"
#include "core/messages.hpp"

namespace ecekde::detail {

namespace {

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

// The step candidate's threshold in fold f (docs/history.md, 7.14): where the fold's smooth pilot
// (theta under `beta`, fitted on the rows of the other folds) misses most. Over those rows in decreasing
// logit s, U(t) = sum_{logit s > t} (b - pi) and V(t) = sum_{logit s > t} pi (1 - pi): U^2 / V is the score
// statistic of a jump u [logit s > t] added to the smooth map. A smooth map that rounds a jump errs low on
// one side and high on the other, so U peaks at the jump. Thresholds lie midway between distinct scores
// with at least a fiftieth of the rows (and 20) and kMinStepLabels of each label on either side, so that
// no side is (nearly) separated by its labels, where the jump's fit would grow without bound; none where
// there is no such place.
std::optional<double> step_threshold(const ByScore& order, const LogitDesign& beta, const TileKernels& kernels,
                                     std::span<const double> theta, std::size_t f) {
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
    predict_logit(beta, kernels, theta, order.row, prob.data());
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

}  // namespace

std::optional<Problem> step_candidate(const OwnFit& own, const ScoreStage& stage) {
  const LabelledPoints& lp = *own.pr.lp;
  const std::size_t n = lp.points.n;
  auto logits = std::make_shared<std::vector<double>>(n);
  for (std::size_t j = 0; j < n; ++j) (*logits)[j] = logit(lp.points.x(j, 0), lp.points.x(j, 1));
  const ByScore order(own.pr, *logits, stage.folds);
  std::vector<double> steps;
  std::vector<LogitDesign> designs;
  for (std::size_t f = 0; f < own.theta.size(); ++f) {
    const std::optional<double> at = step_threshold(order, own.beta, *stage.plan.kernels, own.theta[f], f);
    if (!at) return std::nullopt;
    steps.push_back(*at);
    designs.push_back(step_design(own.beta, logits, *at));
  }
  Problem candidate = make_problem(lp);
  std::vector<double> start = own.theta[0];
  start.push_back(0.0);  // the jump's parameter, the design's last feature
  std::vector<std::vector<double>> theta =
      crossfit_pilot(candidate, FoldDesigns(std::move(designs)), *stage.plan.kernels, stage.folds, own.theta.size(),
                     stage.fold_threads, stage.plan.control, stage.fold_ranks, start);
  // The fold models read the Beta design's rows afresh, not from the fits' table (which would then be held
  // by every problem's candidate until the choice).
  std::vector<LogitDesign> bare;
  for (double at : steps) bare.push_back(step_design(without_cache(own.beta), logits, at));
  candidate.folds = fold_models(candidate, FoldDesigns(std::move(bare)), std::move(theta), stage.folds,
                                *stage.plan.kernels);
  return candidate;
}

}  // namespace ecekde::detail
