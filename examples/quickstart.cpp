// The README's C++ example: canonical, marginal and top-label ECE^KDE of a small set of predictions,
// with the bandwidth chosen automatically, plus a fixed-bandwidth gradient. Built against the installed
// package by the consumer test (tests/consumer), so it always compiles.
#include <cstdio>
#include <vector>

#include <ecekde/ecekde.hpp>

int main() {
  // 6 predictions over 3 classes (rows sum to 1) and their labels
  const std::vector<double> probs = {0.7, 0.2, 0.1,  0.1, 0.8, 0.1,  0.3, 0.3, 0.4,
                                     0.6, 0.3, 0.1,  0.2, 0.2, 0.6,  0.05, 0.9, 0.05};
  const std::vector<std::int64_t> labels = {0, 1, 2, 1, 2, 1};
  const auto view = ecekde::ProbsView::row_major(probs.data(), labels.size(), 3);

  for (auto type : {ecekde::CalibrationType::canonical, ecekde::CalibrationType::marginal,
                    ecekde::CalibrationType::top_label}) {
    ecekde::EstimateOptions options;
    options.type = type;
    options.p = 1;  // L1 calibration error; bandwidth: automatic (leave-one-out likelihood)
    const ecekde::Result r = ecekde::estimate(view, labels, options);
    std::printf("%-10s CE_1 = %.4f  (h = %.4g, n = %zu, K = %zu)\n", std::string(ecekde::to_string(type)).c_str(),
                r.ce, r.bandwidth, r.n, r.k);
  }

  ecekde::EstimateOptions fixed;
  fixed.bandwidth = 0.1;
  const ecekde::GradientResult g = ecekde::estimate_with_gradient(view, labels, fixed);
  std::printf("d CE_1 / d probs[0][0] = %.4f\n", g.grad_ce[0]);

  try {
    fixed.p = 0.5;
    ecekde::estimate(view, labels, fixed);
  } catch (const ecekde::Error& e) {
    std::printf("error: %s\n", e.what());
  }
}
