// The diagnosis of docs/validation.md, section 4.2: on one synthetic data set, every quantity the
// estimators and the bandwidth criteria depend on, as a function of the bandwidth h.
//
// Per h: the plug-in estimates of CE_1 and CE_2^2 and the debiased CE_2^2 (leave-one-out, on the data);
// the two criteria (LOO log-likelihood, minus the LOO Brier score); and, at fresh query points from the
// same model, where E[y | f] = p1 is known, the kernel regression's true error mean ||r(q) - p1(q)||^2.
//
// Usage: ecekde_bandwidth_curve [--classes 4] [--n 10000] [--queries 4000] [--t2 0.6] [--seed 7]
//          [--type canonical] [--threads 0] [--out FILE.csv]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "convergence/study.hpp"
#include "ecekde/kernel_regression.hpp"
#include "ecekde/synthetic.hpp"

namespace {

int run(const study::Arguments& args) {
  const auto k = static_cast<std::size_t>(args.number("classes", 4));
  const auto n = static_cast<std::size_t>(args.number("n", 10000));
  const auto queries = static_cast<std::size_t>(args.number("queries", 4000));
  const auto seed = static_cast<std::uint64_t>(args.number("seed", 7));
  const ecekde::SyntheticModel model{k, 0.6, args.number("t2", 0.6)};
  const auto type = ecekde::parse_name<ecekde::CalibrationType>(args.text("type", "canonical"));
  if (type != ecekde::CalibrationType::canonical) ecekde::fail("only --type canonical is implemented");
  ecekde::ExecutionOptions execution;
  execution.threads = static_cast<int>(args.number("threads", 0));

  const auto data = ecekde::generate_synthetic(model, n, seed, execution.threads);
  const auto fresh = ecekde::generate_synthetic(model, queries, seed + 1, execution.threads);
  double truth1 = 0, truth2 = 0;  // the truths on the query sample, for scale
  for (std::size_t i = 0; i < fresh.n * k; ++i) {
    const double d = fresh.calibrated[i] - fresh.probs[i];
    truth1 += std::fabs(d) / static_cast<double>(fresh.n);
    truth2 += d * d / static_cast<double>(fresh.n);
  }
  std::printf("K = %zu, n = %zu; on the %zu query points mean ||p1 - f||_1 = %.4f, ||p1 - f||^2 = %.5f\n", k, n,
              queries, truth1, truth2);

  std::ofstream csv(args.text("out", "bandwidth_curve.csv"));
  csv.precision(10);
  csv << "classes,n,h,plug_in_1,plug_in_2,debiased_2,loo_likelihood,loo_regression,regression_error\n";
  std::printf("%-8s %-10s %-10s %-11s %-11s %-12s %-12s\n", "h", "CE_1", "CE_2^2", "debiased", "LOO lik.",
              "-LOO Brier", "E||r-p1||^2");
  for (double h : {1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0}) {
    ecekde::EstimateOptions o;
    o.bandwidth = h;
    o.execution = execution;
    const double p1 = ecekde::estimate(data.probs_view(), data.labels_view(), o).ce_pow_p;
    o.p = 2;
    const double p2 = ecekde::estimate(data.probs_view(), data.labels_view(), o).ce_pow_p;
    o.form = ecekde::KdeForm::debiased;
    const double debiased = ecekde::estimate(data.probs_view(), data.labels_view(), o).ce_pow_p;
    ecekde::BandwidthOptions b;
    b.grid = {h};
    b.refine = false;
    b.max_rows = 0;
    const double likelihood =
        ecekde::select_bandwidth(data.probs_view(), data.labels_view(), type, b, execution).score[0];
    b.criterion = ecekde::BandwidthCriterion::loo_regression;
    const double regression =
        ecekde::select_bandwidth(data.probs_view(), data.labels_view(), type, b, execution).score[0];
    ecekde::EstimateOptions q;
    q.bandwidth = h;
    q.execution = execution;
    const auto kr = ecekde::kernel_regression(data.probs_view(), data.labels_view(), fresh.probs_view(), q);
    double error = 0;
    for (std::size_t i = 0; i < fresh.n * k; ++i)
      error += std::pow(kr.expectation[i] - fresh.calibrated[i], 2) / static_cast<double>(fresh.n);
    csv << k << ',' << n << ',' << h << ',' << p1 << ',' << p2 << ',' << debiased << ',' << likelihood << ','
        << regression << ',' << error << '\n';
    std::printf("%-8g %-10.4f %-10.5f %-11.5f %-11.4f %-12.5f %-12.5f\n", h, p1, p2, debiased, likelihood, regression,
                error);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(study::Arguments(argc, argv, {"classes", "n", "queries", "t2", "seed", "type", "threads", "out"}));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ecekde_bandwidth_curve: %s\n", e.what());
    return 1;
  }
}
