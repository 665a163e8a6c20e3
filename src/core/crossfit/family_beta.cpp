// The beta family: a one-dimensional problem's own pilot (families.hpp).
#include <algorithm>
#include <cmath>

#include "core/crossfit/families.hpp"

namespace ecekde::detail {

std::shared_ptr<const LogitSpline> score_spline(const LabelledPoints& lp, bool saturated,
                                                Communicator* ranks) {
  std::vector<double> t;
  t.reserve(lp.points.n);
  for (std::size_t j = 0; j < lp.points.n; ++j) {
    const double s = lp.points.x(j, 0), r = lp.points.x(j, 1);
    if (!saturated || !(detail::saturated(s) || detail::saturated(r))) t.push_back(logit(s, r));
  }
  return std::make_shared<const LogitSpline>(std::move(t), saturated, ranks);
}

LogitDesign beta_design(const LabelledPoints& lp, std::shared_ptr<const LogitSpline> spline, double log_odds_offset) {
  constexpr std::size_t kFirstSpline = 3;  // after log s, log(1 - s) and the intercept
  LogitDesign d;
  d.L = 2;
  d.D = kFirstSpline + LogitSpline::kFunctions + (spline->saturated() ? 2 : 0);
  // The logarithms are the points' own (KernelPoints::log_x, log max(v, kLogFloor)), floored at
  // kFeatureFloor by a max: log max(v, F) = max(log max(v, kLogFloor), log F). A row is formed again at
  // each read where the design is not cached (every fold's prediction, each Newton step), and `perf` put
  // 7% of a marginal estimate at n = 10,000, K = 100 in the logarithm, most of it here.
  d.row = [&lp, spline, log_odds_offset, D = d.D, log_feature_floor = std::log(kFeatureFloor)](
              std::size_t j, double* offset, double* x) {
    const double s = lp.points.x(j, 0), r = lp.points.x(j, 1);
    const double log_s = lp.points.log_x[2 * j], log_r = lp.points.log_x[2 * j + 1];
    const double feature_s = std::max(log_s, log_feature_floor), feature_r = std::max(log_r, log_feature_floor);
    const bool indicators = spline->saturated();
    const bool low = indicators && saturated(s), high = indicators && saturated(r);
    offset[0] = indicators ? feature_r : log_r;
    offset[1] = (indicators ? feature_s : log_s) + log_odds_offset;
    std::fill_n(x, 2 * D, 0.0);  // class 0: no features
    x[D] = feature_s;
    x[D + 1] = feature_r;
    x[D + 2] = 1;
    if (!(low || high)) spline->basis(feature_s - feature_r, x + D + kFirstSpline);  // logit(s, r)
    if (indicators) {
      x[D + kFirstSpline + LogitSpline::kFunctions] = low ? kSaturatedIndicator : 0.0;
      x[D + kFirstSpline + LogitSpline::kFunctions + 1] = high ? kSaturatedIndicator : 0.0;
    }
  };
  return d;
}

}  // namespace ecekde::detail
