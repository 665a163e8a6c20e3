// Distributed estimates under mpirun, for the scaling model of docs/distributed.md:
//   mpirun -np R ecekde_mpi_scaling N K TYPE ESTIMATOR H THREADS REPEATS [own-rows] [ENTRY]
// (H: a bandwidth, or "auto"; ENTRY: estimate, the default, or bootstrap, test or gradient: bootstrap_kde
// and calibration_test_kde with B = 100, estimate_with_gradient). Every rank generates the same n x K
// softmax predictions (seed 1), runs the entry point REPEATS times on the ranks of MPI_COMM_WORLD and
// rank 0 prints one JSON line: the median and minimum seconds, the bytes each rank passed to all_sum and
// sent in ring passes per run, the largest peak heap of a rank during a run (the input not counted), the
// most seconds a rank spent per run waiting for ring passes to complete, and CE_p^p (the test: its
// statistic). With own-rows, each rank passes only its share of the rows (ExecutionOptions::own_rows).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/mpi.hpp"
#include "ecekde/names.hpp"
#include "ecekde/random.hpp"
#include "heap_tracker.hpp"

int main(int argc, char** argv) {
  ecekde::mpi::Session session(argc, argv);
  const bool own_rows = argc >= 9 && std::string(argv[8]) == "own-rows";
  const std::string entry = argc > 8 + own_rows ? argv[8 + own_rows] : "estimate";
  const bool known = entry == "estimate" || entry == "bootstrap" || entry == "test" || entry == "gradient";
  if (argc < 8 || argc > 9 + own_rows || !known) {
    std::fprintf(stderr, "usage: %s N K TYPE ESTIMATOR H THREADS REPEATS [own-rows] [estimate|bootstrap|test|gradient]\n",
                 argv[0]);
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
    o.execution.own_rows = own_rows;
    const auto R = static_cast<std::size_t>(world.size()), me = static_cast<std::size_t>(world.rank());
    const std::size_t first = own_rows ? n * me / R : 0, rows = own_rows ? n * (me + 1) / R - first : n;
    const int repeats = std::max(1, std::stoi(argv[7]));
    std::vector<double> seconds;
    double value = 0, peak = 0;
    for (int r = 0; r < repeats; ++r) {
      const bench::HeapWatch heap;
      const auto t0 = std::chrono::steady_clock::now();
      const auto probs = ecekde::ProbsView::row_major(f.data() + first * k, rows, k);
      const ecekde::LabelsView labels(y.data() + first, rows);
      if (entry == "bootstrap") value = ecekde::bootstrap_kde(probs, labels, o).result.ce_pow_p;
      else if (entry == "test") value = ecekde::calibration_test_kde(probs, labels, o).statistic;
      else if (entry == "gradient") value = ecekde::estimate_with_gradient(probs, labels, o).result.ce_pow_p;
      else value = ecekde::estimate(probs, labels, o).ce_pow_p;
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      peak = std::max(peak, heap.peak_bytes());
    }
    std::sort(seconds.begin(), seconds.end());
    const double summed = world.bytes_summed() / repeats, passed = world.bytes_passed() / repeats;
    std::vector<double> peaks(R, 0.0), waits(R, 0.0);
    peaks[me] = peak;
    waits[me] = world.seconds_waiting() / repeats;
    world.all_sum(peaks);
    world.all_sum(waits);
    if (world.rank() == 0)
      std::printf("{\"entry\": \"%s\", \"ranks\": %d, \"own_rows\": %s, \"n\": %zu, \"k\": %zu, \"median_s\": %.6g, \"min_s\": %.6g, "
                  "\"all_sum_bytes_per_estimate\": %.6g, \"ring_bytes_per_estimate\": %.6g, "
                  "\"peak_heap_bytes\": %.6g, \"most_pass_wait_s\": %.6g, \"ce_pow_p\": %.17g}\n",
                  entry.c_str(), world.size(), own_rows ? "true" : "false", n, k, seconds[seconds.size() / 2], seconds.front(),
                  summed, passed, *std::max_element(peaks.begin(), peaks.end()),
                  *std::max_element(waits.begin(), waits.end()), value);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ecekde_mpi_scaling: error: %s\n", e.what());
    ecekde::mpi::abort_all(1);
  }
  return 0;
}
