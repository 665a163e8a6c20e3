// Every kind of bad input gets a clear one-line error naming what is wrong; the exact messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/kernel_regression.hpp"
#include "ecekde/options.hpp"

namespace {

using ecekde::CalibrationType;

std::string error_of(const std::vector<double>& f, std::size_t k, const std::vector<std::int64_t>& y,
                     ecekde::EstimateOptions o = {}) {
  if (!o.bandwidth) o.bandwidth = 0.1;
  return testing_support::error_message([&] {
    ecekde::estimate(ecekde::ProbsView::row_major(f.data(), k == 0 ? 0 : f.size() / k, k), ecekde::LabelsView(y), o);
  });
}

const std::vector<double> good = {0.5, 0.5, 0.2, 0.8, 0.9, 0.1};
const std::vector<std::int64_t> labels = {0, 1, 0};

TEST(Inputs, ExactMessages) {
  EXPECT_EQ(error_of(good, 2, {0, 1}), "labels has 2 entries but probs has 3 rows");
  EXPECT_EQ(error_of({0.5, 0.5}, 2, {0}), "need at least 2 samples, got 1");
  EXPECT_EQ(error_of({0.5, NAN, 0.2, 0.8}, 2, {0, 1}), "probs row 0, column 1: value nan is not finite");
  EXPECT_EQ(error_of({0.5, 0.5, INFINITY, 0.8}, 2, {0, 1}), "probs row 1, column 0: value inf is not finite");
  EXPECT_EQ(error_of({0.5, 0.5, -0.25, 1.25}, 2, {0, 1}), "probs row 1, column 0: value -0.25 is negative");
  EXPECT_EQ(error_of({0.5, 0.5, 0.25, 0.7}, 2, {0, 1}),
            "probs row 1 sums to 0.95, not 1 (tolerance 1e-06); use renormalize to rescale rows");
  EXPECT_EQ(error_of(good, 2, {0, 2, 0}), "labels row 1: value 2 is outside [0, 2)");
  EXPECT_EQ(error_of(good, 2, {0, -1, 0}), "labels row 1: value -1 is outside [0, 2)");
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = CalibrationType::canonical;
  EXPECT_EQ(error_of({0.2, 0.7}, 1, {0, 1}, o), "type canonical needs at least 2 classes, probs has 1 column");
  o.type = CalibrationType::marginal;
  EXPECT_EQ(error_of({0.2, 0.7}, 1, {0, 1}, o), "type marginal needs at least 2 classes, probs has 1 column");
  o.type = CalibrationType::binary;
  EXPECT_EQ(error_of({0.2, 0.7, 0.1, 0.3, 0.3, 0.4}, 3, {0, 1}, o),
            "type binary needs 1 column (P(y = 1)) or 2 columns, probs has 3 columns");
  EXPECT_EQ(error_of({0.2, 1.5}, 1, {0, 1}, o), "probs row 1: value 1.5 is above 1 (one column holds P(y = 1))");
  EXPECT_EQ(error_of({0.2, 0.5}, 1, {0, 2}, o), "labels row 1: value 2 is outside [0, 2)");
  o = {};
  for (double h : {0.0, -1.0, double(NAN), double(INFINITY)}) {
    o.bandwidth = h;
    EXPECT_EQ(error_of(good, 2, labels, o), "bandwidth must be a finite number > 0, got " +
                                                std::string(std::isnan(h) ? "nan" : h == INFINITY ? "inf" : h == 0 ? "0" : "-1"));
  }
  o = {};
  for (double p : {0.5, double(NAN), -double(INFINITY)}) {
    o.p = p;
    EXPECT_EQ(error_of(good, 2, labels, o), "p must be a finite number >= 1, got " +
                                                std::string(std::isnan(p) ? "nan" : p == 0.5 ? "0.5" : "-inf"));
  }
  o = {};
  o.execution.threads = -2;
  EXPECT_EQ(error_of(good, 2, labels, o), "threads must be >= 0 (0 = all cores), got -2");
  o = {};
  o.execution.isa = "sse9";
  EXPECT_EQ(error_of(good, 2, labels, o), "unknown kernel variant 'sse9' (expected avx512, avx2 or baseline)");
  o = {};
  o.bandwidth_selection.grid = {0.1, -0.2};
  o.bandwidth.reset();
  EXPECT_THROW_MSG(ecekde::estimate(ecekde::ProbsView::row_major(good.data(), 3, 2), ecekde::LabelsView(labels), o),
                   "bandwidth grid values must be finite numbers > 0, got -0.2");
  EXPECT_THROW_MSG(ecekde::parse_name<ecekde::CalibrationType>("foo"),
                   "unknown calibration type 'foo' (expected canonical, marginal, top-label or binary)");
  EXPECT_THROW_MSG(ecekde::parse_name<ecekde::BandwidthCriterion>("bic"),
                   "unknown bandwidth criterion 'bic' (expected loo-likelihood, reference or loo-regression)");
}

// The paper's entry points refuse the options only estimate() reads (and every form but the paper's), and
// accept their defaults and estimator paper, the estimator they compute.
// An input whose working memory (about 100 bytes a row and class) exceeds any machine's stops before any
// copy of it is made, with the figure: the views here claim 10^9 x 10^4 entries over a buffer of two rows,
// which the check never reads.
TEST(Inputs, AnInputTooLargeForTheMachineStopsBeforeAnyCopy) {
  const std::vector<double> probs{0.5, 0.5, 0.25, 0.75};
  const std::vector<std::int64_t> labels{0, 1};
  const auto huge = ecekde::ProbsView::row_major(probs.data(), 1000000000, 10000);
  try {
    ecekde::estimate(huge, ecekde::LabelsView(labels.data(), 1000000000, 0));
    ADD_FAILURE() << "no error";
  } catch (const ecekde::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("an estimate over 1000000000 x 10000 probabilities needs about 1000000 GB of working memory, "
                         "more than this machine's ", 0),
              0u)
        << what;
    EXPECT_NE(what.find("--own-rows"), std::string::npos) << what;
  }
}

TEST(Inputs, PaperEntryPointsRefuseOptionsTheyDoNotRead) {
  const ecekde::ProbsView probs = ecekde::ProbsView::row_major(good.data(), 3, 2);
  const ecekde::LabelsView y(labels);
  const std::vector<double> queries = {0.3, 0.7};
  const ecekde::ProbsView at = ecekde::ProbsView::row_major(queries.data(), 2, 1);
  const auto entry_points = [&](const ecekde::EstimateOptions& o) {
    return std::vector<std::string>{
        testing_support::error_message([&] { ecekde::estimate_with_gradient(probs, y, o); }),
        testing_support::error_message([&] { ecekde::kernel_regression(probs, y, at, o); }),
        testing_support::error_message([&] { ecekde::bootstrap_kde(probs, y, o, {.replicates = 2}); }),
        testing_support::error_message([&] { ecekde::calibration_test_kde(probs, y, o, {.replicates = 2}); })};
  };
  const std::vector<std::string> names = {"estimate_with_gradient", "kernel_regression", "bootstrap_kde",
                                          "calibration_test_kde"};
  ecekde::EstimateOptions o;
  o.type = CalibrationType::binary;
  o.bandwidth = 0.1;
  for (const std::string& message : entry_points(o)) EXPECT_EQ(message, "<no ecekde::Error thrown>");
  o.estimator = ecekde::Estimator::paper;
  for (const std::string& message : entry_points(o)) EXPECT_EQ(message, "<no ecekde::Error thrown>");

  o.level = 0.9;
  std::vector<std::string> messages = entry_points(o);
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(messages[i], names[i] + "() does not read option level: only estimate() reads it");
  o.level = 0.95;
  o.folds = 3;
  messages = entry_points(o);
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(messages[i], names[i] + "() does not read option folds: only estimate() reads it");
  o.folds = 5;
  o.form = ecekde::KdeForm::debiased;
  o.p = 2;
  messages = entry_points(o);
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(messages[i], names[i] + " supports only the plug-in form, got form debiased");
  EXPECT_EQ(ecekde::options::unread_option_message("select_bandwidth", "p"),
            "select_bandwidth() does not read option p: only estimate(), estimate_with_gradient(), "
            "kernel_regression(), bootstrap_kde() and calibration_test_kde() read it");
}

TEST(Inputs, RenormalizeRescalesRowsAndRejectsZeroRows) {
  const std::vector<double> scaled = {1.0, 1.0, 0.4, 1.6, 1.8, 0.2};  // 2 x good
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.bandwidth = 0.1;
  o.renormalize = true;
  const auto a = ecekde::estimate(ecekde::ProbsView::row_major(scaled.data(), 3, 2), ecekde::LabelsView(labels), o);
  const auto b = ecekde::estimate(ecekde::ProbsView::row_major(good.data(), 3, 2), ecekde::LabelsView(labels), o);
  EXPECT_EQ(a.ce_pow_p, b.ce_pow_p);
  EXPECT_EQ(error_of({0.0, 0.0, 0.4, 0.6}, 2, {0, 1}, o), "probs row 0 sums to 0 and cannot be renormalized");
}

// float32 input: the tolerance grows with K (each entry rounds by up to 2^-24); float64 stays at 1e-6.
TEST(Inputs, Float32RowSumToleranceScalesWithClasses) {
  const std::size_t k = 200;
  std::vector<float> f(2 * k, 1.0f / k);
  f[0] += 4e-6f;  // off by 4e-6: accepted for float32 with K = 200 (tolerance 200 * 2^-24 = 1.19e-5)
  std::vector<std::int64_t> y = {0, 1};
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.bandwidth = 0.1;
  EXPECT_NO_THROW(ecekde::estimate(ecekde::ProbsView::row_major(f.data(), 2, k), ecekde::LabelsView(y), o));
  std::vector<double> d(f.begin(), f.end());
  const std::string message = testing_support::error_message(
      [&] { ecekde::estimate(ecekde::ProbsView::row_major(d.data(), 2, k), ecekde::LabelsView(y), o); });
  EXPECT_EQ(message.substr(0, 27), "probs row 0 sums to 1.00000") << message;
  EXPECT_NE(message.find("(tolerance 1e-06)"), std::string::npos) << message;
}

// Probabilities of exactly 0 and 1 and extreme bandwidths give finite values (documented rule).
TEST(Inputs, ZerosOnesAndExtremeBandwidthsAreFinite) {
  const std::vector<double> f = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0.5, 0.5, 0, 0, 0, 1};
  const std::vector<std::int64_t> y = {0, 1, 2, 1, 0, 2};
  for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
    for (double h : {1e-6, 1e-3, 1.0, 10.0}) {
      ecekde::EstimateOptions o;
      o.estimator = ecekde::Estimator::paper;
      o.type = type;
      o.bandwidth = h;
      const auto r = ecekde::estimate(ecekde::ProbsView::row_major(f.data(), 6, 3), ecekde::LabelsView(y), o);
      EXPECT_TRUE(std::isfinite(r.ce_pow_p)) << to_string(type) << " h=" << h;
      EXPECT_TRUE(std::isfinite(r.ce));
    }
  const std::vector<double> p = {0, 1, 1, 0, 0.5};
  const std::vector<std::int64_t> yb = {0, 1, 0, 1, 1};
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = CalibrationType::binary;
  o.bandwidth = 1e-6;
  EXPECT_TRUE(std::isfinite(
      ecekde::estimate(ecekde::ProbsView::column(std::span<const double>(p)), ecekde::LabelsView(yb), o).ce));
  o.bandwidth.reset();  // automatic selection on one-hot rows too
  const auto r = ecekde::estimate(ecekde::ProbsView::row_major(f.data(), 6, 3), ecekde::LabelsView(y), {});
  EXPECT_TRUE(std::isfinite(r.ce) && std::isfinite(r.bandwidth));
}

}  // namespace
