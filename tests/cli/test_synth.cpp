// End-to-end tests of `ecekde synth`: the files it writes hold exactly ecekde::generate_synthetic's data
// (NPY and CSV), its JSON truths are exactly ecekde::synthetic_ground_truth's, the files feed
// `ecekde estimate`, and bad input gives one line on stderr.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/io.hpp"
#include "ecekde/synthetic.hpp"
#include "files.hpp"

namespace {

using clitest::ecekde_cli;
using clitest::Output;
using nlohmann::json;

// Small truth settings so the test is quick.
const std::vector<std::string> kQuickTruth = {"--canonical-samples", "20000", "--inner-samples", "512",
                                              "--jackknife-groups", "8", "--threads", "1"};

std::vector<std::string> synth_args(std::vector<std::string> args, bool quick_truth = true) {
  args.insert(args.begin(), "synth");
  if (quick_truth) args.insert(args.end(), kQuickTruth.begin(), kQuickTruth.end());
  return args;
}

std::vector<double> doubles_of(const ecekde::ProbsView v) {
  std::vector<double> out;
  for (std::size_t r = 0; r < v.rows(); ++r)
    for (std::size_t c = 0; c < v.cols(); ++c) out.push_back(v(r, c));
  return out;
}

std::vector<std::int64_t> labels_of(const ecekde::LabelsView v) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(v[i]);
  return out;
}

void expect_truth(const json& j, const ecekde::TruthValue& t) {
  EXPECT_EQ(j.at("value").get<double>(), t.value);
  EXPECT_EQ(j.at("standard_error").get<double>(), t.standard_error);
  EXPECT_EQ(j.at("quadrature_error").get<double>(), t.quadrature_error);
}

TEST(Synth, WritesTheGeneratorsDataAndItsTruth) {
  testfiles::ScratchDir dir;
  for (const std::string ext : {".npy", ".csv"}) {
    SCOPED_TRACE(ext);
    const std::string probs = dir.path("f" + ext), labels = dir.path("y" + ext), calibrated = dir.path("p1" + ext);
    const Output o = ecekde_cli(dir, synth_args({"--n", "300", "--classes", "3", "--t1", "0.7", "--t2", "0.5",
                                                 "--seed", "12", "--probs", probs, "--labels", labels,
                                                 "--calibrated", calibrated, "--p", "1,2", "--json"}));
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(o.err, "");
    const ecekde::SyntheticModel model{3, 0.7, 0.5};
    const auto data = ecekde::generate_synthetic(model, 300, 12);
    EXPECT_EQ(doubles_of(ecekde::io::read_probabilities(probs).view()), data.probs);
    EXPECT_EQ(doubles_of(ecekde::io::read_probabilities(calibrated).view()), data.calibrated);
    EXPECT_EQ(labels_of(ecekde::io::read_labels(labels).view()), data.labels);

    const json doc = json::parse(o.out);
    EXPECT_EQ(doc.at("command"), "synth");
    EXPECT_EQ(doc.at("model"), (json{{"classes", 3}, {"t1", 0.7}, {"t2", 0.5}}));
    EXPECT_EQ(doc.at("n"), 300);
    EXPECT_EQ(doc.at("seed"), 12);
    EXPECT_EQ(doc.at("files"), (json{{"probs", probs}, {"labels", labels}, {"calibrated", calibrated}}));
    const json& truths = doc.at("ground_truth");
    ASSERT_EQ(truths.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      ecekde::GroundTruthOptions options;
      options.p = i == 0 ? 1 : 2;
      options.canonical_samples = 20000;
      options.inner_samples = 512;
      options.jackknife_groups = 8;
      options.seed = 12;
      options.threads = 1;
      const auto g = ecekde::synthetic_ground_truth(model, options);
      EXPECT_EQ(truths[i].at("p").get<double>(), options.p);
      expect_truth(truths[i].at("canonical"), g.canonical);
      expect_truth(truths[i].at("marginal"), g.marginal);
      expect_truth(truths[i].at("top-label"), g.top_label);
    }
    EXPECT_EQ(doc.at("ground_truth_options"),
              (json{{"canonical_samples", 20000}, {"inner_samples", 512}, {"jackknife_groups", 8}, {"seed", 12}}));
  }
}

TEST(Synth, FilesFeedEstimateAndTheTableNamesTheTruths) {
  testfiles::ScratchDir dir;
  const std::string probs = dir.path("f.npy"), labels = dir.path("y.csv");
  const Output o = ecekde_cli(dir, synth_args({"--n", "200", "--probs", probs, "--labels", labels}));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("model   K = 4, t1 = 0.6, t2 = 0.6; n = 200, seed = 0\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("wrote   " + probs + " (f), " + labels + " (y)\n"), std::string::npos);
  for (const char* type : {"\ncanonical   1     0.", "\nmarginal    1     0.", "\ntop-label   1     0."})
    EXPECT_NE(o.out.find(type), std::string::npos) << type;

  const Output e = ecekde_cli(dir, {"estimate", "--estimator", "paper", "--probs", probs, "--labels", labels, "--bandwidth", "0.05", "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  const auto data = ecekde::generate_synthetic({}, 200, 0);
  ecekde::EstimateOptions options;
  options.estimator = ecekde::Estimator::paper;
  options.bandwidth = 0.05;
  EXPECT_EQ(json::parse(e.out).at("results")[0].at("ce_pow_p").get<double>(),
            ecekde::estimate(data.probs_view(), data.labels_view(), options).ce_pow_p);

  const Output quiet = ecekde_cli(dir, synth_args({"--n", "20", "--probs", probs, "--labels", labels, "--no-truth", "--json"}, false));
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  const json doc = json::parse(quiet.out);
  EXPECT_TRUE(doc.at("ground_truth").empty());
  EXPECT_FALSE(doc.contains("ground_truth_options"));
  EXPECT_FALSE(doc.at("files").contains("calibrated"));
}

TEST(Synth, BadInputGivesOneLine) {
  testfiles::ScratchDir dir;
  const std::string probs = dir.path("f.npy"), labels = dir.path("y.npy");
  const auto expect_failure = [&](const std::vector<std::string>& args, const std::string& message, int status) {
    SCOPED_TRACE(message);
    const Output o = ecekde_cli(dir, synth_args(args, false));
    EXPECT_EQ(o.status, status);
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(o.err, "ecekde: error: " + message + "\n");
  };
  expect_failure({"--n", "10", "--probs", dir.path("f.txt"), "--labels", labels},
                 "--probs " + dir.path("f.txt") + ": unsupported extension (expected .npy or .csv)", 2);
  expect_failure({"--n", "10", "--probs", probs, "--labels", labels, "--calibrated", dir.path("c")},
                 "--calibrated " + dir.path("c") + ": unsupported extension (expected .npy or .csv)", 2);
  expect_failure({"--n", "10", "--probs", probs, "--labels", labels, "--classes", "1"},
                 "synthetic model: classes must be >= 2, got 1", 1);
  expect_failure({"--n", "10", "--probs", probs, "--labels", labels, "--t2", "0"},
                 "synthetic model: t2 must be a finite number > 0, got 0", 1);
  expect_failure({"--n", "0", "--probs", probs, "--labels", labels}, "generate_synthetic: n must be >= 1, got 0", 1);
  expect_failure({"--n", "10", "--probs", probs, "--labels", labels, "--jackknife-groups", "1"},
                 "ground truth: jackknife_groups must be >= 2, got 1", 1);
  expect_failure({"--n", "10", "--probs", dir.path("missing/f.npy"), "--labels", labels},
                 dir.path("missing/f.npy") + ": cannot write: No such file or directory", 1);
  const Output o = ecekde_cli(dir, {"synth", "--probs", probs, "--labels", labels});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--n is required"), std::string::npos) << o.err;
}

}  // namespace
