// Times ecekde::estimate on NPY inputs with a fixed bandwidth and prints one JSON line:
//   ecekde_time_estimate PROBS.npy LABELS.npy H THREADS REPEATS
// (used by bench/compare_torch.py, which times a direct PyTorch implementation on the same files).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/io.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s PROBS.npy LABELS.npy H THREADS REPEATS\n", argv[0]);
    return 2;
  }
  try {
    const auto pred = ecekde::io::read_predictions(argv[1], argv[2]);
    ecekde::EstimateOptions o;
    o.estimator = ecekde::Estimator::paper;  // compared with a direct implementation of the paper's formula
    o.bandwidth = std::stod(argv[3]);
    o.execution.threads = std::stoi(argv[4]);
    const int repeats = std::max(1, std::stoi(argv[5]));
    std::vector<double> seconds;
    double value = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      value = ecekde::estimate(pred.probs.view(), pred.labels.view(), o).ce_pow_p;
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    std::printf("{\"median_s\": %.9g, \"min_s\": %.9g, \"ce_pow_p\": %.17g}\n", seconds[seconds.size() / 2],
                seconds.front(), value);
  } catch (const ecekde::Error& e) {
    std::fprintf(stderr, "ecekde_time_estimate: error: %s\n", e.what());
    return 1;
  }
}
