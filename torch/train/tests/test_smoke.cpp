// Smoke test of the training study on a few hundred Fashion-MNIST images (from the Debian package the
// Makefile installs): every objective trains for a few short epochs with finite, decreasing loss, and
// an end-to-end run writes valid predictions and a readable result.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "ecekde/estimate.hpp"
#include "ecekde/io.hpp"
#include "ecekde/train/experiment.hpp"
#include "ecekde/train/trainer.hpp"

namespace {

using namespace ecekde::train;

const FashionMnist& data() {
  static const FashionMnist d = load_fashion_mnist();
  return d;
}

TrainOptions quick(Objective objective, Architecture architecture = Architecture::mlp) {
  TrainOptions t;
  t.model.architecture = architecture;
  t.model.width = architecture == Architecture::mlp ? 32 : 4;
  t.objective.objective = objective;
  t.epochs = 3;
  t.batch_size = 64;
  t.learning_rate = 0.05;
  return t;
}

void expect_trains(const TrainOptions& t, const Dataset& train, const Dataset& val, const Dataset& test) {
  const TrainedPredictions p = train_and_predict(train, val, test, t);
  ASSERT_EQ(p.history.size(), static_cast<std::size_t>(t.epochs));
  for (const EpochRecord& e : p.history) {
    EXPECT_TRUE(std::isfinite(e.loss)) << "epoch " << e.epoch;
    EXPECT_TRUE(std::isfinite(e.regularizer)) << "epoch " << e.epoch;
    EXPECT_GT(e.seconds, 0);
  }
  EXPECT_LT(p.history.back().loss, p.history.front().loss);
  const Objective o = t.objective.objective;
  if (o == Objective::kde_xe || o == Objective::mmce || o == Objective::mse_sharpness) {
    EXPECT_GT(p.history.front().regularizer, 0);
  }
  if (o == Objective::kde_xe || o == Objective::kde_xe_debiased || o == Objective::mse_sharpness) {
    EXPECT_GT(p.history.front().bandwidth, 0);
  }
  if (o == Objective::kde_xe_debiased) {
    EXPECT_GT(p.history.front().used_share, 0);
    EXPECT_LE(p.history.front().used_share, 1);
  }
  EXPECT_EQ(p.validation_logits.size(), val.size() * p.columns);
  EXPECT_EQ(p.test_logits.size(), test.size() * p.columns);
  for (double z : p.test_logits) ASSERT_TRUE(std::isfinite(z));
}

TEST(TrainSmoke, EveryMulticlassObjective) {
  const Dataset train = head(data().train, 320), val = head(data().validation, 100), test = head(data().test, 100);
  for (Objective o : {Objective::xe, Objective::kde_xe, Objective::kde_xe_debiased, Objective::mmce, Objective::focal,
                      Objective::focal53}) {
    SCOPED_TRACE(std::string(to_string(o)));
    TrainOptions t = quick(o);
    t.objective.lambda = 0.5;
    if (o == Objective::kde_xe_debiased) t.objective.p = 2;
    expect_trains(t, train, val, test);
  }
}

TEST(TrainSmoke, ResNet) {
  TrainOptions t = quick(Objective::kde_xe, Architecture::resnet);
  t.objective.lambda = 0.1;
  expect_trains(t, head(data().train, 256), head(data().validation, 50), head(data().test, 50));
}

TEST(TrainSmoke, BinaryObjectives) {
  const Dataset train = binary_task(head(data().train, 2000), 0, 6);
  const Dataset val = binary_task(head(data().validation, 500), 0, 6), test = binary_task(head(data().test, 500), 0, 6);
  ASSERT_GT(train.size(), 300u);
  for (Objective o : {Objective::mse, Objective::mse_sharpness}) {
    SCOPED_TRACE(std::string(to_string(o)));
    TrainOptions t = quick(o);
    t.objective.gamma = 0.5;
    expect_trains(t, train, val, test);
  }
}

TEST(TrainSmoke, SameSeedSameRun) {
  const Dataset train = head(data().train, 256), val = head(data().validation, 50);
  TrainOptions t = quick(Objective::kde_xe);
  t.epochs = 1;
  t.objective.lambda = 0.2;
  const TrainedPredictions a = train_and_predict(train, val, val, t), b = train_and_predict(train, val, val, t);
  EXPECT_EQ(a.history.front().loss, b.history.front().loss);
  EXPECT_EQ(a.test_logits, b.test_logits);
  t.seed = 1;
  EXPECT_NE(train_and_predict(train, val, val, t).test_logits, a.test_logits);
}

TEST(TrainSmoke, ValidateEverySkipsEpochs) {
  TrainOptions t = quick(Objective::xe);
  t.epochs = 5;
  t.validate_every = 2;
  const TrainedPredictions p = train_and_predict(head(data().train, 256), head(data().validation, 50),
                                                 head(data().test, 50), t);
  ASSERT_EQ(p.history.size(), 5u);
  for (const EpochRecord& e : p.history) {
    EXPECT_EQ(e.validated, e.epoch % 2 == 0 || e.epoch == 5) << "epoch " << e.epoch;
    EXPECT_EQ(std::isfinite(e.validation_accuracy), e.validated) << "epoch " << e.epoch;
  }
  EXPECT_EQ(format_epoch(p.history[0], 5).find("val acc"), std::string::npos);
  EXPECT_NE(format_epoch(p.history[1], 5).find("val acc"), std::string::npos);
}

// Bad options: one clear message each (ecekde-train prints it as one line).
TEST(TrainSmoke, BadOptionsAreRefused) {
  const Dataset train = head(data().train, 256), val = head(data().validation, 50);
  const auto message = [&](const TrainOptions& t) -> std::string {
    try {
      train_and_predict(train, val, val, t);
    } catch (const ecekde::Error& e) {
      return e.what();
    }
    return "no error";
  };
  TrainOptions t = quick(Objective::kde_xe);
  t.objective.lambda = -0.1;
  EXPECT_EQ(message(t), "lambda must be a finite number >= 0, got -0.100000");
  t = quick(Objective::kde_xe_debiased);
  t.objective.lambda = -1;
  t.objective.p = 2;
  EXPECT_EQ(message(t), "lambda must be a finite number >= 0, got -1.000000");
  t.objective.lambda = 0.1;
  t.objective.p = 1;
  EXPECT_EQ(message(t), "kde-xe-debiased estimates CE_2^2 and needs p = 2, got 1.000000");
  t = quick(Objective::mmce);
  t.objective.lambda = -2;
  EXPECT_EQ(message(t), "lambda must be a finite number >= 0, got -2.000000");
  t = quick(Objective::xe);
  t.validate_every = 0;
  EXPECT_EQ(message(t), "validate-every must be at least 1, got 0");
  try {
    parse_objective("kde-xe-unbiased");
    FAIL() << "no error";
  } catch (const ecekde::Error& e) {
    EXPECT_STREQ(e.what(), "unknown objective 'kde-xe-unbiased' (expected xe, kde-xe, kde-xe-debiased, mmce, focal, "
                           "focal53, mse or mse-sharpness)");
  }
  EXPECT_EQ(parse_objective("kde_xe_debiased"), Objective::kde_xe_debiased);
  try {
    take_first(data().train, 50001, "--train-size", "training examples");
    FAIL() << "no error";
  } catch (const ecekde::Error& e) {
    EXPECT_STREQ(e.what(), "--train-size 50001 exceeds the 50000 training examples");
  }
  EXPECT_EQ(take_first(data().train, 50000, "--train-size", "training examples").size(), 50000u);
  EXPECT_EQ(take_first(data().train, 0, "--train-size", "training examples").size(), 50000u);
}

TEST(TrainSmoke, RunWritesValidPredictionsAndResult) {
  const auto dir = std::filesystem::temp_directory_path() / ("ecekde-train-smoke-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ExperimentOptions e;
  e.train = quick(Objective::kde_xe);
  e.train.objective.lambda = 0.1;
  e.train_size = 320;
  e.eval_size = 300;
  e.evaluation.bootstrap = 10;
  const ExperimentResult r = run_experiment(e);
  ASSERT_TRUE(r.test.has_value());
  EXPECT_GT(r.temperature, 0);
  for (const Metrics* m : {&r.test->before, &r.test->after, &r.validation->before}) {
    EXPECT_GT(m->accuracy, 0.3);  // ten classes: chance is 0.1
    EXPECT_GT(m->ece_kde, 0);
    EXPECT_LE(m->ece_bin_lower, m->ece_bin_upper);
    EXPECT_FALSE(m->reliability.empty());
  }
  EXPECT_LE(r.test->after.nll, r.test->before.nll + 0.05);  // T is fitted on a different split

  const std::string prefix = (dir / "run").string();
  save_test_predictions(prefix, r);
  write_result_json((dir / "run.json").string(), e, r);
  const ecekde::io::Predictions p = ecekde::io::read_predictions(prefix + "_probs.npy", prefix + "_labels.npy");
  EXPECT_TRUE(std::filesystem::exists(prefix + "_logits.npy"));
  ASSERT_EQ(p.probs.view().rows(), 300u);
  ASSERT_EQ(p.probs.view().cols(), 10u);
  EXPECT_EQ(p.probs.view().dtype(), ecekde::ProbsView::DType::float32);
  ecekde::EstimateOptions paper;  // the training study's metric is the paper's estimator
  paper.estimator = ecekde::Estimator::paper;
  const ecekde::Result kde = ecekde::estimate(p.probs.view(), p.labels.view(), paper);  // validates rows and labels
  EXPECT_NEAR(kde.ce, r.test->before.ece_kde, 1e-4);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "run.json"));
  EXPECT_EQ(j["config"]["objective"], "kde-xe");
  EXPECT_EQ(j["history"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["test"]["after"]["ece_kde"].get<double>(), r.test->after.ece_kde);
  std::filesystem::remove_all(dir);
}

}  // namespace
