// The default (crossfit) estimator against ground truth on the synthetic zoo (research/zoo.hpp), whose
// truths come from the models' closed-form calibration maps, never from an estimator under test. Fixed
// seeds; the full study with more data sets, n and K is experiments/accuracy (docs/validation.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ecekde/estimate.hpp"
#include "ecekde/random.hpp"
#include "ecekde/synthetic.hpp"
#include "zoo.hpp"

namespace {

using ecekde::CalibrationType;
using ecekde::research::ZooModel;

constexpr std::size_t kN = 3000, kSets = 4;

ecekde::Result crossfit(const ecekde::research::ZooData& d, CalibrationType type, double p) {
  ecekde::EstimateOptions o;
  o.type = type;
  o.p = p;
  return ecekde::estimate(d.probs_view(), d.labels_view(), o);
}

double truth_of(const ecekde::research::ZooTruth& t, CalibrationType type) {
  return type == CalibrationType::canonical ? t.canonical : type == CalibrationType::marginal ? t.marginal : t.top_label;
}

// The zoo's Monte Carlo truths against the exact truths of the paper's Section 4 model (quadrature of the
// conditional expectations: synthetic_ground_truth), computed by a different method.
TEST(ZooTruth, AgreesWithTheExactTruthOfThePapersModel) {
  const ZooModel m = ecekde::research::model_named("paper-section4", 4);
  const auto zoo = ecekde::research::truth(m, {1.0, 2.0}, 1 << 20);
  for (const auto& t : zoo) {
    ecekde::GroundTruthOptions o;
    o.p = t.p;
    const ecekde::GroundTruth exact = ecekde::synthetic_ground_truth({4, 0.6, 0.6}, o);
    EXPECT_NEAR(t.canonical, exact.canonical.value, 5 * t.canonical_standard_error + 4 * exact.canonical.standard_error);
    EXPECT_NEAR(t.marginal, exact.marginal.value, 0.01 * exact.marginal.value);
    EXPECT_NEAR(t.top_label, exact.top_label.value, 0.01 * exact.top_label.value);
  }
}

// The local maps (research::local_maps) move probability as documented, checked on their samples without
// the zoo's internals: a single bump or a step gives q = (1 - s) f + s e_t for one class t, with s in
// [0, param]; a step's s is param or 0, a bump's varies over the simplex, up to over half of param near
// its centre (a draw of the base, so some rows sit there). Every map stays on the simplex.
TEST(ZooTruth, LocalMapsMoveProbabilityWhereTheySay) {
  for (const std::size_t k : {3, 10})
    for (const std::uint64_t draw : {0, 1})
      for (const ZooModel& m : ecekde::research::local_maps(k, draw)) {
        SCOPED_TRACE(m.name + ", K = " + std::to_string(k) + ", draw " + std::to_string(draw));
        const ecekde::research::ZooData d = ecekde::research::sample(m, 4000, 9);
        const bool single = m.pre_temperature == 1 && m.count == 1 &&
                            (m.map == ecekde::research::Map::bump || m.map == ecekde::research::Map::step);
        double smallest = 1, largest = 0;
        for (std::size_t j = 0; j < d.n; ++j) {
          const double* f = d.probs.data() + j * k;
          const double* q = d.calibrated.data() + j * k;
          double total = 0;
          for (std::size_t c = 0; c < k; ++c) {
            EXPECT_GE(q[c], 0.0);
            total += q[c];
          }
          ASSERT_NEAR(total, 1.0, 1e-12);
          if (!single) continue;
          // s from a class whose q fell (q_c = (1 - s) f_c there), then every class checked against it.
          double s = 0;
          std::size_t readable = 0;
          for (std::size_t c = 0; c < k; ++c)
            if (f[c] > 1e-3) {
              s = std::max(s, 1 - q[c] / f[c]);
              ++readable;
            }
          if (readable < 2) continue;  // near a vertex the one class left cannot show s
          std::size_t raised = 0;
          for (std::size_t c = 0; c < k; ++c) {
            const double rest = q[c] - (1 - s) * f[c];
            if (rest > 1e-9) {
              ++raised;
              EXPECT_NEAR(rest, s, 1e-9);
            }
          }
          EXPECT_LE(raised, 1u);
          EXPECT_LE(s, m.map_param + 1e-12);
          if (m.map == ecekde::research::Map::step && s > 1e-9) {
            EXPECT_NEAR(s, m.map_param, 1e-9);
          }
          smallest = std::min(smallest, s);
          largest = std::max(largest, s);
        }
        if (m.map == ecekde::research::Map::identity || !single) continue;
        EXPECT_LT(smallest, 0.5 * largest);  // local: some rows moved much less than others
        if (m.map == ecekde::research::Map::bump) {
          EXPECT_GT(largest, 0.5 * m.map_param);
        }
        if (m.map == ecekde::research::Map::step) {
          EXPECT_EQ(smallest, 0.0);
          EXPECT_NEAR(largest, m.map_param, 1e-9);
        }
      }
}

// The ImageNet-shaped model's closed-form P(y | f) against its generator: labels drawn first, logits given
// the label as bench/imagenet_like.py draws them (written here again, not taken from the zoo). Over such
// draws E[([y = c] - q_c(f)) h(f)] = 0 for every function h; for f itself (not calibrated) it is not.
TEST(ZooTruth, ImagenetLikePosteriorIsTheGeneratorsCalibrationMap) {
  for (const auto& [k, separation] : {std::pair<std::size_t, double>{4, 2.0}, {50, 5.0}}) {
    ZooModel m = ecekde::research::imagenet_like(k);
    m.base_param = separation;
    ecekde::Rng rng(77);
    constexpr std::size_t kDraws = 100000;
    // Residual moments sum_c ([y = c] - g_c) h_c for g = q and g = f, with h = 1 at the top class, h = f.
    std::vector<double> q_top(kDraws), q_f(kDraws), f_top(kDraws), f_f(kDraws);
    std::vector<double> f(k);
    for (std::size_t j = 0; j < kDraws; ++j) {
      const std::size_t y = rng.below(k);
      for (std::size_t c = 0; c < k; ++c) f[c] = 2 * rng.normal() + (c == y ? separation + 2 * rng.normal() : 0.0);
      const double top = *std::max_element(f.begin(), f.end());
      double sum = 0;
      for (double& v : f) sum += v = std::exp((v - top) / 0.6);
      for (double& v : f) v /= sum;
      const std::vector<double> q = ecekde::research::calibration_map(m, f.data());
      const std::size_t t = static_cast<std::size_t>(std::max_element(f.begin(), f.end()) - f.begin());
      q_top[j] = (t == y) - q[t];
      f_top[j] = (t == y) - f[t];
      for (std::size_t c = 0; c < k; ++c) {
        q_f[j] += ((c == y) - q[c]) * f[c];
        f_f[j] += ((c == y) - f[c]) * f[c];
      }
    }
    auto mean_and_error = [](const std::vector<double>& v) {
      double mean = 0, squares = 0;
      for (double x : v) mean += x / static_cast<double>(v.size()), squares += x * x / static_cast<double>(v.size());
      return std::pair{mean, std::sqrt((squares - mean * mean) / static_cast<double>(v.size()))};
    };
    for (const auto& [calibrated, uncalibrated] : {std::pair{&q_top, &f_top}, std::pair{&q_f, &f_f}}) {
      const auto [mean, error] = mean_and_error(*calibrated);
      EXPECT_LT(std::fabs(mean), 4 * error) << "K " << k;
      const auto [f_mean, f_error] = mean_and_error(*uncalibrated);
      EXPECT_GT(std::fabs(f_mean), 10 * f_error) << "K " << k;
    }
  }
}

struct Case {
  std::string model;
  std::size_t k;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.model << ", K = " << c.k; }

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string name = info.param.model + "_K" + std::to_string(info.param.k);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

class Accuracy : public testing::TestWithParam<Case> {};

// The mean over data sets is within 10% of the truth for canonical and marginal CE_1 and CE_2 (top-label:
// 15%), unless the data cannot resolve that: the tolerance is at least 2.5 standard errors of the mean
// (the estimates' own standard errors; at n = 3000 a single CE_1 estimate has a standard error of about
// 0.017 at K = 10, near the efficiency bound). Calibrated models (truth 0) read CE_1 <= 0.03 and CE_2 <=
// 0.02 at K = 10 (the bounds) or 0.03 at K = 3 (CE_2 is the root of a quantity centred at 0, so
// its noise floor is the root of a standard error, larger at small K).
// Two models of the zoo fall short of 10%, and the test holds them to what was measured, so that a
// regression still fails (docs/history.md, Section 7.4, says why): the non-monotone wiggle at K = 10
// and the marginal view of the top-class-only map. (The full-matrix confusion at K = 10 read canonical
// figures 16-17% short until the pilot gained its full-matrix candidate, 7.9.)
double known_shortfall(const std::string& model, std::size_t k, CalibrationType type) {
  if (model == "wiggle" && k == 10) return type == CalibrationType::top_label ? 0.15 : 0.60;
  if (model == "top-class-only" && type == CalibrationType::marginal) return 0.20;
  return 0;
}

TEST_P(Accuracy, MeanEstimateIsCloseToTheTruth) {
  const ZooModel m = ecekde::research::model_named(GetParam().model, GetParam().k);
  const auto truths = ecekde::research::truth(m, {1.0, 2.0}, 1 << 18);
  std::vector<ecekde::research::ZooData> sets;
  // seeds of their own per model, so that models do not share their label noise
  std::uint64_t base = 1469598103934665603ULL ^ m.k;  // FNV-1a of the name: the same on every platform
  for (char c : m.name) base = (base ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  for (std::size_t s = 0; s < kSets; ++s) sets.push_back(ecekde::research::sample(m, kN, base + s));
  for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
    for (const auto& t : truths) {
      const double truth = std::pow(truth_of(t, type), 1 / t.p);
      double mean = 0, se = 0;
      for (const auto& d : sets) {
        const ecekde::Result r = crossfit(d, type, t.p);
        mean += r.ce / kSets;
        // the standard error of CE_p from that of CE_p^p (delta method; at 0, the interval's width)
        se += (r.ce > 0 ? r.standard_error / (t.p * std::pow(r.ce, t.p - 1)) : r.ce_interval->upper / 2) / kSets;
      }
      const double resolution = 2.5 * se / std::sqrt(static_cast<double>(kSets));
      SCOPED_TRACE(testing::Message() << ecekde::to_string(type) << " CE_" << t.p << ": truth " << truth << ", mean "
                                      << mean << ", resolution " << resolution);
      if (truth < 1e-9) {  // calibrated (the 1-D truths carry rounding of order 1e-20)
        EXPECT_LE(mean, t.p == 1 || m.k < 10 ? 0.03 : 0.02);
      } else {
        const double relative = std::max(type == CalibrationType::top_label ? 0.15 : 0.10, known_shortfall(m.name, m.k, type));
        EXPECT_NEAR(mean, truth, std::max(relative * truth, resolution));
      }
    }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (std::size_t k : {3, 10})
    for (const ZooModel& m : ecekde::research::family(k)) out.push_back({m.name, k});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Zoo, Accuracy, testing::ValuesIn(cases()), case_name);

// At K = 100 (docs/history.md, 7.10) a class has about 30 positives at n = 3,000. Two pilots carry the
// figures there: marginal's pilot pooled over the classes (mixing with the uniform read marginal CE_1 46%
// low with a pilot per class), and the canonical candidate with per-class biases (class biases read
// canonical CE_1 17% and CE_2 32% low without it). Each is held to 15% of the truth over 4 data sets (at
// K = 100 single sets of the first differ by about 8%; its mean over 8 sets read -9.6%), and the pilot
// kept is checked by name: CE_1 and CE_2 of class bias, CE_1 of the mixing (what it read far low; its CE_2
// is left out for time).
TEST(LargeK, PooledAndClassBiasPilotsHoldTheTruthAtK100) {
  struct Check {
    const char* model;
    CalibrationType type;
    const char* pilot;
  };
  constexpr std::size_t kLargeKSets = 4;
  for (const Check& c : {Check{"mixed-with-uniform", CalibrationType::marginal, "pooled-beta"},
                         Check{"class-bias", CalibrationType::canonical, "class-biases"}}) {
    const ZooModel m = ecekde::research::model_named(c.model, 100);
    const auto truths = ecekde::research::truth(m, {1.0, 2.0}, 1 << 16);
    for (const auto& t : truths) {
      if (c.type == CalibrationType::marginal && t.p != 1) continue;
      const double truth = std::pow(truth_of(t, c.type), 1 / t.p);
      double mean = 0;
      for (std::size_t s = 0; s < kLargeKSets; ++s) {
        const ecekde::Result r = crossfit(ecekde::research::sample(m, kN, 1000 + s), c.type, t.p);
        EXPECT_EQ(r.pilot, c.pilot) << c.model;
        mean += r.ce / kLargeKSets;
      }
      EXPECT_NEAR(mean, truth, 0.15 * truth) << c.model << ", " << ecekde::to_string(c.type) << " CE_" << t.p;
    }
  }
}

// Exact zeros among the predictions (research::saturated; docs/history.md, 7.12): softmax outputs
// truncated to their largest 4 of 10 classes. Where labels land on the zeros (mixing with the uniform, 0.01
// each), canonical CE_1 read 99% low and marginal 61% (ecekde_accuracy saturated, 4 sets); the pilots'
// saturated indicators and the corrections' floor took them to -19% and -15% there (mixing without zeros
// falls as short at K = 10, 7.4), and to +3% and +10% on this test's sets. Held to 25% of the truth (CE_1
// and CE_2) over 4 data sets; the calibrated model's zeros read no error (CE_1 <= 0.03).
TEST(Saturated, ZerosAmongThePredictionsHoldTheTruth) {
  for (const ZooModel& m : ecekde::research::saturated(10)) {
    const bool calibrated = m.map == ecekde::research::Map::identity;
    // for time, two of the four: the calibrated one and the one whose zeros are wrong (mixing)
    if (!calibrated && m.map != ecekde::research::Map::mix_uniform) continue;
    const auto truths = ecekde::research::truth(m, {1.0, 2.0}, 1 << 16);
    for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal})
      for (const auto& t : truths) {
        if (calibrated && t.p != 1) continue;
        const double truth = std::pow(truth_of(t, type), 1 / t.p);
        double mean = 0;
        for (std::size_t s = 0; s < kSets; ++s)
          mean += crossfit(ecekde::research::sample(m, kN, 300 + s), type, t.p).ce / kSets;
        SCOPED_TRACE(testing::Message() << m.name << ", " << ecekde::to_string(type) << " CE_" << t.p << ": truth "
                                        << truth << ", mean " << mean);
        if (calibrated) {
          EXPECT_LE(mean, 0.03);
        } else {
          EXPECT_NEAR(mean, truth, 0.25 * truth);
        }
      }
  }
}

// The 95% intervals cover the truth in at least 90% of data sets (n = 1000, K = 3), over a calibrated and
// two miscalibrated models, every type, p = 1 and 2: 30 data sets each, 540 intervals.
TEST(Coverage, IntervalsCoverTheTruth) {
  std::size_t covered = 0, total = 0;
  for (const char* name : {"calibrated-logits", "peaked-overconfident", "class-bias"}) {
    const ZooModel m = ecekde::research::model_named(name, 3);
    const auto truths = ecekde::research::truth(m, {1.0, 2.0}, 1 << 18);
    for (std::size_t s = 0; s < 30; ++s) {
      const auto d = ecekde::research::sample(m, 1000, 5000 + s);
      for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
        for (const auto& t : truths) {
          const ecekde::Result r = crossfit(d, type, t.p);
          const double truth = std::pow(truth_of(t, type), 1 / t.p);
          covered += r.ce_interval->lower <= truth && truth <= r.ce_interval->upper;
          ++total;
        }
    }
  }
  EXPECT_GE(static_cast<double>(covered) / static_cast<double>(total), 0.90) << covered << " of " << total;
}

// Classifiers with a few distinct prediction vectors (research::CellModel: cells of 2 to 10 vectors,
// K = 2 to 4, over- and underconfident maps and one calibrated model), whose truths are finite sums. Two
// faults read these wrong while the continuous zoo above read right: the canonical pilot's top-label
// feature carried each row's own label (canonical figures up to 5 times their truth), and a soft threshold on
// the kernel correction shrank it by a term of the order of the standard error (p = 2 intervals covering
// 72-88%); docs/history.md, Section 7.8.
TEST(FewDistinctPredictions, MeanEstimatesAndIntervalsHoldTheTruth) {
  constexpr std::size_t kCellSets = 12, kCellN = 1000;
  using ecekde::research::CellModel;
  std::vector<std::pair<std::string, CellModel>> models;
  // A second draw of three shapes: with tied rows sharing a fold, which cells a draw put together moved
  // these models' CE_1 by 10 to 40 points (docs/history.md, 7.8).
  for (const auto& [cells, k, gamma, draws] : std::vector<std::tuple<std::size_t, std::size_t, double, std::size_t>>{
           {2, 2, 1.8, 1}, {3, 3, 1.8, 2}, {5, 3, 0.6, 2}, {4, 4, 1.8, 2}, {10, 3, 1.8, 1}, {3, 3, 1.0, 1}})
    for (std::size_t draw = 0; draw < draws; ++draw)
      models.emplace_back(std::to_string(cells) + " cells, K = " + std::to_string(k) + ", gamma " +
                              std::to_string(gamma) + ", draw " + std::to_string(draw),
                          ecekde::research::cell_model(cells, k, gamma, 31 * cells + k + 1000 * draw));
  // One cell far from calibrated beside one nearly calibrated, where the leak showed most: with it,
  // canonical CE_1 read 0.189 on average against a truth of 0.117 (n = 1000), above 0.3 in 7 of 60 data sets.
  models.emplace_back("two cells, one miscalibrated",
                      CellModel{2, {0.674, 0.326, 0.489, 0.511}, {0.787, 0.213, 0.480, 0.520}, {0.475, 0.525}});
  std::size_t covered = 0, total = 0;
  for (const auto& [name, m] : models) {
    std::vector<ecekde::research::ZooData> sets;
    for (std::size_t s = 0; s < kCellSets; ++s) sets.push_back(ecekde::research::sample(m, kCellN, 77 + s));
    for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
      for (double p : {1.0, 2.0}) {
        const double truth = truth_of(ecekde::research::truth(m, p), type);
        double mean = 0, se = 0;
        for (const auto& d : sets) {
          const ecekde::Result r = crossfit(d, type, p);
          mean += r.ce_pow_p / kCellSets;
          se += r.standard_error / kCellSets;
          covered += r.ce_pow_p_interval->lower <= truth && truth <= r.ce_pow_p_interval->upper;
          ++total;
        }
        SCOPED_TRACE(testing::Message() << name << ", " << ecekde::to_string(type) << " CE_" << p << "^" << p
                                        << ": truth " << truth << ", mean " << mean << ", standard error " << se);
        if (truth < 1e-12) {  // calibrated, to rounding: a zero-mean estimate clamped at 0 averages 0.4 se
          EXPECT_LE(mean, se);
        } else {
          EXPECT_NEAR(mean, truth, std::max(0.15 * truth, 3 * se / std::sqrt(static_cast<double>(kCellSets))));
        }
      }
  }
  EXPECT_GE(static_cast<double>(covered) / static_cast<double>(total), 0.90) << covered << " of " << total;
}

}  // namespace
