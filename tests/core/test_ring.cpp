// Ranks that each pass only their own rows (ExecutionOptions::own_rows; src/core/ring.hpp), as threads of
// this process (thread_ranks.hpp): the estimate and its bandwidth criterion against the plain oracle and
// against estimate() alone on the whole input, over sizes, ranks (including ranks with no rows), threads,
// block sizes, bandwidths and p; bad input on one rank; what the ring refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "core/crossfit/correction.hpp"
#include "core/distributed.hpp"
#include "core/ring_estimate.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/kernel_regression.hpp"
#include "generate.hpp"
#include "oracle.hpp"
#include "thread_ranks.hpp"
#include "variants.hpp"

namespace {

using ecekde::CalibrationType;
using ecekde::Estimator;

// Rank `rank` of `ranks`'s rows of d: the consecutive share ecekde's own splits use.
struct Slice {
  ecekde::ProbsView probs;
  ecekde::LabelsView labels;
};

Slice slice_of(const oracle::Data& d, int rank, int ranks) {
  const ecekde::detail::Share s = ecekde::detail::share_of(d.n, rank, ranks);
  return {ecekde::ProbsView::row_major(d.f.data() + s.begin * d.k, s.size(), d.k),
          ecekde::LabelsView(d.y.data() + s.begin, s.size())};
}

ecekde::EstimateOptions paper_canonical() {
  ecekde::EstimateOptions o;
  o.estimator = Estimator::paper;
  o.type = CalibrationType::canonical;
  o.execution.own_rows = true;
  return o;
}

// Every rank's call(its slice of d, options with its communicator), on `ranks` ranks as threads.
template <class Call>
auto each_rank(const oracle::Data& d, int ranks, const ecekde::EstimateOptions& options, Call call) {
  std::vector<decltype(call(std::declval<const Slice&>(), options))> got(static_cast<std::size_t>(ranks));
  ecekde::testing::ThreadRanks group(ranks);
  group.run([&](int rank, ecekde::Communicator& comm) {
    ecekde::EstimateOptions mine = options;
    mine.execution.communicator = &comm;
    got[static_cast<std::size_t>(rank)] = call(slice_of(d, rank, ranks), mine);
  });
  return got;
}

// Every rank's estimate from its own rows.
std::vector<ecekde::Result> on_ranks(const oracle::Data& d, int ranks, const ecekde::EstimateOptions& options) {
  return each_rank(d, ranks, options, [](const Slice& s, const ecekde::EstimateOptions& o) {
    return ecekde::estimate(s.probs, s.labels, o);
  });
}

double relative(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

// The grid the resampling's ring tests run over: check(ranks, options, sums_bytes, what) for every rank count
// (testdata::rank_counts), blocks of 5 and 512 (in the options), and the rows going round in groups of one row
// or all at once.
template <class Check>
void over_ring_grid(const oracle::Data& d, const ecekde::EstimateOptions& o, Check check) {
  for (int ranks : testdata::rank_counts())
    for (std::size_t block : {5, 512})
      for (std::size_t sums_bytes : {std::size_t{1}, ecekde::detail::kRingSumsBytes}) {
        const std::string what = "n " + std::to_string(d.n) + ", K " + std::to_string(d.k) + ", " +
                                 std::to_string(ranks) + " ranks, block " + std::to_string(block) +
                                 (sums_bytes == 1 ? ", groups of one row" : "");
        ecekde::EstimateOptions blocked = o;
        blocked.execution.block_size = block;
        check(ranks, blocked, sums_bytes, what);
      }
}

// At a fixed bandwidth: the plain formula of the paper, to 1e-12 relative, on every rank, however the rows
// are split (n = 3 on 4 ranks leaves one rank without rows) and swept.
TEST(Ring, FixedBandwidthMatchesTheOracle) {
  for (std::size_t k : {3, 10})
    for (std::size_t n : {3, 8, 61, 203}) {
      const oracle::Data d = testdata::softmax_predictions(n, k, 100 + n + k);
      for (double h : {0.03, 0.4})
        for (double p : {1.0, 2.0}) {
          const double expected = oracle::canonical(d, h, p);
          for (int ranks : testdata::rank_counts())
            for (int threads : {1, 2})
              for (std::size_t block : {5, 512}) {
                ecekde::EstimateOptions o = paper_canonical();
                o.bandwidth = h;
                o.p = p;
                o.execution.threads = threads;
                o.execution.block_size = block;
                const std::string what = "n " + std::to_string(n) + ", K " + std::to_string(k) + ", h " +
                                         std::to_string(h) + ", p " + std::to_string(p) + ", " +
                                         std::to_string(ranks) + " ranks, " + std::to_string(threads) +
                                         " threads, block " + std::to_string(block);
                for (const ecekde::Result& r : on_ranks(d, ranks, o)) {
                  EXPECT_LT(relative(r.ce_pow_p, expected), 1e-12) << what << ": " << r.ce_pow_p << " vs " << expected;
                  EXPECT_EQ(r.n, n) << what;
                  EXPECT_EQ(r.k, k) << what;
                  EXPECT_EQ(r.bandwidth, h) << what;
                }
              }
        }
    }
}

// The automatic bandwidth: the criterion on the grid equals the oracle's leave-one-out likelihood, and the
// whole search (grid, refinement, answer) equals the one of estimate() alone on the whole input, with
// every row in the criterion and with a random subset of rows (max_rows), for both likelihood criteria.
TEST(Ring, AutomaticBandwidthMatchesAlone) {
  const oracle::Data d = testdata::softmax_predictions(230, 4, 7);
  for (auto criterion : {ecekde::BandwidthCriterion::loo_likelihood, ecekde::BandwidthCriterion::reference})
    for (std::size_t max_rows : {0, 57}) {
      ecekde::EstimateOptions o = paper_canonical();
      o.bandwidth_selection.criterion = criterion;
      o.bandwidth_selection.max_rows = max_rows;
      o.execution.threads = 2;
      ecekde::EstimateOptions whole = o;
      whole.execution.own_rows = false;
      const ecekde::Result alone = ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                                    ecekde::LabelsView(d.y), whole);
      ASSERT_TRUE(alone.selection);
      for (int ranks : testdata::rank_counts()) {
        const std::string what = std::string(ecekde::to_string(criterion)) + ", max_rows " + std::to_string(max_rows) +
                                 ", " + std::to_string(ranks) + " ranks";
        for (const ecekde::Result& r : on_ranks(d, ranks, o)) {
          ASSERT_TRUE(r.selection) << what;
          ASSERT_EQ(r.selection->score.size(), alone.selection->score.size()) << what;
          for (std::size_t b = 0; b < r.selection->score.size(); ++b) {
            EXPECT_LT(relative(r.selection->score[b], alone.selection->score[b]), 1e-12) << what << ", grid " << b;
            if (max_rows == 0 && criterion == ecekde::BandwidthCriterion::loo_likelihood) {
              EXPECT_LT(relative(r.selection->score[b], oracle::loo_canonical(d, r.selection->grid[b])), 1e-12)
                  << what << ", oracle, grid " << b;
            }
          }
          ASSERT_EQ(r.selection->refined_grid.size(), alone.selection->refined_grid.size()) << what;
          EXPECT_EQ(r.selection->rows, alone.selection->rows) << what;
          EXPECT_LT(relative(r.bandwidth, alone.bandwidth), 1e-12) << what;
          EXPECT_LT(relative(r.ce_pow_p, alone.ce_pow_p), 1e-12) << what;
        }
      }
    }
}

// The default crossfit estimator on the ring: pilots fitted over every rank's rows (distributed Newton sums,
// knots as order statistics over the ranks), corrections from the travelling residuals, the Brier criterion,
// the standard error and the warnings summed over the ranks; the whole Result equals estimate() alone on the
// whole input to 1e-12 relative. K = 70 takes the wide payload (K >= 64) and fits the pilot with class
// biases as a candidate (64 < K <= 128), chosen by a held-out log-loss summed over the ranks; n = 60
// at K = 10 warns of too few samples. With labels drawn from f with two classes swapped, the pilot keeps its
// full-matrix candidate, chosen by a held-out log-loss summed over the ranks. With the last third of the rows
// truncated to two classes, only the last ranks hold saturated probabilities, and every rank takes the
// pilots' indicators and the corrections' floor all the same. On a local bump (n = 1,500, p = 2, a grid of
// four bandwidths) the pilot keeps its trees, every split chosen from histograms summed over the ranks and
// the count of rounds from log-losses summed over them; with two folds (no trees) the estimate takes
// CE_2^2's narrower candidate, its whole correction and its comparison with the criterion's summed over the
// ranks, and so does every rank.
TEST(Ring, CrossfitMatchesAlone) {
  struct Case {
    std::size_t n, k;
    std::optional<double> h;
    std::size_t max_rows;
    bool tied = false;  // every other row one of three vectors: tied rows on every rank, dealt to the folds in turn
    bool swapped = false;  // labels drawn from f with classes 0 and 1 exchanged
    bool saturated = false;  // the last third of the rows truncated to two classes
    std::size_t mean_rows = 0;  // the row mean over a random subset of rows, those of every rank
    double p = 1;
    bool bump = false;  // labels from a band of the simplex where class 0 has probability 0.7, on a grid of four
    std::size_t folds = 5;
  };
  for (const Case& c : {Case{60, 10, std::nullopt, 0}, Case{240, 3, std::nullopt, 0}, Case{240, 3, 0.05, 0},
                        Case{301, 10, std::nullopt, 90}, Case{150, 70, std::nullopt, 0}, Case{157, 4, std::nullopt, 0, true},
                        Case{240, 4, std::nullopt, 0, false, true},
                        Case{240, 5, std::nullopt, 0, false, false, true},
                        Case{301, 10, std::nullopt, 90, false, false, false, 120},
                        Case{240, 3, 0.05, 0, false, false, false, 100},
                        Case{301, 10, std::nullopt, 90, false, false, false, 120, 2.0},
                        Case{1500, 3, std::nullopt, 150, false, false, false, 0, 2.0, true},
                        Case{1500, 3, std::nullopt, 150, false, false, false, 0, 2.0, true, 2}}) {
    oracle::Data d = c.bump ? testdata::softmax_predictions(c.n, c.k, 5 + c.n)
                            : testdata::softmax_predictions(c.n, c.k, 40 + c.n + c.k, 2.0, 1.4);
    ecekde::Rng band(c.n + 6);
    for (std::size_t j = 0; c.bump && j < c.n; ++j) {
      std::vector<double> q(d.f.begin() + static_cast<std::ptrdiff_t>(j * c.k), d.f.begin() + static_cast<std::ptrdiff_t>((j + 1) * c.k));
      if (q[0] > 0.25 && q[0] < 0.45) q = {0.7, 0.15, 0.15};
      d.y[j] = static_cast<std::int64_t>(band.categorical(q));
    }
    if (c.saturated) testdata::truncate(d, 2, 2 * c.n / 3);
    for (std::size_t j = 2; c.tied && j < c.n; j += 2)
      std::copy_n(d.f.begin() + static_cast<std::ptrdiff_t>((j / 2 % 3) * c.k), c.k,
                  d.f.begin() + static_cast<std::ptrdiff_t>(j * c.k));
    ecekde::Rng draws(c.n);
    for (std::size_t j = 0; c.swapped && j < c.n; ++j) {
      std::vector<double> q(d.f.begin() + static_cast<std::ptrdiff_t>(j * c.k), d.f.begin() + static_cast<std::ptrdiff_t>((j + 1) * c.k));
      std::swap(q[0], q[1]);
      d.y[j] = static_cast<std::int64_t>(draws.categorical(q));
    }
    ecekde::EstimateOptions o = paper_canonical();
    o.estimator = Estimator::crossfit;
    o.bandwidth = c.h;
    o.bandwidth_selection.max_rows = c.max_rows;
    o.mean_rows = c.mean_rows;
    o.p = c.p;
    o.folds = c.folds;
    if (c.bump) o.bandwidth_selection.grid = {0.1, 0.3, 3.0, 10.0};
    o.execution.threads = 2;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const ecekde::Result alone = ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                                  ecekde::LabelsView(d.y), whole);
    ASSERT_EQ(alone.selection.has_value(), !c.h);
    if (c.swapped) {
      EXPECT_EQ(alone.pilot, "full-matrix");
    }
    if (c.bump && c.folds > 2) {  // the pilot kept its trees, grown from sums over the ranks
      EXPECT_EQ(alone.pilot, "trees");
    }
    if (c.bump && c.folds == 2) {  // without trees (two folds), p = 2 took the narrower candidate
      EXPECT_GT(alone.selection->criterion_choice, 0.0);
    }
    for (int ranks : testdata::rank_counts()) {
      const std::string what = "n " + std::to_string(c.n) + ", K " + std::to_string(c.k) + (c.h ? ", fixed h" : "") +
                               (c.tied ? ", tied rows" : "") + (c.saturated ? ", saturated" : "") +
                               ", max_rows " + std::to_string(c.max_rows) + ", mean_rows " +
                               std::to_string(c.mean_rows) + ", p " + std::to_string(c.p) + (c.bump ? ", bump" : "") +
                               ", " + std::to_string(c.folds) + " folds" +
                               ", " + std::to_string(ranks) + " ranks";
      for (const ecekde::Result& r : on_ranks(d, ranks, o)) {
        EXPECT_LT(relative(r.ce_pow_p, alone.ce_pow_p), 1e-12) << what << ": " << r.ce_pow_p << " vs " << alone.ce_pow_p;
        EXPECT_LT(relative(r.standard_error, alone.standard_error), 1e-12) << what;
        EXPECT_LT(relative(r.ce_interval->upper, alone.ce_interval->upper), 1e-12) << what;
        EXPECT_EQ(r.bandwidth, alone.bandwidth) << what;
        EXPECT_EQ(r.n, c.n) << what;
        EXPECT_EQ(r.averaged_rows, c.mean_rows ? c.mean_rows : c.n) << what;
        EXPECT_EQ(r.averaged_rows, alone.averaged_rows) << what;
        EXPECT_EQ(r.warnings, alone.warnings) << what;
        EXPECT_EQ(r.pilot, alone.pilot) << what;
        ASSERT_EQ(r.selection.has_value(), alone.selection.has_value()) << what;
        if (!r.selection) continue;
        EXPECT_EQ(r.selection->rows, alone.selection->rows) << what;
        EXPECT_EQ(r.selection->criterion_choice, alone.selection->criterion_choice) << what;
        ASSERT_EQ(r.selection->score.size(), alone.selection->score.size()) << what;
        for (std::size_t b = 0; b < r.selection->score.size(); ++b)
          EXPECT_LT(relative(r.selection->score[b], alone.selection->score[b]), 1e-12) << what << ", grid " << b;
      }
    }
  }
}

// Precision float on the ring: the sweeps at a given bandwidth (the paper's estimate, crossfit's criterion
// and corrections) take float tiles, as alone, and the paper's bandwidth search stays double. Each block's
// float weights are relative to the row's running maximum after it, which the ring reaches in another
// order than one process: results agree with float alone to float's rounding, and with the double
// oracle within the float path's tested 1e-5 relative plus 1e-6; the warning below h = 0.002 is alone's.
TEST(Ring, FloatPrecisionAgreesWithFloatAlone) {
  struct Case {
    Estimator estimator;
    std::size_t n, k;
    std::optional<double> h;
  };
  for (const Case& c : {Case{Estimator::paper, 203, 3, 0.05}, Case{Estimator::paper, 150, 10, 0.4},
                        Case{Estimator::paper, 120, 4, 0.001}, Case{Estimator::paper, 230, 4, std::nullopt},
                        Case{Estimator::crossfit, 240, 3, std::nullopt}, Case{Estimator::crossfit, 150, 70, std::nullopt}}) {
    const oracle::Data d = testdata::softmax_predictions(c.n, c.k, 60 + c.n + c.k, 2.0, 1.4);
    ecekde::EstimateOptions o = paper_canonical();
    o.estimator = c.estimator;
    o.bandwidth = c.h;
    o.execution.precision = ecekde::Precision::single;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
    const ecekde::Result alone = ecekde::estimate(probs, ecekde::LabelsView(d.y), whole);
    whole.execution.precision = ecekde::Precision::double_;
    const ecekde::Result in_double = ecekde::estimate(probs, ecekde::LabelsView(d.y), whole);
    for (int ranks : testdata::rank_counts())
      for (std::size_t block : {5, 512}) {
        o.execution.block_size = block;
        const std::string what = std::string(ecekde::to_string(c.estimator)) + ", n " + std::to_string(c.n) + ", K " +
                                 std::to_string(c.k) + ", " + std::to_string(ranks) + " ranks, block " +
                                 std::to_string(block);
        for (const ecekde::Result& r : on_ranks(d, ranks, o)) {
          EXPECT_LT(relative(r.ce_pow_p, alone.ce_pow_p), 1e-6) << what << ": " << r.ce_pow_p << " vs " << alone.ce_pow_p;
          EXPECT_EQ(r.bandwidth, alone.bandwidth) << what;
          EXPECT_EQ(r.warnings, alone.warnings) << what;
          // Where crossfit's threshold keeps the pilot its estimate does not depend on the corrections (and
          // float gives it bitwise): its criterion, from the corrections, shows that they ran in float.
          if (c.estimator == Estimator::paper)
            EXPECT_GT(relative(r.ce_pow_p, in_double.ce_pow_p), 1e-12) << what << ": computed in double";
          else
            EXPECT_GT(relative(r.selection->score[0], in_double.selection->score[0]), 1e-12) << what << ": in double";
          if (c.estimator == Estimator::paper && c.h == 0.001) continue;  // below the tested bandwidth (warned)
          EXPECT_LT(std::fabs(r.ce_pow_p - in_double.ce_pow_p), 1e-5 * in_double.ce_pow_p + 1e-6) << what;
        }
      }
  }
}

// The calibration test on the ring (canonical, the paper's estimator): the relabelled copies' labels drawn
// by the rows' own ranks and travelling with their blocks. The statistic, every copy's value and the
// bandwidth equal calibration_test_kde() alone on the whole input to 1e-12 relative, and the p-value
// exactly; on 1-4 ranks (n = 3 on 4 leaves one without rows), fixed and automatic h, blocks of 5 and 512,
// and with the rows going round in groups of one row (sums_bytes 1) as well as all at once.
TEST(Ring, CalibrationTestMatchesAlone) {
  struct Case {
    std::size_t n, k;
    std::optional<double> h;
  };
  for (const Case& c : {Case{61, 3, 0.05}, Case{203, 10, 0.4}, Case{230, 4, std::nullopt}, Case{3, 3, 0.1}}) {
    const oracle::Data d = testdata::softmax_predictions(c.n, c.k, 80 + c.n + c.k, 2.0, 1.4);
    ecekde::EstimateOptions o = paper_canonical();
    o.bandwidth = c.h;
    o.p = c.k == 10 ? 2.0 : 1.0;
    ecekde::CalibrationTestOptions test;
    test.replicates = 12;
    test.seed = 5;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const auto alone = ecekde::calibration_test_kde(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                                    ecekde::LabelsView(d.y), whole, test);
    over_ring_grid(d, o, [&](int ranks, const ecekde::EstimateOptions& blocked, std::size_t sums_bytes,
                             const std::string& what) {
      const auto got = each_rank(d, ranks, blocked, [&](const Slice& s, const ecekde::EstimateOptions& mine) {
        return ecekde::detail::own_rows_calibration_test(s.probs, s.labels, mine, test, sums_bytes);
      });
      for (const auto& r : got) {
        EXPECT_EQ(r.bandwidth, alone.bandwidth) << what;
        EXPECT_LT(relative(r.statistic, alone.statistic), 1e-12) << what << ": " << r.statistic << " vs " << alone.statistic;
        ASSERT_EQ(r.null_values.size(), test.replicates) << what;
        for (std::size_t b = 0; b < test.replicates; ++b)
          EXPECT_LT(relative(r.null_values[b], alone.null_values[b]), 1e-12) << what << ", copy " << b;
        // The p-value counts copies at or above the statistic: alone's, except where a copy ties the
        // statistic to rounding (at n = 3 a copy can redraw the data's own labels), either count.
        std::size_t above = 0, tied = 0;
        for (double v : alone.null_values) {
          if (relative(v, alone.statistic) < 1e-12) ++tied;
          else if (v > alone.statistic) ++above;
        }
        const double copies = static_cast<double>(test.replicates) + 1;
        EXPECT_GE(r.p_value, (1 + static_cast<double>(above)) / copies) << what;
        EXPECT_LE(r.p_value, (1 + static_cast<double>(above + tied)) / copies) << what;
        if (tied == 0) {
          EXPECT_EQ(r.p_value, alone.p_value) << what;
        }
      }
    });
  }
  // Through the public entry point; and in precision float, where the statistic takes float tiles (within
  // float's rounding of alone's) and the copies stay double (within 1e-12).
  const oracle::Data d = testdata::softmax_predictions(40, 3, 9);
  ecekde::EstimateOptions o = paper_canonical();
  o.bandwidth = 0.1;
  o.execution.precision = ecekde::Precision::single;
  ecekde::CalibrationTestOptions test;
  test.replicates = 12;
  ecekde::EstimateOptions whole = o;
  whole.execution.own_rows = false;
  const auto alone = ecekde::calibration_test_kde(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                                  ecekde::LabelsView(d.y), whole, test);
  whole.execution.precision = ecekde::Precision::double_;
  const double double_statistic =
      ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), whole).ce_pow_p;
  ASSERT_NE(alone.statistic, double_statistic);  // the float path ran
  ecekde::testing::ThreadRanks group(2);
  group.run([&](int rank, ecekde::Communicator& comm) {
    ecekde::EstimateOptions mine = o;
    mine.execution.communicator = &comm;
    const Slice s = slice_of(d, rank, 2);
    mine.execution.precision = ecekde::Precision::double_;
    EXPECT_EQ(ecekde::calibration_test_kde(s.probs, s.labels, mine).null_values.size(), 100u);
    mine.execution.precision = ecekde::Precision::single;
    const auto r = ecekde::calibration_test_kde(s.probs, s.labels, mine, test);
    EXPECT_LT(relative(r.statistic, alone.statistic), 1e-6);
    EXPECT_NE(r.statistic, double_statistic);  // the ring's statistic ran in float too
    for (std::size_t b = 0; b < test.replicates; ++b)
      EXPECT_LT(relative(r.null_values[b], alone.null_values[b]), 1e-12) << "copy " << b;
  });
}

// The bootstrap on the ring (own_rows_bootstrap): the estimate, each replicate's value and the intervals
// equal bootstrap_kde() alone on the whole input to 1e-12 relative; on 1-4 ranks (n = 3 on 4 leaves one
// without rows), both copy conventions, fixed and automatic h, blocks of 5 and 512, rows in groups of one
// row and all at once. h = 1e-4 and 1e-5 leave some rows' replicate denominators underflowed in the shared
// sweep, so that these are recomputed on the second pass of the blocks.
TEST(Ring, BootstrapMatchesAlone) {
  struct Case {
    std::size_t n, k;
    std::optional<double> h;
    ecekde::BootstrapCopies copies;
  };
  using enum ecekde::BootstrapCopies;
  for (const Case& c : {Case{61, 3, 0.05, plain}, Case{120, 10, 0.4, leave_copies_out}, Case{90, 5, 1e-4, plain},
                        Case{70, 4, 1e-5, leave_copies_out}, Case{140, 4, std::nullopt, leave_copies_out},
                        Case{3, 3, 0.1, plain}}) {
    const oracle::Data d = testdata::softmax_predictions(c.n, c.k, 30 + c.n + c.k, 2.0, 1.4);
    ecekde::EstimateOptions o = paper_canonical();
    o.bandwidth = c.h;
    o.p = c.k == 10 ? 2.0 : 1.0;
    ecekde::BootstrapOptions boot;
    boot.replicates = 11;
    boot.seed = 7;
    boot.copies = c.copies;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const auto alone = ecekde::bootstrap_kde(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                             ecekde::LabelsView(d.y), whole, boot);
    over_ring_grid(d, o, [&](int ranks, const ecekde::EstimateOptions& blocked, std::size_t sums_bytes,
                             const std::string& what) {
      const auto got = each_rank(d, ranks, blocked, [&](const Slice& s, const ecekde::EstimateOptions& mine) {
        return ecekde::detail::own_rows_bootstrap(s.probs, s.labels, mine, boot, sums_bytes);
      });
      for (const auto& r : got) {
        EXPECT_EQ(r.result.bandwidth, alone.result.bandwidth) << what;
        EXPECT_LT(relative(r.result.ce_pow_p, alone.result.ce_pow_p), 1e-12) << what;
        EXPECT_LT(relative(r.ce.estimate, alone.ce.estimate), 1e-12) << what;
        ASSERT_EQ(r.ce_pow_p.replicates.size(), boot.replicates) << what;
        for (std::size_t b = 0; b < boot.replicates; ++b)
          EXPECT_LT(relative(r.ce_pow_p.replicates[b], alone.ce_pow_p.replicates[b]), 1e-12) << what << ", replicate " << b;
        EXPECT_LT(relative(r.ce_pow_p.lower, alone.ce_pow_p.lower), 1e-12) << what;
        EXPECT_LT(relative(r.ce_pow_p.upper, alone.ce_pow_p.upper), 1e-12) << what;
        EXPECT_LT(relative(r.ce.lower, alone.ce.lower), 1e-12) << what;
        EXPECT_LT(relative(r.ce.upper, alone.ce.upper), 1e-12) << what;
      }
    });
  }
  // Through the public entry point; and in precision float, where the estimate takes float tiles (within
  // float's rounding of alone's float estimate) and the replicates stay double (within 1e-12).
  const oracle::Data d = testdata::softmax_predictions(40, 3, 9);
  ecekde::EstimateOptions o = paper_canonical();
  o.bandwidth = 0.1;
  o.execution.precision = ecekde::Precision::single;
  ecekde::BootstrapOptions boot;
  boot.replicates = 12;
  ecekde::EstimateOptions whole = o;
  whole.execution.own_rows = false;
  const auto alone = ecekde::bootstrap_kde(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                           ecekde::LabelsView(d.y), whole, boot);
  ecekde::EstimateOptions in_double = whole;
  in_double.execution.precision = ecekde::Precision::double_;
  const double double_estimate =
      ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), in_double).ce_pow_p;
  ASSERT_NE(alone.result.ce_pow_p, double_estimate);  // the float path ran
  ecekde::testing::ThreadRanks group(2);
  group.run([&](int rank, ecekde::Communicator& comm) {
    ecekde::EstimateOptions mine = o;
    mine.execution.communicator = &comm;
    const Slice s = slice_of(d, rank, 2);
    mine.execution.precision = ecekde::Precision::double_;
    EXPECT_EQ(ecekde::bootstrap_kde(s.probs, s.labels, mine).ce.replicates.size(), 100u);
    mine.execution.precision = ecekde::Precision::single;
    const auto r = ecekde::bootstrap_kde(s.probs, s.labels, mine, boot);
    EXPECT_LT(relative(r.result.ce_pow_p, alone.result.ce_pow_p), 1e-6);
    EXPECT_NE(r.result.ce_pow_p, double_estimate);  // the ring's estimate ran in float too
    for (std::size_t b = 0; b < boot.replicates; ++b)
      EXPECT_LT(relative(r.ce_pow_p.replicates[b], alone.ce_pow_p.replicates[b]), 1e-12) << "replicate " << b;
  });
}

// The bootstrap and the calibration test of the one-dimensional types with own rows: top-label and binary
// gather their problem, marginal's ranks own its classes, and each rank draws every row's uniforms, so the
// results equal bootstrap_kde() and calibration_test_kde() alone bitwise. On 1-4 ranks (n = 3 on 4 leaves
// one without rows), K = 1 and 2 (binary), 3 and 7, fixed and automatic h, both copy conventions.
TEST(Ring, OneDimensionalResamplingMatchesAloneBitwise) {
  struct Case {
    CalibrationType type;
    std::size_t n, k;
    std::optional<double> h;
  };
  for (const Case& c : {Case{CalibrationType::top_label, 57, 3, 0.05}, Case{CalibrationType::top_label, 80, 7, std::nullopt},
                        Case{CalibrationType::binary, 64, 1, 0.1}, Case{CalibrationType::binary, 50, 2, std::nullopt},
                        Case{CalibrationType::marginal, 45, 3, 0.02}, Case{CalibrationType::marginal, 61, 7, std::nullopt},
                        Case{CalibrationType::marginal, 3, 3, 0.1}}) {
    const oracle::Data d = c.k == 1 ? testdata::binary_predictions(c.n, 11, 1.5)
                                    : testdata::softmax_predictions(c.n, c.k, 20 + c.n + c.k, 2.0, 1.4);
    ecekde::EstimateOptions o = paper_canonical();
    o.type = c.type;
    o.bandwidth = c.h;
    o.p = c.k == 7 ? 2.0 : 1.0;
    ecekde::BootstrapOptions boot;
    boot.replicates = 9;
    boot.seed = 8;
    boot.copies = c.n % 2 ? ecekde::BootstrapCopies::plain : ecekde::BootstrapCopies::leave_copies_out;
    ecekde::CalibrationTestOptions test;
    test.replicates = 10;
    test.seed = 6;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
    const auto alone_boot = ecekde::bootstrap_kde(probs, ecekde::LabelsView(d.y), whole, boot);
    const auto alone_test = ecekde::calibration_test_kde(probs, ecekde::LabelsView(d.y), whole, test);
    for (int ranks : testdata::rank_counts()) {
      const std::string what = std::string(to_string(c.type)) + ", n " + std::to_string(c.n) + ", K " + std::to_string(c.k) + ", " +
                               std::to_string(ranks) + " ranks";
      const auto got = each_rank(d, ranks, o, [&](const Slice& s, const ecekde::EstimateOptions& mine) {
        return std::pair{ecekde::bootstrap_kde(s.probs, s.labels, mine, boot),
                         ecekde::calibration_test_kde(s.probs, s.labels, mine, test)};
      });
      for (const auto& [b, t] : got) {
        EXPECT_EQ(b.result.bandwidth, alone_boot.result.bandwidth) << what;
        EXPECT_EQ(b.result.ce_pow_p, alone_boot.result.ce_pow_p) << what;
        EXPECT_EQ(b.result.class_ce_pow_p, alone_boot.result.class_ce_pow_p) << what;
        EXPECT_EQ(b.ce_pow_p.replicates, alone_boot.ce_pow_p.replicates) << what;
        EXPECT_EQ(b.ce.lower, alone_boot.ce.lower) << what;
        EXPECT_EQ(b.ce.upper, alone_boot.ce.upper) << what;
        EXPECT_EQ(t.bandwidth, alone_test.bandwidth) << what;
        EXPECT_EQ(t.statistic, alone_test.statistic) << what;
        EXPECT_EQ(t.null_values, alone_test.null_values) << what;
        EXPECT_EQ(t.p_value, alone_test.p_value) << what;
      }
    }
  }
}

// The gradient on the ring (own_rows_gradient): the value equals estimate_with_gradient() alone on the whole
// input to 1e-12 relative, and each rank's gradient rows equal alone's rows of its own rows to 1e-12 of the
// gradient's largest entry (the replicated design's centre sums add the ranks' partial sums as well). On
// 1-4 ranks (n = 3 on 4 leaves one without rows), K = 2, 3, 4 and 10, fixed and automatic h, p = 1 and
// 2, blocks of 5, 64 and 512, 1 and 2 threads, and precision float (computed in double, as alone).
TEST(Ring, GradientMatchesAlone) {
  struct Case {
    std::size_t n, k;
    std::optional<double> h;
    double p;
  };
  for (const Case& c : {Case{61, 3, 0.05, 1.0}, Case{150, 10, 0.3, 2.0}, Case{90, 2, std::nullopt, 1.0},
                        Case{120, 4, std::nullopt, 2.0}, Case{3, 3, 0.1, 1.0}}) {
    const oracle::Data d = testdata::softmax_predictions(c.n, c.k, 40 + c.n + c.k, 2.0, 1.4);
    ecekde::EstimateOptions o = paper_canonical();
    o.bandwidth = c.h;
    o.p = c.p;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const auto alone = ecekde::estimate_with_gradient(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                                      ecekde::LabelsView(d.y), whole);
    double largest = 0, largest_ce = 0;
    for (double g : alone.grad_ce_pow_p) largest = std::max(largest, std::fabs(g));
    for (double g : alone.grad_ce) largest_ce = std::max(largest_ce, std::fabs(g));
    // The last configuration asks for precision float, which the gradient, as alone, computes in double.
    for (int ranks : testdata::rank_counts())
      for (auto [block, threads] : {std::pair<std::size_t, int>{5, 2}, {512, 1}, {64, 1}}) {
        const std::string what = "n " + std::to_string(c.n) + ", K " + std::to_string(c.k) + ", " +
                                 std::to_string(ranks) + " ranks, block " + std::to_string(block);
        ecekde::EstimateOptions run = o;
        run.execution.block_size = block;
        run.execution.threads = threads;
        if (block == 64) run.execution.precision = ecekde::Precision::single;
        const auto got = each_rank(d, ranks, run, [](const Slice& s, const ecekde::EstimateOptions& mine) {
          return ecekde::estimate_with_gradient(s.probs, s.labels, mine);
        });
        for (int rank = 0; rank < ranks; ++rank) {
          const auto& r = got[static_cast<std::size_t>(rank)];
          EXPECT_EQ(r.result.bandwidth, alone.result.bandwidth) << what;
          EXPECT_LT(relative(r.result.ce_pow_p, alone.result.ce_pow_p), 1e-12) << what;
          const ecekde::detail::Share rows = ecekde::detail::share_of(d.n, rank, ranks);
          ASSERT_EQ(r.grad_ce_pow_p.size(), rows.size() * d.k) << what;
          for (std::size_t i = 0; i < r.grad_ce_pow_p.size(); ++i) {
            EXPECT_NEAR(r.grad_ce_pow_p[i], alone.grad_ce_pow_p[rows.begin * d.k + i], 1e-12 * largest)
                << what << ", rank " << rank << ", entry " << i;
            EXPECT_NEAR(r.grad_ce[i], alone.grad_ce[rows.begin * d.k + i], 1e-12 * largest_ce)
                << what << ", rank " << rank << ", entry " << i;
          }
        }
      }
  }
}

// Kernel regression with own rows: canonical (the queries against each rank's centres, the sums merged in
// rank order) within 1e-12 relative of kernel_regression() alone, marginal, top-label and binary (gathered
// or owned problems) bitwise; 1-4 ranks (n = 3 on 4 leaves one without rows), fixed and automatic h.
// Queries that differ between the ranks stop every rank with one message.
TEST(Ring, KernelRegressionMatchesAlone) {
  struct Case {
    CalibrationType type;
    std::size_t n, k;
    std::optional<double> h;
  };
  for (const Case& c : {Case{CalibrationType::canonical, 90, 3, 0.05}, Case{CalibrationType::canonical, 120, 5, std::nullopt},
                        Case{CalibrationType::canonical, 3, 3, 0.1}, Case{CalibrationType::marginal, 70, 4, std::nullopt},
                        Case{CalibrationType::top_label, 80, 3, 0.02}, Case{CalibrationType::binary, 60, 1, std::nullopt}}) {
    const oracle::Data d = c.k == 1 ? testdata::binary_predictions(c.n, 12, 1.5)
                                    : testdata::softmax_predictions(c.n, c.k, 50 + c.n + c.k, 2.0, 1.4);
    const bool canonical = c.type == CalibrationType::canonical;
    const oracle::Data grid = testdata::softmax_predictions(7, c.k == 1 ? 2 : c.k, 3, 1.0, 1.0);
    std::vector<double> queries = grid.f;
    std::size_t columns = grid.k;
    if (!canonical) {
      queries = {0.0, 0.1, 0.37, 0.5, 0.8, 0.99, 1.0};
      columns = 1;
    }
    const auto query_view = ecekde::ProbsView::row_major(queries.data(), queries.size() / columns, columns);
    ecekde::EstimateOptions o = paper_canonical();
    o.type = c.type;
    o.bandwidth = c.h;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const auto alone = ecekde::kernel_regression(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                                 ecekde::LabelsView(d.y), query_view, whole);
    for (int ranks : testdata::rank_counts()) {
      const std::string what = std::string(to_string(c.type)) + ", n " + std::to_string(c.n) + ", " +
                               std::to_string(ranks) + " ranks";
      const auto got = each_rank(d, ranks, o, [&](const Slice& s, const ecekde::EstimateOptions& mine) {
        return ecekde::kernel_regression(s.probs, s.labels, query_view, mine);
      });
      for (const auto& r : got) {
        EXPECT_EQ(r.bandwidth, alone.bandwidth) << what;
        ASSERT_EQ(r.expectation.size(), alone.expectation.size()) << what;
        for (std::size_t i = 0; i < r.expectation.size(); ++i) {
          if (canonical) {
            EXPECT_LT(relative(r.expectation[i], alone.expectation[i]), 1e-12) << what << ", entry " << i;
            EXPECT_LT(relative(r.log_density[i], alone.log_density[i]), 1e-12) << what << ", entry " << i;
          } else {
            EXPECT_EQ(r.expectation[i], alone.expectation[i]) << what << ", entry " << i;
            EXPECT_EQ(r.log_density[i], alone.log_density[i]) << what << ", entry " << i;
          }
        }
      }
    }
  }
  // Queries that differ between the ranks.
  const oracle::Data d = testdata::softmax_predictions(40, 3, 9);
  ecekde::testing::ThreadRanks group(2);
  group.run([&](int rank, ecekde::Communicator& comm) {
    ecekde::EstimateOptions o = paper_canonical();
    o.bandwidth = 0.1;
    o.execution.communicator = &comm;
    const Slice s = slice_of(d, rank, 2);
    std::vector<double> queries{0.2, 0.3, 0.5};
    if (rank == 1) queries = {0.5, 0.3, 0.2};
    try {
      ecekde::kernel_regression(s.probs, s.labels, ecekde::ProbsView::row_major(queries.data(), 1, 3), o);
      ADD_FAILURE() << "different queries not refused";
    } catch (const ecekde::Error& e) {
      EXPECT_NE(std::string(e.what()).find("the ranks were given different inputs or options"), std::string::npos)
          << e.what();
    }
  });
}

// select_bandwidth() with own rows, with and without labels: canonical's criterion within 1e-12 relative
// of alone's and the same bandwidth, marginal and top-label bitwise; 1-4 ranks, both likelihood criteria.
TEST(Ring, SelectBandwidthMatchesAlone) {
  for (const CalibrationType type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label})
    for (const auto criterion : {ecekde::BandwidthCriterion::loo_likelihood, ecekde::BandwidthCriterion::reference}) {
      const oracle::Data d = testdata::softmax_predictions(110, 4, 21, 2.0, 1.4);
      const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
      ecekde::BandwidthOptions options;
      options.criterion = criterion;
      options.max_rows = 70;
      const auto alone = ecekde::select_bandwidth(probs, ecekde::LabelsView(d.y), type, options);
      const auto alone_unlabelled = ecekde::select_bandwidth(probs, type, options);
      for (int ranks : testdata::rank_counts()) {
        const std::string what = std::string(to_string(type)) + ", " + std::to_string(ranks) + " ranks";
        std::vector<ecekde::BandwidthSelection> got(static_cast<std::size_t>(ranks)), unlabelled = got;
        ecekde::testing::ThreadRanks group(ranks);
        group.run([&](int rank, ecekde::Communicator& comm) {
          ecekde::ExecutionOptions execution;
          execution.communicator = &comm;
          execution.own_rows = true;
          const Slice s = slice_of(d, rank, ranks);
          got[static_cast<std::size_t>(rank)] = ecekde::select_bandwidth(s.probs, s.labels, type, options, execution);
          unlabelled[static_cast<std::size_t>(rank)] = ecekde::select_bandwidth(s.probs, type, options, execution);
        });
        for (std::size_t r = 0; r < got.size(); ++r)
          for (const auto& [sel, want] : {std::pair{&got[r], &alone}, std::pair{&unlabelled[r], &alone_unlabelled}}) {
            EXPECT_EQ(sel->bandwidth, want->bandwidth) << what;
            ASSERT_EQ(sel->score.size(), want->score.size()) << what;
            for (std::size_t i = 0; i < sel->score.size(); ++i) {
              if (type == CalibrationType::canonical) {
                EXPECT_LT(relative(sel->score[i], want->score[i]), 1e-12) << what << ", grid point " << i;
              } else {
                EXPECT_EQ(sel->score[i], want->score[i]) << what << ", grid point " << i;
              }
            }
            EXPECT_EQ(sel->refined_grid, want->refined_grid) << what;
          }
      }
    }
}

// Top-label and binary gather their one-dimensional problem (n values), marginal's ranks each own a share
// of the classes over every row; both compute as the replicated design does: bitwise the lone result, for
// both estimators, fixed and automatic h, on 1-4 ranks (one of them without rows when n = 3; without
// classes when K = 3 on 4 ranks), binary from one column and from two.
TEST(Ring, OneDimensionalTypesMatchAloneBitwise) {
  struct Case {
    CalibrationType type;
    std::size_t n, k;
  };
  for (const Case& c : {Case{CalibrationType::top_label, 180, 4}, Case{CalibrationType::binary, 150, 2},
                        Case{CalibrationType::binary, 150, 1}, Case{CalibrationType::top_label, 3, 3},
                        Case{CalibrationType::marginal, 160, 10}, Case{CalibrationType::marginal, 90, 3},
                        Case{CalibrationType::marginal, 3, 3}}) {
    oracle::Data d = testdata::softmax_predictions(c.n, std::max<std::size_t>(c.k, 2), 60 + c.n + c.k, 2.0, 1.3);
    if (c.k == 1) {  // P(y = 1) alone
      std::vector<double> column(c.n);
      for (std::size_t r = 0; r < c.n; ++r) column[r] = d.f[r * 2 + 1];
      d = oracle::Data::of(1, column, d.y);
    }
    for (Estimator estimator : {Estimator::crossfit, Estimator::paper})
      for (std::optional<double> h : {std::optional<double>{}, std::optional<double>{0.08}}) {
        ecekde::EstimateOptions o = paper_canonical();
        o.type = c.type;
        o.estimator = estimator;
        o.bandwidth = h;
        o.execution.threads = 2;
        ecekde::EstimateOptions whole = o;
        whole.execution.own_rows = false;
        const std::string what = std::string(ecekde::to_string(c.type)) + ", n " + std::to_string(c.n) + ", K " +
                                 std::to_string(c.k) + ", " + std::string(ecekde::to_string(estimator)) +
                                 (h ? ", fixed h" : "");
        std::optional<ecekde::Result> alone;
        std::string alone_error;
        try {
          alone = ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), whole);
        } catch (const ecekde::Error& e) {
          alone_error = e.what();  // n = 3 is too few for some paths: then the ring must say the same
        }
        for (int ranks : testdata::rank_counts()) {
          if (!alone) {
            EXPECT_THROW(on_ranks(d, ranks, o), ecekde::Error) << what << ": alone said " << alone_error;
            continue;
          }
          for (const ecekde::Result& r : on_ranks(d, ranks, o)) {
            const std::string at = what + ", " + std::to_string(ranks) + " ranks";
            EXPECT_EQ(r.ce_pow_p, alone->ce_pow_p) << at;
            EXPECT_EQ(r.bandwidth, alone->bandwidth) << at;
            EXPECT_EQ(r.n, alone->n) << at;
            EXPECT_EQ(r.k, alone->k) << at;
            EXPECT_EQ(r.warnings, alone->warnings) << at;
            EXPECT_EQ(r.standard_error, alone->standard_error) << at;
            ASSERT_EQ(r.selection.has_value(), alone->selection.has_value()) << at;
            if (r.selection) {
              EXPECT_EQ(r.selection->score, alone->selection->score) << at;
            }
            EXPECT_EQ(r.class_ce_pow_p, alone->class_ce_pow_p) << at;
            EXPECT_EQ(r.pilot, alone->pilot) << at;
          }
        }
      }
  }
}

// Marginal's pooled pilot on a ring: each rank owns a share of the classes, fills their pairs of the pooled
// fit, and the ranks add up the rest, so every rank fits the pooled pilot from the same pairs as alone.
// Bitwise the lone result on 1-4 ranks (3 and 4 ranks own 4 and 3 of the 12 classes), the pilot pooled.
// Saturated: the last class set to 0 in the first 60 rows, so that only the rank owning it holds saturated
// probabilities, and every rank takes the pooled pilot's indicators all the same.
TEST(Ring, PooledMarginalPilotMatchesAloneBitwise) {
  for (bool saturated : {false, true}) {
    oracle::Data d = testdata::softmax_predictions(500, 12, 15, 3.0);
    for (std::size_t j = 0; saturated && j < 60; ++j) {
      const double rest = 1 - d.f[j * 12 + 11];
      d.f[j * 12 + 11] = 0;
      for (std::size_t c = 0; c < 11; ++c) d.f[j * 12 + c] /= rest;
    }
    testdata::mix_with_uniform(d, 0.3, 16);
    ecekde::EstimateOptions o;
    o.type = CalibrationType::marginal;
    o.execution.threads = 2;
    o.execution.own_rows = true;
    ecekde::EstimateOptions whole = o;
    whole.execution.own_rows = false;
    const ecekde::Result alone =
        ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), whole);
    EXPECT_EQ(alone.pilot, "pooled-beta");
    for (int ranks : testdata::rank_counts())
      for (const ecekde::Result& r : on_ranks(d, ranks, o)) {
        const std::string at = std::to_string(ranks) + " ranks" + (saturated ? ", saturated" : "");
        EXPECT_EQ(r.ce_pow_p, alone.ce_pow_p) << at;
        EXPECT_EQ(r.standard_error, alone.standard_error) << at;
        EXPECT_EQ(r.bandwidth, alone.bandwidth) << at;
        EXPECT_EQ(r.class_ce_pow_p, alone.class_ce_pow_p) << at;
        EXPECT_EQ(r.pilot, alone.pilot) << at;
      }
  }
}

// A bad value on one rank: every rank throws, with that rank's message, naming the row by its index in
// the whole input; none is left waiting.
TEST(Ring, BadRowOnOneRankStopsEveryRankWithItsMessage) {
  oracle::Data d = testdata::softmax_predictions(40, 3, 5);
  d.f[23 * 3 + 1] = std::numeric_limits<double>::quiet_NaN();  // row 23: rank 2 of 3 holds rows 26..39
  d.y[31] = 7;                                                  // and a label out of range on rank 2
  for (int ranks : {2, 3}) {
    std::vector<std::string> messages(static_cast<std::size_t>(ranks));
    ecekde::testing::ThreadRanks group(ranks);
    group.run([&](int rank, ecekde::Communicator& comm) {
      ecekde::EstimateOptions o = paper_canonical();
      o.bandwidth = 0.1;
      o.execution.communicator = &comm;
      const Slice s = slice_of(d, rank, ranks);
      try {
        ecekde::estimate(s.probs, s.labels, o);
      } catch (const ecekde::Error& e) {
        messages[static_cast<std::size_t>(rank)] = e.what();
      }
    });
    // Row 23 is on rank 1 of 2 (rows 20..39) and on rank 1 of 3 (rows 13..25); the label's row 31 on the
    // same rank of 2 (after row 23 in reading order) and on rank 2 of 3: the lowest failing rank speaks.
    for (const std::string& m : messages)
      EXPECT_EQ(m, "rank 1: probs row 23, column 1: value nan is not finite") << ranks << " ranks";
  }
}

TEST(Ring, RanksWithDifferentColumnCountsStop) {
  const oracle::Data three = testdata::softmax_predictions(20, 3, 1), four = testdata::softmax_predictions(20, 4, 1);
  std::vector<std::string> messages(2);
  ecekde::testing::ThreadRanks group(2);
  group.run([&](int rank, ecekde::Communicator& comm) {
    ecekde::EstimateOptions o = paper_canonical();
    o.bandwidth = 0.1;
    o.execution.communicator = &comm;
    const oracle::Data& d = rank == 0 ? three : four;
    try {
      ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o);
    } catch (const ecekde::Error& e) {
      messages[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  for (const std::string& m : messages)
    EXPECT_EQ(m, "the ranks' probabilities have different numbers of columns (rank 0: K = 3; rank 1: K = 4): every "
                 "rank must pass its own rows of the same input");
}

// What the ring does not compute is refused with a message, never computed from a slice as if it were the
// whole input.
TEST(Ring, RefusesWhatItDoesNotCompute) {
  const oracle::Data d = testdata::softmax_predictions(30, 3, 2);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  auto refused = [&](ecekde::EstimateOptions o, const std::string& what) {
    try {
      ecekde::estimate(probs, ecekde::LabelsView(d.y), o);
    } catch (const ecekde::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "not refused: " << what;
  };
  ecekde::EstimateOptions o = paper_canonical();
  o.bandwidth_selection.criterion = ecekde::BandwidthCriterion::loo_regression;
  refused(o, "got criterion loo-regression");
  o = paper_canonical();
  o.bandwidth = 0.1;
  try {
    ecekde::bootstrap(d.n, [](std::span<const std::size_t>) { return 0.0; }, {}, o.execution);
    ADD_FAILURE() << "the generic bootstrap not refused";
  } catch (const ecekde::Error& e) {
    EXPECT_EQ(std::string(e.what()), "own_rows (each rank passing only its own rows) is supported by estimate(), "
                                     "estimate_with_gradient(), kernel_regression(), select_bandwidth(), bootstrap_kde() "
                                     "and calibration_test_kde() only");
  }
  o.type = CalibrationType::top_label;
  try {
    ecekde::estimate_with_gradient(probs, ecekde::LabelsView(d.y), o);
    ADD_FAILURE() << "the top-label gradient not refused";
  } catch (const ecekde::Error& e) {
    EXPECT_EQ(std::string(e.what()), "own_rows (each rank passing only its own rows): the gradient supports the "
                                     "canonical type only, got top-label");
  }
}

// The default ring pass (Communicator::start_pass over all_sum): each rank receives the previous rank's
// values, R - 1 passes bring every rank's values round to every rank.
TEST(Ring, DefaultPassMovesEachBlockToTheNextRank) {
  for (int ranks : {1, 2, 3, 4}) {
    ecekde::testing::ThreadRanks group(ranks);
    group.run([&](int rank, ecekde::Communicator& comm) {
      std::vector<double> held{static_cast<double>(rank), -static_cast<double>(rank) - 0.5}, incoming(2);
      for (int step = 1; step < ranks; ++step) {
        comm.start_pass(held, incoming);
        comm.finish_pass();
        held.swap(incoming);
        const double from = static_cast<double>((rank - step + ranks) % ranks);
        EXPECT_EQ(held[0], from) << ranks << " ranks, step " << step;
        EXPECT_EQ(held[1], -from - 0.5) << ranks << " ranks, step " << step;
      }
    });
  }
}

// Marginal beyond kCriterionProblems classes, each rank owning a share of them over every row: the
// criterion's sample of classes (by their positives, which only a class's owner holds) is the lone
// process's, so the result is bitwise the lone one on 2 and 3 ranks.
TEST(Ring, ManyClassesCriterionSampleMatchesAlone) {
  const oracle::Data d = testdata::many_classes(200, ecekde::detail::kCriterionProblems + 44);
  ecekde::EstimateOptions o;
  o.type = CalibrationType::marginal;
  o.execution.own_rows = true;
  o.bandwidth_selection.grid = {0.02, 0.3};
  ecekde::EstimateOptions whole = o;
  whole.execution.own_rows = false;
  const ecekde::Result alone = ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), whole);
  ASSERT_TRUE(alone.selection.has_value());
  for (int ranks : {2, 3})
    for (const ecekde::Result& r : on_ranks(d, ranks, o)) {
      EXPECT_EQ(r.ce_pow_p, alone.ce_pow_p) << ranks << " ranks";
      ASSERT_TRUE(r.selection.has_value());
      EXPECT_EQ(r.selection->score, alone.selection->score) << ranks << " ranks";
    }
}

}  // namespace
