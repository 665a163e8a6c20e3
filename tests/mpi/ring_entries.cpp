// The ring's resampling and gradient over Open MPI's point-to-point passes (ecekde::mpi::Ranks), as ctest
// runs it: mpirun -np R ecekde_mpi_ring_entries. Every rank generates the same softmax predictions
// (testdata::softmax_predictions), passes its own rows to bootstrap_kde, calibration_test_kde and
// estimate_with_gradient (own_rows), and compares them with the same calls on the whole input alone:
// canonical within 1e-12 relative (the gradient within 1e-12 of its largest entry, on its own rows),
// marginal and top-label bitwise. Exit status 1 and one line per difference on any rank; rank 0 prints
// "ok" when every rank agrees.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/mpi.hpp"
#include "generate.hpp"

namespace {

int failures = 0;

void expect_close(double got, double want, double tolerance, const std::string& what) {
  const bool ok = tolerance == 0 ? got == want : std::fabs(got - want) <= tolerance * std::fabs(want);
  if (!ok) {
    std::printf("differs: %s: %.17g against %.17g alone\n", what.c_str(), got, want);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ecekde::mpi::Session session(argc, argv);
  ecekde::mpi::Ranks world;
  const std::size_t n = 601, k = 4;
  const oracle::Data d = testdata::softmax_predictions(n, k, 3, 2.0, 1.5);
  const std::vector<double>& f = d.f;
  const std::vector<std::int64_t>& y = d.y;
  const auto R = static_cast<std::size_t>(world.size()), me = static_cast<std::size_t>(world.rank());
  const std::size_t first = n * me / R, rows = n * (me + 1) / R - first;
  const auto all = ecekde::ProbsView::row_major(f.data(), n, k);
  const auto mine = ecekde::ProbsView::row_major(f.data() + first * k, rows, k);
  const ecekde::LabelsView all_labels(y), my_labels(y.data() + first, rows);
  ecekde::BootstrapOptions boot;
  boot.replicates = 20;
  ecekde::CalibrationTestOptions test{20, 5};
  try {
    for (const auto type : {ecekde::CalibrationType::canonical, ecekde::CalibrationType::marginal,
                            ecekde::CalibrationType::top_label}) {
      for (const bool automatic : {false, true}) {
        const std::string what = std::string(to_string(type)) + (automatic ? ", automatic h" : ", h = 0.05");
        const double tolerance = type == ecekde::CalibrationType::canonical ? 1e-12 : 0.0;
        ecekde::EstimateOptions alone;
        alone.estimator = ecekde::Estimator::paper;
        alone.type = type;
        alone.execution.threads = 1;
        if (!automatic) alone.bandwidth = 0.05;
        ecekde::EstimateOptions ring = alone;
        ring.execution.communicator = &world;
        ring.execution.own_rows = true;

        const auto b_alone = ecekde::bootstrap_kde(all, all_labels, alone, boot);
        const auto b_ring = ecekde::bootstrap_kde(mine, my_labels, ring, boot);
        expect_close(b_ring.result.ce_pow_p, b_alone.result.ce_pow_p, tolerance, what + ": bootstrap estimate");
        for (std::size_t b = 0; b < boot.replicates; ++b)
          expect_close(b_ring.ce_pow_p.replicates[b], b_alone.ce_pow_p.replicates[b], tolerance,
                       what + ": replicate " + std::to_string(b));

        const auto t_alone = ecekde::calibration_test_kde(all, all_labels, alone, test);
        const auto t_ring = ecekde::calibration_test_kde(mine, my_labels, ring, test);
        expect_close(t_ring.statistic, t_alone.statistic, tolerance, what + ": test statistic");
        for (std::size_t b = 0; b < test.replicates; ++b)
          expect_close(t_ring.null_values[b], t_alone.null_values[b], tolerance, what + ": copy " + std::to_string(b));
        expect_close(t_ring.p_value, t_alone.p_value, 0.0, what + ": p-value");

        if (type != ecekde::CalibrationType::canonical) continue;
        const auto g_alone = ecekde::estimate_with_gradient(all, all_labels, alone);
        const auto g_ring = ecekde::estimate_with_gradient(mine, my_labels, ring);
        expect_close(g_ring.result.ce_pow_p, g_alone.result.ce_pow_p, tolerance, what + ": gradient's value");
        double largest = 0;
        for (double g : g_alone.grad_ce_pow_p) largest = std::max(largest, std::fabs(g));
        for (std::size_t i = 0; i < rows * k; ++i)
          if (std::fabs(g_ring.grad_ce_pow_p[i] - g_alone.grad_ce_pow_p[first * k + i]) > 1e-12 * largest) {
            std::printf("differs: %s: gradient entry %zu of rank %zu\n", what.c_str(), i, me);
            ++failures;
          }
      }
    }
  } catch (const std::exception& e) {
    std::printf("error on rank %zu: %s\n", me, e.what());
    ecekde::mpi::abort_all(1);
  }
  std::vector<double> failed{static_cast<double>(failures)};
  world.all_sum(failed);
  if (me == 0 && failed[0] == 0) std::printf("ok: bootstrap, test and gradient with own rows on %zu ranks\n", R);
  return failed[0] == 0 ? 0 : 1;
}
