// The score tree's expansions (one-dimensional kernel sums in near-linear time) and their interpolation
// (interpolated_sums) against a plain sum over every pair, over grids of sizes, bandwidths, powers, payloads, left-out centres, thread counts and
// awkward scores (ties, exact 0 and 1, points just off the segment s + r = 1, a dense cluster with a sparse
// tail, scores spread over 60 and 1,000 octaves), and rebuilt from its skeleton; and the estimators that use
// it against the full sweep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/score_tree.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/random.hpp"
#include "generate.hpp"
#include "variants.hpp"

namespace {

using ecekde::CalibrationType;
using ecekde::detail::KernelPoints;
using ecekde::detail::KernelSumRequest;
using ecekde::detail::ScoreTree;
using ecekde::detail::SweepPlan;

// Points (s, r) of one kind of data.
std::vector<double> points(const std::string& kind, std::size_t n, std::uint64_t seed) {
  ecekde::Rng rng(seed);
  std::vector<double> x(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0;
    if (kind == "spread") s = 1 / (1 + std::exp(-4 * rng.normal()));         // over the whole segment
    if (kind == "small") s = std::exp(-2 - 4 * rng.uniform() * rng.uniform());  // marginal-like, near 0
    if (kind == "ties") s = std::round(10 * rng.uniform()) / 10;              // 11 values, 0 and 1 among them
    if (kind == "saturated") s = rng.uniform() < 0.5 ? 1 - std::exp(-30 * rng.uniform()) : std::exp(-30 * rng.uniform());
    // a K = 1,000 class's marginal scores: nearly all crowded near 0, a sparse tail up to 1
    if (kind == "tail") s = rng.uniform() < 0.02 ? rng.uniform() : std::exp(-12 + 4 * rng.normal() / 3);
    if (kind == "octaves") s = std::exp2(-60 * rng.uniform());  // log-uniform over 60 octaves
    // log-uniform down to 1e-300, as a sharply peaked K = 1,000 class's scores: nodes so narrow that their
    // moments underflow (formed with subnormals flushed at h >= 6e-7, gradually below)
    if (kind == "deep octaves") s = std::exp2(-1000 * rng.uniform());
    if (kind == "one value") s = 0.3;                             // all mass at one score
    if (kind == "two clusters") s = (rng.uniform() < 0.5 ? 1e-12 : 1 - 1e-12) * (1 + 1e-3 * rng.uniform());
    if (kind == "uniform") s = rng.uniform();
    if (kind == "zeros") s = rng.uniform() < 0.6 ? 0.0 : std::exp(-9 * rng.uniform());  // exact zeros
    // heavy logit tails: a logit of 2.5 N(0, 1) against 99 others as wide, as a K = 100 softmax's column
    if (kind == "logit tails") s = 1 / (1 + 99 * std::exp(2.5 * rng.normal() - 2.5 * 2.5 / 2 - 2.5 * rng.normal()));
    double r = 1 - s;
    if (kind == "off") {  // float32-like rounding: s + r misses 1 by up to 1e-7
      s = rng.uniform();
      r = 1 - s + 1e-7 * (2 * rng.uniform() - 1);
      r = std::max(r, 0.0);
    }
    x[2 * i] = s;
    x[2 * i + 1] = r;
  }
  return x;
}

// The sums by definition: every pair, exponents in double, each row relative to its largest exponent.
struct Plain {
  std::vector<double> log_sum;  // log of sum_i w^q
  std::vector<double> ratio;    // sum_i V_il w^q / sum_i w^q, per row and column
};
Plain plain_sums(const KernelPoints& rows, const KernelPoints& centres, const std::vector<std::size_t>& self,
                 const std::vector<double>& offsets, double h, int q, const std::vector<double>& vt,
                 std::size_t depth) {
  Plain out;
  std::vector<double> e(centres.n);
  for (std::size_t j = 0; j < rows.n; ++j) {
    const std::size_t own = self.empty() ? j : self[j];
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < centres.n; ++i) {
      e[i] = i == own ? -std::numeric_limits<double>::infinity()
                      : q * (offsets[i] + (centres.x(i, 0) * rows.log_x[2 * j] + centres.x(i, 1) * rows.log_x[2 * j + 1]) / h);
      top = std::max(top, e[i]);
    }
    double den = 0;
    std::vector<double> num(depth, 0.0);
    for (std::size_t i = 0; i < centres.n; ++i) {
      const double w = std::exp(e[i] - top);
      den += w;
      for (std::size_t l = 0; l < depth; ++l) num[l] += w * vt[l * centres.n + i];
    }
    out.log_sum.push_back(top + std::log(den));
    for (std::size_t l = 0; l < depth; ++l) out.ratio.push_back(num[l] / den);
  }
  return out;
}

SweepPlan plan_with(int threads) {
  ecekde::ExecutionOptions execution;
  execution.threads = threads;
  return SweepPlan::from(execution);
}

// The radix sort against std::stable_sort by value (-0 with +0), on every kind of scores, each as drawn,
// already in order (where the sort returns the positions as they are), in reverse, and with a ties run
// and a -0 placed out of order.
TEST(ScoreTree, ScoreOrderIsTheStableSort) {
  for (const char* kind : {"spread", "small", "ties", "saturated", "tail", "octaves"})
    for (std::size_t n : {0, 1, 2, 7, 1000}) {
      std::vector<double> s(n);
      const std::vector<double> x = points(kind, n, 5 + n);
      for (std::size_t i = 0; i < n; ++i) s[i] = x[2 * i];
      std::vector<double> sorted = s;
      std::sort(sorted.begin(), sorted.end());
      std::vector<double> reversed(sorted.rbegin(), sorted.rend());
      std::vector<double> disordered = sorted;
      if (n > 2) {
        disordered[0] = -0.0;
        disordered[1] = sorted[n - 1];
        disordered[n - 1] = 0.0;
      }
      for (const std::vector<double>& layout : {s, sorted, reversed, disordered}) {
        std::vector<std::uint32_t> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = static_cast<std::uint32_t>(i);
        std::stable_sort(expected.begin(), expected.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return layout[a] < layout[b]; });
        EXPECT_EQ(ecekde::detail::score_order(layout), expected) << kind << " n " << n;
      }
    }
}

TEST(ScoreTree, AgreesWithEveryPairOverGrids) {
  for (const std::string kind : {"spread", "small", "ties", "saturated", "off", "tail", "octaves", "deep octaves"})
    for (std::size_t n : {2, 3, 33, 400, 1500})
      for (double h : {1e-7, 1e-6, 1e-4, 1e-2, 0.3, 10.0})
        for (int q : {1, 2}) {
          if (testdata::kSanitized && q == 2) continue;  // the same memory as q = 1, other arithmetic
          SCOPED_TRACE(kind + " n " + std::to_string(n) + " h " + std::to_string(h) + " q " + std::to_string(q));
          const std::vector<double> x = points(kind, n, n + 7);
          const KernelPoints centres = KernelPoints::from_rows(x.data(), n, 2);
          std::vector<double> offsets(n);
          centres.centre_offsets(h, offsets, 1);
          const std::size_t depth = 2;  // a 0/1 label and a signed residual
          ecekde::Rng rng(n);
          std::vector<double> vt(depth * n);
          for (std::size_t i = 0; i < n; ++i) {
            vt[i] = rng.uniform() < 0.3 ? 1.0 : 0.0;
            vt[n + i] = 2 * rng.uniform() - 1;
          }
          const ScoreTree tree(centres);
          const Plain want = plain_sums(centres, centres, {}, offsets, h, q, vt, depth);
          std::vector<double> scale(n), sums(n * (depth + 1));
          tree.sums(centres, {}, {offsets, 1 / h, q, vt, depth}, plan_with(1), scale, sums);
          double largest_offset = 0;
          for (double a : offsets) largest_offset = std::max(largest_offset, std::fabs(a));
          for (std::size_t j = 0; j < n; ++j) {
            // A few ulps of the row's exponents, which are O(q / h): the limit of any computation in double.
            const double exponent = q * (largest_offset + (std::fabs(centres.log_x[2 * j]) + std::fabs(centres.log_x[2 * j + 1])) / h);
            const double tolerance = 1e-12 + 4e-16 * exponent;
            const double* got = sums.data() + j * (depth + 1);
            ASSERT_NEAR(scale[j] + std::log(got[0]), want.log_sum[j], tolerance) << "row " << j;
            // payload ratios: absolute, against the row's weight (a signed sum may cancel to near 0)
            for (std::size_t l = 0; l < depth; ++l)
              ASSERT_NEAR(got[l + 1] / got[0], want.ratio[j * depth + l], tolerance) << "row " << j << " column " << l;
          }
          // any thread count gives the same bits, and so does the tree rebuilt from its skeleton
          std::vector<double> scale2(n), sums2(n * (depth + 1));
          tree.sums(centres, {}, {offsets, 1 / h, q, vt, depth}, plan_with(2), scale2, sums2);
          ASSERT_EQ(scale2, scale);
          ASSERT_EQ(sums2, sums);
          const ScoreTree rebuilt(centres, tree.skeleton());
          rebuilt.sums(centres, {}, {offsets, 1 / h, q, vt, depth}, plan_with(1), scale2, sums2);
          ASSERT_EQ(scale2, scale);
          ASSERT_EQ(sums2, sums);
        }
}

TEST(ScoreTree, OtherRowsAndLeftOutCentres) {
  const std::size_t n = 2000, R = 300;
  const std::vector<double> x = points("spread", n, 3), qx = points("small", R, 4);
  const KernelPoints centres = KernelPoints::from_rows(x.data(), n, 2), queries = KernelPoints::from_rows(qx.data(), R, 2);
  for (double h : {1e-3, 0.05}) {
    std::vector<double> offsets(n);
    centres.centre_offsets(h, offsets, 1);
    const ScoreTree tree(centres);
    // queries that are no centre (self >= n), then centres' own points leaving themselves out
    const std::vector<std::size_t> none(R, n);
    std::vector<std::size_t> own(R);
    std::vector<double> picked(2 * R);
    for (std::size_t r = 0; r < R; ++r) {
      own[r] = (r * 7919) % n;
      picked[2 * r] = x[2 * own[r]];
      picked[2 * r + 1] = x[2 * own[r] + 1];
    }
    const KernelPoints subset = KernelPoints::from_rows(picked.data(), R, 2);
    for (const auto& [rows, self] : {std::pair{&queries, none}, std::pair{&subset, own}}) {
      const Plain want = plain_sums(*rows, centres, self, offsets, h, 1, {}, 0);
      std::vector<double> scale(R), sums(R);
      tree.sums(*rows, self, {offsets, 1 / h, 1, {}, 0}, plan_with(2), scale, sums);
      for (std::size_t j = 0; j < R; ++j)
        ASSERT_NEAR(scale[j] + std::log(sums[j]), want.log_sum[j], 1e-12 * std::max(1.0, std::fabs(want.log_sum[j])));
    }
  }
}

// A row whose own centre carries nearly all of an expandable node's weight (the row at s = 1/2, where
// tau = 0 lets every node be expanded, and its neighbours e^-50 below it): subtracting that centre from
// the node's series would leave only rounding, so the tree must sum that node pair by pair.
TEST(ScoreTree, OwnCentreThatOutweighsItsNode) {
  std::vector<double> x;
  for (double s : {0.5, 0.45, 0.55, 0.44, 0.56, 0.43, 0.57}) {
    x.push_back(s);
    x.push_back(1 - s);
  }
  const std::size_t n = x.size() / 2;
  const KernelPoints centres = KernelPoints::from_rows(x.data(), n, 2);
  for (double h : {1e-4, 1e-3}) {
    std::vector<double> offsets(n);
    centres.centre_offsets(h, offsets, 1);
    const ScoreTree tree(centres);
    const Plain want = plain_sums(centres, centres, {}, offsets, h, 1, {}, 0);
    std::vector<double> scale(n), sums(n);
    tree.sums(centres, {}, {offsets, 1 / h, 1, {}, 0}, plan_with(1), scale, sums);
    for (std::size_t j = 0; j < n; ++j)
      EXPECT_NEAR(scale[j] + std::log(sums[j]), want.log_sum[j], 1e-9 * std::max(1.0, std::fabs(want.log_sum[j])))
          << "h " << h << " row " << j;
  }
}

// interpolated_sums() against the tree's exact sums (checked against every pair above), over layouts of
// scores that are hard for a grid (one value, two clusters at 1e-12 and 1 - 1e-12, exact zeros, logit
// tails, 60 octaves, points off the segment), bandwidths, powers and left-out centres: each sum within
// kGridTolerance times its payload's largest |V| times the row's weight sum (plus the exact sums' own
// rounding), and the same bits on any thread count. Where rows crowd (n = 4,000, h >= 0.01) the grid must
// take them from fewer points than rows, or the test would pass on exact sums alone.
TEST(ScoreTree, InterpolatedSumsWithinTheirBound) {
  std::size_t wide_cases = 0, interpolated_cases = 0;
  for (const std::string kind : {"spread", "small", "ties", "saturated", "off", "tail", "octaves", "deep octaves",
                                 "one value", "two clusters", "uniform", "zeros", "logit tails"})
    for (std::size_t n : {3, 150, 4000})
      for (double h : {1e-7, 1e-6, 1e-4, 1e-2, 0.3, 10.0})
        for (int q : {1, 2}) {
          if (testdata::kSanitized && q == 2) continue;  // the same memory as q = 1, other arithmetic
          SCOPED_TRACE(kind + " n " + std::to_string(n) + " h " + std::to_string(h) + " q " + std::to_string(q));
          const std::vector<double> x = points(kind, n, n + 3);
          const KernelPoints centres = KernelPoints::from_rows(x.data(), n, 2);
          std::vector<double> offsets(n);
          centres.centre_offsets(h, offsets, 1);
          ecekde::Rng rng(n + 1);
          const std::size_t depth = 2;  // a 0/1 label and a signed residual in [-3, 3]
          std::vector<double> vt(depth * n);
          for (std::size_t i = 0; i < n; ++i) {
            vt[i] = rng.uniform() < 0.3 ? 1.0 : 0.0;
            vt[n + i] = 6 * rng.uniform() - 3;
          }
          const double largest[depth] = {1.0, 3.0};
          const ScoreTree tree(centres, ScoreTree::kGridLeaf), reference(centres);  // leaves as its callers' and 32
          const KernelSumRequest request{offsets, 1 / h, q, vt, depth};
          std::vector<double> scale(n), sums(n * (depth + 1)), exact_scale(n), exact(n * (depth + 1));
          reference.sums(centres, {}, request, plan_with(1), exact_scale, exact);
          const ScoreTree::GridCount count = tree.interpolated_sums(centres, {}, request, plan_with(1), scale, sums);
          double largest_offset = 0;
          for (double a : offsets) largest_offset = std::max(largest_offset, std::fabs(a));
          for (std::size_t j = 0; j < n; ++j) {
            const double* got = sums.data() + j * (depth + 1);
            const double* want = exact.data() + j * (depth + 1);
            const double to_exact = std::exp(scale[j] - exact_scale[j]);  // both relative to the exact weight sum
            const double weights = want[0];
            // the bound, plus the rounding of the row's exponents (O(q / h)) as in the test above, in 16 ulps
            // (the interpolant adds its interval's exponents to the row's: two more roundings)
            const double* log_row = centres.log_x.data() + 2 * j;
            const double exponent = q * (largest_offset + (std::fabs(log_row[0]) + std::fabs(log_row[1])) / h);
            const double tolerance = ScoreTree::kGridTolerance + 1e-14 + 16 * 2.3e-16 * exponent;
            ASSERT_NEAR(got[0] * to_exact / weights, 1.0, tolerance) << "row " << j;
            for (std::size_t l = 0; l < depth; ++l)
              ASSERT_NEAR(got[l + 1] * to_exact / weights, want[l + 1] / weights, tolerance * largest[l])
                  << "row " << j << " column " << l;
          }
          std::vector<double> scale2(n), sums2(n * (depth + 1));
          tree.interpolated_sums(centres, {}, request, plan_with(2), scale2, sums2);
          ASSERT_EQ(scale2, scale);
          ASSERT_EQ(sums2, sums);
          if (n == 4000 && h >= 1e-2 && kind != "off") {
            ++wide_cases;
            if (count.points + count.exact_rows < 6 * n / 10) ++interpolated_cases;
          }
        }
  // At h >= 0.01 every kind but points off the segment s + r = 1 (which the grid leaves to the exact sums)
  // costs less than 0.6 n exact sums at n = 4,000.
  EXPECT_EQ(interpolated_cases, wide_cases);
}

// The estimators that use the tree, against the same estimators summing every pair.
TEST(ScoreTree, EstimatorsAgreeWithTheFullSweep) {
  // n = 1,200 under sanitizers: the same paths, a quarter of the full sweeps' pairs
  const auto d = testdata::softmax_predictions(testdata::kSanitized ? 1200 : 2500, 6, 11);
  const auto probs = ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
  for (auto estimator : {ecekde::Estimator::paper, ecekde::Estimator::crossfit})
    for (auto type : {CalibrationType::marginal, CalibrationType::top_label})
      for (std::optional<double> h : {std::optional<double>{}, std::optional<double>{1e-3}, std::optional<double>{0.1}}) {
        SCOPED_TRACE(std::string(to_string(estimator)) + " " + std::string(to_string(type)) + " h " +
                     (h ? std::to_string(*h) : "auto"));
        ecekde::EstimateOptions o;
        o.estimator = estimator;
        o.type = type;
        o.bandwidth = h;
        o.execution.threads = 2;
        const ecekde::Result tree = ecekde::estimate(probs, ecekde::LabelsView(d.y), o);
        o.execution.full_sweep = true;
        const ecekde::Result full = ecekde::estimate(probs, ecekde::LabelsView(d.y), o);
        EXPECT_EQ(tree.bandwidth, full.bandwidth);
        EXPECT_NEAR(tree.ce_pow_p, full.ce_pow_p, 1e-12 * full.ce_pow_p);
        EXPECT_NEAR(tree.standard_error, full.standard_error, 1e-10 * full.standard_error);
        if (full.selection) {
          ASSERT_EQ(tree.selection->score.size(), full.selection->score.size());
          for (std::size_t b = 0; b < full.selection->score.size(); ++b)
            EXPECT_NEAR(tree.selection->score[b], full.selection->score[b], 1e-12 * std::fabs(full.selection->score[b]));
        }
      }
}

}  // namespace
