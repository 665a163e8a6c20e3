// RunControl: watching changes no number, progress ends at exactly 1, and every long entry point stops
// with Cancelled when cancelled before it starts or while it runs, for every calibration type and both
// thread counts.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/kernel_regression.hpp"
#include "generate.hpp"
#include "variants.hpp"

namespace {

using ecekde::CalibrationType;
using ecekde::Estimator;

struct Case {
  std::string name;
  std::function<void(ecekde::ProbsView, ecekde::LabelsView, const ecekde::EstimateOptions&)> run;
};

// Every long entry point, run with the given options (their execution carries the control).
std::vector<Case> entry_points() {
  using O = ecekde::EstimateOptions;
  return {
      {"estimate crossfit", [](auto p, auto y, const O& o) { ecekde::estimate(p, y, o); }},
      {"estimate paper",
       [](auto p, auto y, O o) {
         o.estimator = Estimator::paper;
         ecekde::estimate(p, y, o);
       }},
      {"select_bandwidth",
       [](auto p, auto y, const O& o) {
         ecekde::select_bandwidth(p, y, o.type, o.bandwidth_selection, o.execution);
       }},
      {"estimate_with_gradient", [](auto p, auto y, const O& o) { ecekde::estimate_with_gradient(p, y, o); }},
      {"bootstrap_kde", [](auto p, auto y, const O& o) { ecekde::bootstrap_kde(p, y, o, {.replicates = 20}); }},
      {"calibration_test_kde",
       [](auto p, auto y, const O& o) { ecekde::calibration_test_kde(p, y, o, {.replicates = 20}); }},
      {"kernel_regression",
       [](auto p, auto y, const O& o) {
         const std::vector<double> scores(p.rows(), 0.5);  // the one-dimensional types read at scores
         const auto queries = o.type == CalibrationType::canonical
                                  ? p
                                  : ecekde::ProbsView::row_major(scores.data(), scores.size(), 1);
         ecekde::kernel_regression(p, y, queries, o);
       }},
      {"generic bootstrap",
       [](auto p, auto y, const O& o) {
         ecekde::bootstrap(
             p, y, [&](auto pp, auto yy) { return ecekde::estimate(pp, yy, o).ce; }, {.replicates = 5}, o.execution);
       }},
  };
}

ecekde::EstimateOptions options_for(CalibrationType type, int threads, ecekde::RunControl* control) {
  ecekde::EstimateOptions o;
  o.type = type;
  o.execution.threads = threads;
  o.execution.block_size = 64;
  o.execution.control = control;
  return o;
}

TEST(RunControl, WatchingChangesNothingAndProgressEndsAtOne) {
  const auto d = testdata::softmax_predictions(300, 3, 7);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  for (Estimator estimator : {Estimator::crossfit, Estimator::paper})
    for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(to_string(estimator)) + " " + std::string(to_string(type)) + " " +
                     std::to_string(threads));
        ecekde::RunControl control;
        auto watched = options_for(type, threads, &control);
        watched.estimator = estimator;
        auto plain = watched;
        plain.execution.control = nullptr;
        const auto a = ecekde::estimate(probs, d.y, watched), b = ecekde::estimate(probs, d.y, plain);
        EXPECT_EQ(a.ce_pow_p, b.ce_pow_p);
        EXPECT_EQ(a.bandwidth, b.bandwidth);
        const auto progress = control.progress();
        EXPECT_GT(progress.done, 300.0 * 300.0);
        EXPECT_DOUBLE_EQ(progress.fraction(), 1.0);
      }
}

// The entry points plan their bandwidth search and the sweeps after it up front: the fraction seen by a
// watcher never steps back and never exceeds 1. (Not the generic bootstrap: it counts replicates.) Marginal
// for the crossfit estimate only, whose K pilots count as work of their own. (Under sanitizers n = 1,200:
// each run still takes long enough for hundreds of the watcher's samples.)
TEST(RunControl, PlannedFractionRisesMonotonically) {
  const auto d = testdata::softmax_predictions(testdata::kSanitized ? 1200 : 3000, 4, 11);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  for (const auto& c : entry_points())
    for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal}) {
      if (c.name == "generic bootstrap" || (type == CalibrationType::marginal && c.name != "estimate crossfit"))
        continue;
      SCOPED_TRACE(c.name + " " + std::string(to_string(type)));
      ecekde::RunControl control;
      std::atomic<bool> finished{false};
      std::vector<double> seen;
      std::thread watcher([&] {
        while (!finished) {
          seen.push_back(control.progress().fraction());
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      });
      c.run(probs, d.y, options_for(type, 2, &control));
      finished = true;
      watcher.join();
      ASSERT_GT(seen.size(), 3u);
      for (std::size_t i = 1; i < seen.size(); ++i) {
        ASSERT_GE(seen[i], seen[i - 1]) << "at sample " << i << " of " << seen.size();
        ASSERT_LE(seen[i], 1.0);
      }
      EXPECT_DOUBLE_EQ(control.progress().fraction(), 1.0);
    }
}

// The bootstrap recomputes exactly the rows whose replicate denominators underflow (a small h, whose
// weights the row's nearest neighbour dominates, left out of the resample). That work is counted: without
// it, progress sat at 100% for most of a canonical bootstrap at K = 1,000. The sweeps' work does not depend
// on h, so a run that recomputes rows counts more than one that does not, and both end at 1.
TEST(RunControl, BootstrapCountsTheRowsItRecomputes) {
  const auto d = testdata::softmax_predictions(200, 30, 5, 4.0);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  auto done_at = [&](double h) {
    ecekde::RunControl control;
    auto o = options_for(CalibrationType::canonical, 2, &control);
    o.estimator = Estimator::paper;
    o.bandwidth = h;
    ecekde::bootstrap_kde(probs, d.y, o, {.replicates = 16});
    EXPECT_DOUBLE_EQ(control.progress().fraction(), 1.0);
    return control.progress().done;
  };
  const double wide = done_at(0.5), narrow = done_at(1e-4);
  EXPECT_GE(narrow, wide + 200);  // at least one row recomputed against its 200 centres
}

TEST(RunControl, CancelledBeforeTheStartThrowsCancelled) {
  const auto d = testdata::softmax_predictions(200, 3, 3);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  for (const auto& c : entry_points())
    for (CalibrationType type : {CalibrationType::canonical, CalibrationType::top_label})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(c.name + " " + std::string(to_string(type)) + " threads " + std::to_string(threads));
        ecekde::RunControl control;
        control.cancel();
        EXPECT_THROW(c.run(probs, d.y, options_for(type, threads, &control)), ecekde::Cancelled);
      }
}

// Cancelled from another thread while running: the call throws Cancelled instead of finishing, having
// done only part of its work.
TEST(RunControl, CancelledWhileRunningStopsEarly) {
  const auto d = testdata::softmax_predictions(6000, 4, 5);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  for (const auto& c : entry_points())
    for (int threads : {1, 2}) {
      SCOPED_TRACE(c.name + " threads " + std::to_string(threads));
      ecekde::RunControl control;
      double planned = 0;  // the whole call's work, as planned when it was cancelled
      std::thread canceller([&] {
        while (control.progress().done == 0) std::this_thread::yield();  // running
        control.cancel();
        planned = control.progress().planned;
      });
      EXPECT_THROW(c.run(probs, d.y, options_for(CalibrationType::canonical, threads, &control)), ecekde::Cancelled);
      canceller.join();
      // (A cancelled call gives back the work it planned and did not start, so the fraction at its end
      // only describes the sweeps that had started.)
      EXPECT_LT(control.progress().done, 0.5 * planned);
    }
}

TEST(RunControl, ProgressTextAndTimeLeft) {
  using P = ecekde::RunControl::Progress;
  EXPECT_EQ(ecekde::progress_text(P{0, 0}, 10), "0.0%");
  EXPECT_EQ(ecekde::progress_text(P{45, 100}, 2), "45%");  // too early for a rate
  EXPECT_EQ(ecekde::progress_text(P{45, 100}, 10), "45%, about 12 s left");
  EXPECT_EQ(ecekde::progress_text(P{1, 1000}, 60), "0.1%, about 16.6 h left");
  EXPECT_EQ(ecekde::progress_text(P{1, 4}, 60), "25%, about 3 min left");
  EXPECT_EQ(ecekde::progress_text(P{999, 1000}, 100), "100%, less than 1 s left");
  EXPECT_EQ(ecekde::progress_text(P{5, 5}, 100), "100%");
  EXPECT_FALSE(ecekde::seconds_left(P{0, 10}, 100));
  EXPECT_DOUBLE_EQ(*ecekde::seconds_left(P{1, 4}, 30), 90.0);
}

}  // namespace
