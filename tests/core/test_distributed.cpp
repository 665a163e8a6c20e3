// Distributed runs (ExecutionOptions::communicator) against the same computation alone: ranks are
// threads of this process (thread_ranks.hpp), so every path is checked without MPI. Everything but the
// gradient is bitwise the same for any number of ranks; the gradient agrees to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "core/inputs.hpp"
#include "core/reducers.hpp"
#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/kernel_regression.hpp"
#include "generate.hpp"
#include "thread_ranks.hpp"
#include "variants.hpp"

namespace {

using ecekde::CalibrationType;
using ecekde::Estimator;

ecekde::ProbsView view(const oracle::Data& d) { return ecekde::ProbsView::row_major(d.f.data(), d.n, d.k); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_TRUE(same_bits(a[i], b[i])) << what << " [" << i << "]: " << a[i] << " vs " << b[i];
}

void expect_same(const ecekde::Result& a, const ecekde::Result& b, const std::string& what) {
  expect_same({a.ce_pow_p, a.bandwidth, a.standard_error}, {b.ce_pow_p, b.bandwidth, b.standard_error}, what);
  expect_same(a.class_ce_pow_p, b.class_ce_pow_p, what + ", classes");
  ASSERT_EQ(a.selection.has_value(), b.selection.has_value()) << what;
  if (a.selection) {
    expect_same(a.selection->score, b.selection->score, what + ", criterion");
    EXPECT_TRUE(same_bits(a.selection->criterion_choice, b.selection->criterion_choice)) << what;
    expect_same(a.selection->refined_score, b.selection->refined_score, what + ", refinement");
  }
  EXPECT_EQ(a.warnings, b.warnings) << what;
  EXPECT_EQ(a.pilot, b.pilot) << what;
}

// f(options) alone, then on each number of ranks (options with the rank's communicator); every rank's
// value must equal the lone one (check). Under sanitizers 3 and 4 ranks only: an uneven and an even split.
template <class F, class Check>
void on_ranks(const ecekde::EstimateOptions& options, F f, Check check) {
  const auto alone = f(options);
  for (int ranks : {1, 2, 3, 4}) {
    if (testdata::kSanitized && ranks < 3) continue;
    std::vector<std::decay_t<decltype(alone)>> got(static_cast<std::size_t>(ranks));
    ecekde::testing::ThreadRanks group(ranks);
    group.run([&](int rank, ecekde::Communicator& comm) {
      ecekde::EstimateOptions split = options;
      split.execution.communicator = &comm;
      got[static_cast<std::size_t>(rank)] = f(split);
    });
    for (int r = 0; r < ranks; ++r) check(alone, got[static_cast<std::size_t>(r)], ranks, r);
  }
}

// The sweep itself: one reducer's per-row results, over block sizes, thread counts and record budgets
// that cut the rows into rounds of one row, a few rows, or all of them.
TEST(Distributed, SweepRowsMatchAloneBitwise) {
  const oracle::Data d = testdata::softmax_predictions(301, 5, 11);
  const ecekde::detail::LabelledPoints lp =
      ecekde::detail::make_problems(ecekde::detail::read_predictions(view(d), ecekde::LabelsView(d.y), false),
                                    CalibrationType::canonical)[0];
  std::vector<double> offsets(d.n);
  lp.points.centre_offsets(0.05, offsets, 1);
  for (std::size_t block : {7, 64, 512})
    for (int threads : {1, 2})
      for (std::size_t record_bytes : {std::size_t{1}, std::size_t{6 * 8 * 40}, ecekde::detail::kRecordBytes}) {
        auto sweep = [&](ecekde::Communicator* comm) {
          auto plan = ecekde::detail::SweepPlan::from({.threads = threads, .block_size = block});
          plan.communicator = comm;
          plan.record_bytes = record_bytes;
          std::vector<double> out(d.n * 6, -1.0);
          ecekde::detail::sweep(lp.points, plan,
                                ecekde::detail::ClassSums(lp, *plan.kernels, offsets, 20.0,
                                                          [&](std::size_t j, double m, const double* sums) {
                                                            out[j * 6] = m;
                                                            std::copy_n(sums, 5, out.begin() + static_cast<std::ptrdiff_t>(j * 6 + 1));
                                                          }));
          return out;
        };
        const std::vector<double> alone = sweep(nullptr);
        for (int ranks : {2, 3, 4}) {
          ecekde::testing::ThreadRanks group(ranks);
          group.run([&](int, ecekde::Communicator& comm) {
            expect_same(alone, sweep(&comm), "block " + std::to_string(block) + ", " + std::to_string(ranks) + " ranks");
          });
        }
      }
}

struct Case {
  CalibrationType type;
  std::size_t k;
};

// Every type, both estimators (crossfit at p = 1 and 2), automatic and fixed bandwidths, the score tree and the full sweep, float
// and double: the whole Result on every rank equals the lone one, bitwise. Marginal with 12 classes on
// one thread spreads its problems over up to 3 ranks (4 per rank and thread), and splits rows on 4.
TEST(Distributed, EstimatesMatchAloneBitwise) {
  const std::vector<Case> cases{{CalibrationType::canonical, 4},
                                {CalibrationType::marginal, 12},
                                {CalibrationType::top_label, 6},
                                {CalibrationType::binary, 1}};
  for (const Case& c : cases) {
    const oracle::Data d = c.k == 1 ? testdata::binary_predictions(240, 3, 1.5)
                                    : testdata::softmax_predictions(240, c.k, 5, 2.0, 1.4);
    for (auto [est, p] : {std::pair{Estimator::crossfit, 1.0}, std::pair{Estimator::crossfit, 2.0},
                          std::pair{Estimator::paper, 2.0}})
      for (std::optional<double> h : {std::optional<double>{}, std::optional<double>{0.08}})
        for (bool full_sweep : {false, true}) {
          if (full_sweep && c.type == CalibrationType::canonical) continue;  // canonical always sweeps
          ecekde::EstimateOptions o;
          o.estimator = est;
          o.type = c.type;
          o.bandwidth = h;
          o.p = p;
          o.bandwidth_selection.max_rows = 150;  // the criterion on a subset of the rows, then all rows
          o.execution.threads = 1;
          o.execution.full_sweep = full_sweep;
          const std::string what = std::string(ecekde::to_string(c.type)) + (est == Estimator::paper ? " paper" : " crossfit") +
                                   " p " + std::to_string(p) +
                                   (h ? " fixed h" : " automatic h") + (full_sweep ? " full sweep" : "");
          on_ranks(
              o,
              [&](const ecekde::EstimateOptions& with) {
                return ecekde::estimate(view(d), ecekde::LabelsView(d.y), with);
              },
              [&](const ecekde::Result& a, const ecekde::Result& b, int ranks, int rank) {
                expect_same(a, b, what + " on " + std::to_string(ranks) + " ranks, rank " + std::to_string(rank));
              });
        }
  }
}

// The canonical pilot's full-matrix candidate split across ranks (each fits its share of the folds, and
// the choice reads the combined pilots): labels drawn from f with classes 0 and 1 swapped, where the
// candidate is kept.
TEST(Distributed, FullMatrixPilotMatchesAloneBitwise) {
  oracle::Data d = testdata::softmax_predictions(240, 4, 6, 2.0, 1.0);
  ecekde::Rng draws(3);
  for (std::size_t j = 0; j < d.n; ++j) {
    std::vector<double> q(d.f.begin() + static_cast<std::ptrdiff_t>(j * d.k), d.f.begin() + static_cast<std::ptrdiff_t>((j + 1) * d.k));
    std::swap(q[0], q[1]);
    d.y[j] = static_cast<std::int64_t>(draws.categorical(q));
  }
  ecekde::EstimateOptions o;
  o.execution.threads = 1;
  const auto run = [&](const ecekde::EstimateOptions& with) { return ecekde::estimate(view(d), ecekde::LabelsView(d.y), with); };
  EXPECT_EQ(run(o).pilot, "full-matrix");
  on_ranks(o, run, [&](const ecekde::Result& a, const ecekde::Result& b, int ranks, int rank) {
    expect_same(a, b, "swapped classes on " + std::to_string(ranks) + " ranks, rank " + std::to_string(rank));
  });
}

// Marginal's pooled pilot is fitted on every rank from the same pairs (each rank's problems hold every
// row): bitwise as alone on 1-4 ranks, on 1 and 2 threads, and pooled (the classes share one map). Alone,
// the criterion's corrections (every row) are kept for the final ones; on ranks each rank sweeps its
// problems again at the chosen bandwidth: the two forms are compared too.
TEST(Distributed, PooledPilotMatchesAloneBitwise) {
  oracle::Data d = testdata::softmax_predictions(600, 12, 13, 3.0);
  testdata::mix_with_uniform(d, 0.3, 14);
  for (int threads : {1, 2}) {
    ecekde::EstimateOptions o;
    o.type = CalibrationType::marginal;
    o.execution.threads = threads;
    const auto run = [&](const ecekde::EstimateOptions& with) { return ecekde::estimate(view(d), ecekde::LabelsView(d.y), with); };
    EXPECT_EQ(run(o).pilot, "pooled-beta");
    on_ranks(o, run, [&](const ecekde::Result& a, const ecekde::Result& b, int ranks, int rank) {
      expect_same(a, b, "pooled, " + std::to_string(threads) + " threads, " + std::to_string(ranks) + " ranks, rank " + std::to_string(rank));
    });
  }
}

// Fewer rows than ranks: some ranks have no rows, no problems, no folds, no replicates.
TEST(Distributed, TinyInputsMatchAloneBitwise) {
  for (std::size_t n : {2, 3, 5})
    for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
      for (Estimator est : {Estimator::crossfit, Estimator::paper}) {
        const oracle::Data d = testdata::softmax_predictions(n, 3, n);
        ecekde::EstimateOptions o;
        o.estimator = est;
        o.type = type;
        o.execution.threads = 2;
        on_ranks(
            o, [&](const ecekde::EstimateOptions& with) { return ecekde::estimate(view(d), ecekde::LabelsView(d.y), with); },
            [&](const ecekde::Result& a, const ecekde::Result& b, int ranks, int) {
              expect_same(a, b, "n = " + std::to_string(n) + " on " + std::to_string(ranks) + " ranks");
            });
      }
}

TEST(Distributed, FloatPathAndThreadsMatchAloneBitwise) {
  const oracle::Data d = testdata::softmax_predictions(500, 10, 8, 2.0, 1.3);
  for (int threads : {1, 2}) {
    ecekde::EstimateOptions o;
    o.estimator = Estimator::paper;
    o.bandwidth = 0.03;
    o.execution.threads = threads;
    o.execution.precision = ecekde::Precision::single;
    o.execution.block_size = 32;
    on_ranks(
        o,
        [&](const ecekde::EstimateOptions& with) {
          return ecekde::estimate(view(d), ecekde::LabelsView(d.y), with);
        },
        [&](const ecekde::Result& a, const ecekde::Result& b, int, int) { expect_same(a, b, "float"); });
  }
}

// The gradient's centre side adds the ranks' partial sums: equal to rounding, not bitwise.
TEST(Distributed, GradientMatchesAloneToRounding) {
  for (CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal}) {
    const oracle::Data d = testdata::softmax_predictions(260, 4, 21, 2.0, 1.5);
    ecekde::EstimateOptions o;
    o.estimator = Estimator::paper;
    o.type = type;
    o.bandwidth = 0.1;
    o.p = 2;
    o.execution.threads = 2;
    o.execution.block_size = 40;
    on_ranks(
        o,
        [&](const ecekde::EstimateOptions& with) {
          return ecekde::estimate_with_gradient(view(d), ecekde::LabelsView(d.y), with);
        },
        [&](const ecekde::GradientResult& a, const ecekde::GradientResult& b, int ranks, int) {
          EXPECT_TRUE(same_bits(a.result.ce_pow_p, b.result.ce_pow_p));
          double largest = 0, diff = 0;
          for (std::size_t i = 0; i < a.grad_ce_pow_p.size(); ++i) {
            largest = std::max(largest, std::fabs(a.grad_ce_pow_p[i]));
            diff = std::max(diff, std::fabs(a.grad_ce_pow_p[i] - b.grad_ce_pow_p[i]));
          }
          EXPECT_LE(diff, 1e-13 * largest) << ranks << " ranks";
          EXPECT_GT(largest, 0);
        });
  }
}

TEST(Distributed, ResamplingMatchesAloneBitwise) {
  const oracle::Data d = testdata::softmax_predictions(200, 3, 31, 2.0, 1.6);
  const ecekde::LabelsView y(d.y);
  ecekde::EstimateOptions o;
  o.estimator = Estimator::paper;
  o.type = CalibrationType::top_label;
  o.execution.threads = 2;
  ecekde::BootstrapOptions b;
  b.replicates = 24;
  on_ranks(
      o,
      [&](const ecekde::EstimateOptions& with) {
        const auto boot = ecekde::bootstrap_kde(view(d), y, with, b);
        ecekde::EstimateOptions fixed = with;
        fixed.bandwidth = boot.result.bandwidth;
        const auto test = ecekde::calibration_test_kde(view(d), y, fixed, {.replicates = 24});
        ecekde::BinnedOptions binned;
        auto statistic = [&](ecekde::ProbsView f, ecekde::LabelsView l) {
          return ecekde::binned_calibration_error(f, l, binned).ce_pow_p;
        };
        const auto any = ecekde::bootstrap(view(d), y, statistic, b, with.execution);
        const auto any_test = ecekde::calibration_test(view(d), y, statistic, {.replicates = 24}, with.execution);
        std::vector<double> all = boot.ce_pow_p.replicates;
        all.insert(all.end(), test.null_values.begin(), test.null_values.end());
        all.insert(all.end(), any.replicates.begin(), any.replicates.end());
        all.insert(all.end(), any_test.null_values.begin(), any_test.null_values.end());
        all.push_back(test.p_value);
        all.push_back(any_test.p_value);
        return all;
      },
      [&](const std::vector<double>& a, const std::vector<double>& b2, int ranks, int) {
        expect_same(a, b2, "resampling on " + std::to_string(ranks) + " ranks");
      });
}

TEST(Distributed, KernelRegressionMatchesAloneBitwise) {
  const oracle::Data d = testdata::softmax_predictions(300, 3, 41);
  std::vector<double> queries{0.1, 0.35, 0.5, 0.72, 0.9, 0.99};
  ecekde::EstimateOptions o;
  o.type = CalibrationType::top_label;
  o.execution.threads = 1;
  on_ranks(
      o,
      [&](const ecekde::EstimateOptions& with) {
        const auto r = ecekde::kernel_regression(view(d), ecekde::LabelsView(d.y),
                                                 ecekde::ProbsView::row_major(queries.data(), queries.size(), 1), with);
        std::vector<double> all = r.expectation;
        all.insert(all.end(), r.log_density.begin(), r.log_density.end());
        all.push_back(r.bandwidth);
        return all;
      },
      [&](const std::vector<double>& a, const std::vector<double>& b, int, int) { expect_same(a, b, "regression"); });
}

// Each of two ranks' estimate() error message ("" if none), for the data and options setup(rank, o)
// picks (one thread; the rank's communicator is added afterwards).
std::vector<std::string> errors_on_two_ranks(
    const std::function<const oracle::Data&(int rank, ecekde::EstimateOptions& o)>& setup) {
  std::vector<std::string> messages(2);
  ecekde::testing::ThreadRanks group(2);
  group.run([&](int rank, ecekde::Communicator& comm) {
    ecekde::EstimateOptions o;
    o.execution.threads = 1;
    const oracle::Data& d = setup(rank, o);
    o.execution.communicator = &comm;
    try {
      ecekde::estimate(view(d), ecekde::LabelsView(d.y), o);
    } catch (const ecekde::Error& e) {
      messages[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  return messages;
}

// Ranks given different data stop with one message on every rank instead of combining unrelated sums.
TEST(Distributed, DifferentInputsOnTheRanksAreAnError) {
  const oracle::Data a = testdata::softmax_predictions(120, 3, 1), b = testdata::softmax_predictions(100, 3, 2);
  std::vector<std::string> messages =
      errors_on_two_ranks([&](int rank, ecekde::EstimateOptions&) -> const oracle::Data& { return rank == 0 ? a : b; });
  EXPECT_EQ(messages[0], messages[1]);
  EXPECT_NE(messages[0].find("different inputs"), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find("rank 1: n = 100, K = 3"), std::string::npos) << messages[0];

  // The same data with different options (one rank a fixed h, the other an automatic one): the same.
  for (Estimator est : {Estimator::crossfit, Estimator::paper}) {
    messages = errors_on_two_ranks([&](int rank, ecekde::EstimateOptions& o) -> const oracle::Data& {
      o.estimator = est;
      if (rank == 1) o.bandwidth = 0.1;
      return a;
    });
    EXPECT_EQ(messages[0], messages[1]);
    EXPECT_NE(messages[0].find("different inputs or options (rank 0: n = 120, K = 3; rank 1: n = 120, K = 3)"),
              std::string::npos)
        << messages[0];
  }
}

}  // namespace
