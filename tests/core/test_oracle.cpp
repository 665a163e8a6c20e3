// The blocked, threaded, vectorised estimators against the oracle, over grids of sizes, classes,
// bandwidths, orders, thread counts, block sizes and kernel variants.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ecekde/estimate.hpp"
#include "generate.hpp"
#include "oracle.hpp"
#include "variants.hpp"

namespace {

using ecekde::CalibrationType;

double oracle_value(CalibrationType type, const oracle::Data& d, double h, double p) {
  switch (type) {
    case CalibrationType::canonical: return oracle::canonical(d, h, p);
    case CalibrationType::marginal: return oracle::marginal(d, h, p);
    case CalibrationType::top_label: return oracle::top_label(d, h, p);
    case CalibrationType::binary: return oracle::binary(d, h, p);
  }
  return NAN;
}

// Relative agreement required: 1e-12, plus 2e-16/h. The kernel's log-scores are O(1/h), so input
// rounding is amplified by 1/h: the oracle forms 1 - s while the library sums the other columns (exact
// on the simplex, different in the last bit), which shows up as up to 3e-12 at h = 1e-5 for marginal.
double tolerance(double h) { return 1e-12 + 2e-16 / h; }

ecekde::Result run(CalibrationType type, const oracle::Data& d, double h, double p, int threads,
                   std::size_t block, const std::string& isa) {
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = type;
  o.p = p;
  o.bandwidth = h;
  o.execution.threads = threads;
  o.execution.block_size = block;
  o.execution.isa = isa;
  return ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o);
}

struct Case {
  std::size_t n, k;
};

TEST(Oracle, EveryTypeAgreesOverGrids) {
  const std::vector<Case> cases{{2, 2}, {3, 3}, {17, 2}, {40, 10}, {65, 3}, {150, 100}, {300, 10}};
  const std::vector<double> hs{1e-5, 1e-3, 0.05, 1.0};
  const std::vector<double> ps = testdata::kSanitized ? std::vector<double>{1, 2} : std::vector<double>{1, 1.5, 2, 3};
  const std::vector<int> threads{1, 2, 3};
  const std::vector<std::size_t> blocks{1, 7, 64, 512};
  std::uint64_t seed = 1;
  for (const auto& c : cases)
    for (auto type : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label}) {
      const auto d = testdata::softmax_predictions(c.n, c.k, seed++, 2.0, 1.5);
      for (double h : hs)
        for (double p : ps) {
          const double want = oracle_value(type, d, h, p);
          std::size_t config = 0;
          for (const auto& isa : testdata::kernel_variants())
            for (int t : threads)
              for (std::size_t b : blocks) {
                if (++config % 5 != 0 && !(c.n <= 40)) continue;  // a fixed sample of configurations for larger n
                const auto r = run(type, d, h, p, t, b, isa);
                EXPECT_NEAR(r.ce_pow_p, want, tolerance(h) * std::max(want, 1e-300))
                    << to_string(type) << " n=" << c.n << " k=" << c.k << " h=" << h << " p=" << p
                    << " threads=" << t << " block=" << b << " isa=" << isa;
                EXPECT_DOUBLE_EQ(r.ce, std::pow(r.ce_pow_p, 1 / p));
              }
        }
    }
}

TEST(Oracle, BinaryAgrees) {
  for (std::size_t n : {2, 5, 33, 200}) {
    const auto d = testdata::binary_predictions(n, 100 + n, 1.7);
    for (double h : {1e-5, 1e-2, 0.3, 1.0})
      for (double p : {1.0, 2.0, 2.5}) {
        const double want = oracle::binary(d, h, p);
        for (std::size_t b : {1, 16, 512}) {
          const auto r = run(CalibrationType::binary, d, h, p, 2, b, "");
          EXPECT_NEAR(r.ce_pow_p, want, tolerance(h) * want) << "n=" << n << " h=" << h << " p=" << p;
        }
      }
  }
}

TEST(Oracle, LargeCanonical) {
  const auto d = testdata::softmax_predictions(3000, 10, 77, 2.0, 1.5);
  for (double h : {1e-4, 0.02}) {
    const double want = oracle::canonical(d, h, 1.0);
    for (auto [t, b] : {std::pair{1, std::size_t{512}}, {2, 100}, {3, 1000}}) {
      if (testdata::kSanitized && (h == 1e-4) != (t == 1)) continue;  // each configuration once under sanitizers
      const auto r = run(CalibrationType::canonical, d, h, 1.0, t, b, "");
      EXPECT_NEAR(r.ce_pow_p, want, tolerance(h) * want) << "h=" << h << " threads=" << t << " block=" << b;
    }
  }
}

}  // namespace
