// The one-sweep calibration test against relabel-then-estimate, and the p-value's behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/label_draws.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/random.hpp"
#include "generate.hpp"

namespace {

using ecekde::CalibrationType;

ecekde::ProbsView view(const oracle::Data& d) { return ecekde::ProbsView::row_major(d.f.data(), d.n, d.k); }

TEST(CalibrationTest, NullValuesEqualRelabelThenEstimate) {
  struct Case {
    CalibrationType type;
    std::size_t n, k;
  };
  for (const auto& c : {Case{CalibrationType::canonical, 60, 4}, Case{CalibrationType::marginal, 50, 3},
                        Case{CalibrationType::top_label, 70, 5}, Case{CalibrationType::binary, 40, 1},
                        Case{CalibrationType::canonical, 37, 2}}) {
    const auto d = c.k == 1 ? testdata::binary_predictions(c.n, 2, 1.5) : testdata::softmax_predictions(c.n, c.k, 2, 2.0, 1.5);
    ecekde::EstimateOptions o;
    o.estimator = ecekde::Estimator::paper;
    o.type = c.type;
    o.bandwidth = 0.03;
    o.execution.block_size = 13;
    ecekde::CalibrationTestOptions t;
    t.replicates = 9;
    t.seed = 77;
    const auto res = ecekde::calibration_test_kde(view(d), ecekde::LabelsView(d.y), o, t);
    EXPECT_EQ(res.statistic, ecekde::estimate(view(d), ecekde::LabelsView(d.y), o).ce_pow_p);
    for (std::size_t b = 0; b < t.replicates; ++b) {
      const auto y = ecekde::consistency_labels(view(d), t.seed, b);
      const double want = ecekde::estimate(view(d), ecekde::LabelsView(y), o).ce_pow_p;
      EXPECT_NEAR(res.null_values[b], want, 1e-12 * want) << to_string(c.type) << " copy " << b;
    }
    std::size_t at_least = 0;
    for (double v : res.null_values) at_least += v >= res.statistic;
    EXPECT_EQ(res.p_value, (1.0 + static_cast<double>(at_least)) / (t.replicates + 1.0));
  }
}

// consistency_labels (a binary search in each row's running sums) draws exactly what Rng::categorical's
// linear scan draws from the same stream: rows with zeros, with a last class that only rounding reaches,
// at K = 2 to 1,000, and Bernoulli draws for one column.
TEST(CalibrationTest, RelabelledCopiesAreTheCategoricalDraws) {
  for (std::size_t k : {1, 2, 3, 10, 1000}) {
    auto d = k == 1 ? testdata::binary_predictions(300, 4, 1.0) : testdata::softmax_predictions(300, k, 4, 3.0, 1.0);
    if (k > 2) {
      for (std::size_t c = 0; c < k; ++c) d.f[5 * k + c] = c == 1 ? 1.0 : 0.0;  // one class only
      for (std::size_t c = 0; c < k; ++c) d.f[6 * k + c] = c + 1 == k ? 0.5 : 0.5 / double(k - 1);
      for (std::size_t c = 0; c < k; ++c) d.f[7 * k + c] = c == 0 ? 1 - 1e-9 : 1e-9 / double(k - 1);
    }
    const auto probs = view(d);
    for (std::uint64_t seed : {0, 9})
      for (std::size_t b : {0, 1, 17}) {
        const auto y = ecekde::consistency_labels(probs, seed, b);
        ecekde::Rng rng = ecekde::Rng::stream(seed, b);
        for (std::size_t r = 0; r < d.n; ++r) {
          const std::int64_t want =
              k == 1 ? (rng.uniform() < d.f[r] ? 1 : 0)
                     : static_cast<std::int64_t>(rng.categorical(std::span<const double>(d.f.data() + r * k, k)));
          ASSERT_EQ(y[r], want) << "K = " << k << ", seed " << seed << ", copy " << b << ", row " << r;
        }
      }
  }
}

// The bounds that the ring's one-dimensional test reads a copy's class from (uniforms_drawing): a uniform u
// draws `label` from a row's running sums exactly when lower <= u < upper. Every label, at every running
// sum, one ulp either side of it, 0 and the largest double below 1; rows with zeros and repeated sums;
// K = 1 (Bernoulli), 2, 3 and 7.
TEST(CalibrationTest, UniformBoundsAreTheDrawnLabels) {
  for (std::size_t k : {1, 2, 3, 7}) {
    auto d = k == 1 ? testdata::binary_predictions(40, 2, 1.0) : testdata::softmax_predictions(40, k, 2, 3.0, 1.0);
    if (k > 2)
      for (std::size_t c = 0; c < k; ++c) d.f[3 * k + c] = c == 1 ? 1.0 : 0.0;  // zeros: repeated running sums
    for (std::size_t r = 0; r < d.n; ++r) {
      std::vector<double> running(k);
      ecekde::detail::running_sums(d.f.data() + r * k, k, running.data());
      std::vector<double> us{0.0, std::nextafter(1.0, 0.0)};
      for (std::size_t c = 0; c < (k == 1 ? 1 : k - 1); ++c)
        for (double u : {std::nextafter(running[c], -1.0), running[c], std::nextafter(running[c], 2.0)})
          if (u >= 0 && u < 1) us.push_back(u);
      for (std::size_t label = 0; label < std::max<std::size_t>(k, 2); ++label) {
        const auto [lower, upper] = ecekde::detail::uniforms_drawing(running.data(), k, label);
        for (double u : us)
          ASSERT_EQ(ecekde::detail::label_of_uniform(running.data(), k, u) == static_cast<std::int64_t>(label),
                    lower <= u && u < upper)
              << "K = " << k << ", row " << r << ", label " << label << ", u = " << u;
      }
    }
  }
}

// Kolmogorov-Smirnov distance of p-values from the uniform distribution.
double ks_uniform(std::vector<double> p) {
  std::sort(p.begin(), p.end());
  double d = 0;
  const double n = static_cast<double>(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    d = std::max({d, (static_cast<double>(i) + 1) / n - p[i], p[i] - static_cast<double>(i) / n});
  return d;
}

TEST(CalibrationTest, PValuesUniformWhenCalibratedSmallWhenNot) {
  std::vector<double> calibrated, miscalibrated;
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.bandwidth = 0.05;
  ecekde::CalibrationTestOptions t;
  t.replicates = 99;
  for (std::uint64_t s = 0; s < 100; ++s) {
    t.seed = 1000 + s;
    const auto good = testdata::softmax_predictions(60, 3, s, 1.5, 1.0);
    calibrated.push_back(ecekde::calibration_test_kde(view(good), ecekde::LabelsView(good.y), o, t).p_value);
    if (s < 20) {
      const auto bad = testdata::softmax_predictions(60, 3, s, 1.5, 3.0);
      miscalibrated.push_back(ecekde::calibration_test_kde(view(bad), ecekde::LabelsView(bad.y), o, t).p_value);
    }
  }
  // KS critical value at alpha = 0.01 for 100 samples is 0.163; p-values have 100 levels (1/100 steps).
  EXPECT_LT(ks_uniform(calibrated), 0.163);
  std::sort(miscalibrated.begin(), miscalibrated.end());
  EXPECT_LE(miscalibrated[miscalibrated.size() / 2], 0.05);  // median p-value small: the test has power
}

TEST(CalibrationTest, GenericStatistic) {
  const auto d = testdata::softmax_predictions(50, 3, 4, 2.0, 1.0);
  auto mean_top = [](ecekde::ProbsView p, ecekde::LabelsView y) {  // mean confidence minus accuracy
    double s = 0;
    for (std::size_t r = 0; r < p.rows(); ++r) {
      std::size_t top = 0;
      for (std::size_t c = 1; c < p.cols(); ++c)
        if (p(r, c) > p(r, top)) top = c;
      s += p(r, top) - (y[r] == static_cast<std::int64_t>(top));
    }
    return std::fabs(s) / static_cast<double>(p.rows());
  };
  ecekde::CalibrationTestOptions t;
  t.replicates = 20;
  const auto res = ecekde::calibration_test(view(d), ecekde::LabelsView(d.y), mean_top, t, {.threads = 2});
  for (std::size_t b = 0; b < t.replicates; ++b) {
    const auto y = ecekde::consistency_labels(view(d), t.seed, b);
    EXPECT_EQ(res.null_values[b], mean_top(view(d), ecekde::LabelsView(y)));
  }
}

}  // namespace
