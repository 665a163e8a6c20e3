// Predictions for end-to-end tests: written as NPY files for the ecekde binary and kept in memory for
// direct library calls on the same numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ecekde/io.hpp"
#include "files.hpp"
#include "generate.hpp"

namespace clitest {

struct PredictionFiles {
  oracle::Data data;
  std::string probs, labels;
};

/// n predictions of k classes (k = 1: binary) written as <prefix>probs.npy and <prefix>labels.npy in dir.
inline PredictionFiles write_predictions(const testfiles::ScratchDir& dir, std::size_t n, std::size_t k,
                                         std::uint64_t seed, const std::string& prefix = "") {
  PredictionFiles f;
  f.data = k == 1 ? testdata::binary_predictions(n, seed, 1.5) : testdata::softmax_predictions(n, k, seed, 2.0, 1.5);
  f.probs = dir.path(prefix + "probs.npy");
  f.labels = dir.path(prefix + "labels.npy");
  ecekde::io::write_npy(f.probs, f.data.f, k == 1 ? std::vector<std::size_t>{n} : std::vector<std::size_t>{n, k});
  ecekde::io::write_npy(f.labels, f.data.y, {n});
  return f;
}

}  // namespace clitest
