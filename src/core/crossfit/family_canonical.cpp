// The canonical pilot's designs: structured, full-matrix, top-class-biases and class-biases (families.hpp).
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "core/crossfit/families.hpp"
#include "core/crossfit/pilot_fit.hpp"
#include "core/crossfit/work.hpp"
#include "core/messages.hpp"
#include "core/ring.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

namespace {

// A row's top class (the first of equal ones) and the sum of its other probabilities.
std::pair<std::size_t, double> top_and_rest(const double* f, std::size_t K) {
  const auto top = static_cast<std::size_t>(std::max_element(f, f + K) - f);
  double rest = 0;
  for (std::size_t c = 0; c < K; ++c)
    if (c != top) rest += f[c];
  return {top, rest};
}

}  // namespace

std::shared_ptr<const LogitSpline> canonical_spline(const CheckedPredictions& pred, bool saturated,
                                                    Communicator* ranks) {
  std::vector<double> t;
  t.reserve(pred.f.size());
  for (double f : pred.f)  // the spline sorts them: any order
    if (!saturated || !(detail::saturated(f) || detail::saturated(1 - f))) t.push_back(logit(f, 1 - f));
  return std::make_shared<const LogitSpline>(std::move(t), saturated, ranks);
}

LogitDesign canonical_design(const LabelledPoints& lp, const CheckedPredictions& pred,
                             std::shared_ptr<const LogitSpline> spline, bool class_bias, double matrix_penalty,
                             bool top_biases) {
  // log f, the spline's functions, the saturated indicator, then the top-label adjustment's feature: last,
  // where the folds' adjustments write it (LogitDesign::adjust)
  constexpr std::size_t kFirstSpline = 1;
  LogitDesign d;
  d.L = lp.classes;
  d.D = kFirstSpline + LogitSpline::kFunctions + (spline->saturated() ? 1 : 0) + 1;
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
      x[D * c + D - 1] = 0;
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

std::vector<double> extended_start(std::span<const double> theta, const LogitDesign& from, const LogitDesign& to) {
  ECEKDE_ASSERT(to.D >= from.D && to.L == from.L);
  std::vector<double> start(to.parameters(), 0.0);
  std::copy_n(theta.begin(), from.D, start.begin());
  if (from.class_bias && to.class_bias)
    std::copy_n(theta.begin() + static_cast<std::ptrdiff_t>(from.D), from.L, start.begin() + static_cast<std::ptrdiff_t>(to.D));
  return start;
}

std::vector<std::function<void(std::size_t, double*)>> top_label_adjustment(
    const LabelledPoints& lp, const CheckedPredictions& pred, const std::vector<std::vector<double>>& features) {
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
  // Held by the adjustments themselves: the fold models (Problem::folds) read them after the pilots' stage.
  auto kept = std::make_shared<const std::vector<std::vector<double>>>(features);
  std::vector<std::function<void(std::size_t, double*)>> out;
  for (std::size_t f = 0; f < kept->size(); ++f)
    out.emplace_back([&lp, kept, f, tops, L = lp.classes](std::size_t j, double* last) {
      const Top& r = (*tops)[j];
      const double t = (*kept)[f][lp.original[j]];
      const double up = safe_log(t, kFeatureFloor) - r.log_s, down = safe_log(1 - t, kFeatureFloor) - r.log_rest;
      for (std::size_t c = 0; c < L; ++c) last[c] = c == r.top ? up : down;
    });
  return out;
}

std::vector<std::vector<double>> top_label_features(const LabelledPoints& lp, const std::vector<std::size_t>& folds,
                                                    std::size_t fold_count, const SweepPlan& plan,
                                                    const RingLayout* ring, std::span<const char> trains) {
  std::vector<Problem> problems{make_problem(lp)};
  const std::size_t n = lp.points.n;
  WorkLedger::start(plan.control, pilot_work(1, n));
  Communicator* ranks = ring ? ring->comm : nullptr;
  const LogitDesign design = beta_design(lp, score_spline(lp, any_saturated({&lp, 1}, ranks), ranks));
  const std::vector<std::vector<double>> theta =
      ring ? crossfit_pilot_on_ring(problems[0], FoldDesigns(design), *plan.kernels, folds, fold_count, plan.control,
                                    ring->comm, {}, trains)
           : crossfit_pilot(problems[0], FoldDesigns(design), *plan.kernels, folds, fold_count, plan.threads,
                            plan.control, plan.communicator, {}, trains);
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  std::vector<double> prob(2 * n);
  std::vector<std::vector<double>> out(fold_count, std::vector<double>(n));
  for (std::size_t f = 0; f < fold_count; ++f) {
    predict_logit(design, *plan.kernels, theta[f], rows, prob.data());
    for (std::size_t j = 0; j < n; ++j) out[f][lp.original[j]] = prob[2 * j + 1];
  }
  WorkLedger::done(plan.control, pilot_work(1, n));
  return out;
}

}  // namespace ecekde::detail
