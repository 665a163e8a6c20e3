// What the accuracy and consistency studies read of the default (crossfit) estimator over several data sets
// of one model (experiments/accuracy, experiments/consistency).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "ecekde/estimate.hpp"
#include "zoo.hpp"

namespace ecekde::research {

// Crossfit's CE_p^p of one type over the data sets: the mean, the sample standard deviation, the fraction
// of the sets whose interval holds `truth`, the fraction whose correction bandwidth was the grid's widest
// (the correction flat: the figure is the pilot's), and the mean seconds of one estimate.
struct Readings {
  double mean = 0, sd = 0, coverage = 0, widest = 0, seconds = 0;
};

inline Readings crossfit_readings(const std::vector<ZooData>& data, CalibrationType type, double p, double truth) {
  using Clock = std::chrono::steady_clock;
  const double count = static_cast<double>(data.size());
  Readings out;
  double squares = 0;
  for (const ZooData& d : data) {
    EstimateOptions o;
    o.type = type;
    o.p = p;
    const Clock::time_point start = Clock::now();
    const Result r = estimate(d.probs_view(), d.labels_view(), o);
    out.seconds += std::chrono::duration<double>(Clock::now() - start).count() / count;
    out.mean += r.ce_pow_p / count;
    squares += r.ce_pow_p * r.ce_pow_p;
    out.coverage += (r.ce_pow_p_interval->lower <= truth && truth <= r.ce_pow_p_interval->upper) / count;
    out.widest += (r.selection && r.bandwidth == r.selection->grid.back()) / count;
  }
  out.sd = count > 1 ? std::sqrt(std::max(0.0, squares / count - out.mean * out.mean) * count / (count - 1)) : 0.0;
  return out;
}

}  // namespace ecekde::research
