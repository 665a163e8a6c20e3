// Distributed estimates under mpirun, for the scaling model of docs/distributed.md:
//   mpirun -np R ecekde_mpi_scaling N K TYPE ESTIMATOR H THREADS REPEATS
// (H: a bandwidth, or "auto"). Every rank generates the same n x K softmax predictions (seed 1), runs
// ecekde::estimate REPEATS times on the ranks of MPI_COMM_WORLD and rank 0 prints one JSON line: the
// median and minimum seconds, the bytes each rank passed to all_sum per estimate, and CE_p^p.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ecekde/estimate.hpp"
#include "ecekde/mpi.hpp"
#include "ecekde/names.hpp"
#include "ecekde/random.hpp"

int main(int argc, char** argv) {
  ecekde::mpi::Session session(argc, argv);
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s N K TYPE ESTIMATOR H THREADS REPEATS\n", argv[0]);
    return 2;
  }
  try {
    const std::size_t n = std::stoul(argv[1]), k = std::stoul(argv[2]);
    std::vector<double> f(n * k);
    std::vector<std::int64_t> y(n);
    ecekde::Rng rng(1);
    std::vector<double> truth(k);
    for (std::size_t r = 0; r < n; ++r) {  // softmax of 2 N(0,1) logits; labels from temperature 1.5
      double s = 0, st = 0;
      for (std::size_t c = 0; c < k; ++c) {
        const double z = 2 * rng.normal();
        s += (f[r * k + c] = std::exp(z));
        st += (truth[c] = std::exp(z / 1.5));
      }
      for (std::size_t c = 0; c < k; ++c) f[r * k + c] /= s, truth[c] /= st;
      y[r] = static_cast<std::int64_t>(rng.categorical(truth));
    }
    ecekde::mpi::Ranks world;
    ecekde::EstimateOptions o;
    o.type = ecekde::parse_name<ecekde::CalibrationType>(argv[3]);
    o.estimator = ecekde::parse_name<ecekde::Estimator>(argv[4]);
    if (std::string(argv[5]) != "auto") o.bandwidth = std::stod(argv[5]);
    o.execution.threads = std::stoi(argv[6]);
    o.execution.communicator = &world;
    const int repeats = std::max(1, std::stoi(argv[7]));
    std::vector<double> seconds;
    double value = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      value = ecekde::estimate(ecekde::ProbsView::row_major(f.data(), n, k), ecekde::LabelsView(y), o).ce_pow_p;
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    if (world.rank() == 0)
      std::printf("{\"ranks\": %d, \"n\": %zu, \"k\": %zu, \"median_s\": %.6g, \"min_s\": %.6g, "
                  "\"all_sum_bytes_per_estimate\": %.6g, \"ce_pow_p\": %.17g}\n",
                  world.size(), n, k, seconds[seconds.size() / 2], seconds.front(), world.bytes_summed() / repeats, value);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ecekde_mpi_scaling: error: %s\n", e.what());
    ecekde::mpi::abort_all(1);
  }
  return 0;
}
