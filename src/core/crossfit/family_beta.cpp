// The beta family: a one-dimensional problem's own pilot (families.hpp).
#include <algorithm>

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

}  // namespace ecekde::detail
