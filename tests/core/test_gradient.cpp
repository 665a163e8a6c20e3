// The analytic gradient against central finite differences (fourth order) of the value, on free
// probabilities, for every type, several p, h, K, thread counts and block sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "core/gradient.hpp"
#include "ecekde/gradient.hpp"
#include "generate.hpp"

namespace {

using ecekde::CalibrationType;
using namespace ecekde::detail;

Predictions to_predictions(const oracle::Data& d) {
  Predictions p;
  p.n = d.n;
  p.k = d.k;
  p.f = d.f;
  p.y.assign(d.y.begin(), d.y.end());
  return p;
}

SweepPlan plan(int threads, std::size_t block) {
  ecekde::ExecutionOptions e;
  e.threads = threads;
  e.block_size = block;
  return SweepPlan::from(e);
}

double value(const Predictions& pred, CalibrationType type, double h, double p) {
  return value_and_gradient(pred, make_problems(pred, type), type, h, p, plan(1, 512)).ce_pow_p;
}

// Largest |analytic - numeric| over all entries, relative to the largest |numeric|.
double gradient_error(const oracle::Data& d, CalibrationType type, double h, double p, int threads,
                      std::size_t block) {
  Predictions pred = to_predictions(d);
  const auto vg = value_and_gradient(pred, make_problems(pred, type), type, h, p, plan(threads, block));
  const double step = 2e-5;  // fourth-order stencil: truncation ~ step^4, rounding ~ 1e-16 / step
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < pred.f.size(); ++i) {
    const double x0 = pred.f[i];
    auto at = [&](double dx) {
      pred.f[i] = x0 + dx;
      const double v = value(pred, type, h, p);
      pred.f[i] = x0;
      return v;
    };
    const double numeric = (8 * (at(step) - at(-step)) - (at(2 * step) - at(-2 * step))) / (12 * step);
    worst = std::max(worst, std::fabs(vg.grad[i] - numeric));
    scale = std::max(scale, std::fabs(numeric));
  }
  return worst / scale;
}

struct Case {
  CalibrationType type;
  std::size_t n, k;
};

TEST(Gradient, MatchesFiniteDifferences) {
  const Case cases[] = {{CalibrationType::canonical, 12, 3},  {CalibrationType::canonical, 20, 5},
                        {CalibrationType::marginal, 15, 3},   {CalibrationType::marginal, 10, 4},
                        {CalibrationType::top_label, 14, 3},  {CalibrationType::top_label, 18, 6},
                        {CalibrationType::binary, 16, 2}};
  std::uint64_t seed = 7;
  for (const auto& c : cases)
    for (double h : {0.05, 0.2, 1.0})
      for (double p : {1.5, 2.0, 3.0}) {
        const auto d = testdata::softmax_predictions(c.n, c.k, seed++, 1.0, 1.3);
        for (auto [threads, block] : {std::pair{1, std::size_t{512}}, {2, 3}, {3, 5}}) {
          const double err = gradient_error(d, c.type, h, p, threads, block);
          EXPECT_LT(err, 1e-6) << to_string(c.type) << " n=" << c.n << " k=" << c.k << " h=" << h << " p=" << p
                               << " threads=" << threads << " block=" << block;
        }
      }
}

TEST(Gradient, OneColumnBinaryMatchesFiniteDifferences) {
  const auto d = testdata::binary_predictions(15, 3, 1.5);
  for (double h : {0.05, 0.5})
    for (double p : {1.5, 2.0}) EXPECT_LT(gradient_error(d, CalibrationType::binary, h, p, 2, 4), 1e-6);
}

// p = 1 away from kinks: random data almost surely has no |r - f| = 0.
TEST(Gradient, OrderOneAwayFromKinks) {
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label}) {
    const auto d = testdata::softmax_predictions(12, 3, 99, 1.0, 1.3);
    EXPECT_LT(gradient_error(d, type, 0.1, 1.0, 2, 5), 1e-6) << to_string(type);
  }
}

}  // namespace
