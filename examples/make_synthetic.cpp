// Writes the bundled example predictions: n = 2000 softmax predictions over K = 10 classes of a known,
// moderately overconfident model, and labels drawn from its true class probabilities.
//
//   logits  z_c = 2.5 * N(0, 1)                   for c = 0..9, independently per sample
//   f       = softmax(z)                          the model's predicted probabilities (float64)
//   y       ~ Categorical(softmax(z / 1.6))       the truth is a tempered (flatter) f: f is overconfident
//
// Everything comes from ecekde::Rng with a fixed seed, so the files are the same on every run:
//   ecekde_make_synthetic [PROBS.npy LABELS.npy]   (default: synthetic_probs.npy synthetic_labels.npy)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ecekde/error.hpp"
#include "ecekde/io.hpp"
#include "ecekde/random.hpp"

namespace {

constexpr std::size_t kSamples = 2000, kClasses = 10;
constexpr std::uint64_t kSeed = 2022;
constexpr double kSpread = 2.5, kTemperature = 1.6;

// softmax(z / t) into out.
void softmax(const std::vector<double>& z, double t, std::vector<double>& out) {
  const double m = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (std::size_t c = 0; c < z.size(); ++c) sum += out[c] = std::exp((z[c] - m) / t);
  for (double& v : out) v /= sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 1 && argc != 3) {
    std::fprintf(stderr, "usage: %s [PROBS.npy LABELS.npy]\n", argv[0]);
    return 2;
  }
  const std::string probs_path = argc == 3 ? argv[1] : "synthetic_probs.npy";
  const std::string labels_path = argc == 3 ? argv[2] : "synthetic_labels.npy";

  ecekde::Rng rng(kSeed);
  std::vector<double> probs(kSamples * kClasses), z(kClasses), f(kClasses), truth(kClasses);
  std::vector<std::int64_t> labels(kSamples);
  double confidence = 0, accuracy = 0;
  for (std::size_t i = 0; i < kSamples; ++i) {
    for (double& v : z) v = kSpread * rng.normal();
    softmax(z, 1.0, f);
    softmax(z, kTemperature, truth);
    std::copy(f.begin(), f.end(), probs.begin() + static_cast<std::ptrdiff_t>(i * kClasses));
    labels[i] = static_cast<std::int64_t>(rng.categorical(truth));
    const auto top = static_cast<std::int64_t>(std::max_element(f.begin(), f.end()) - f.begin());
    confidence += f[static_cast<std::size_t>(top)];
    accuracy += labels[i] == top;
  }
  try {
    ecekde::io::write_npy(probs_path, probs, {kSamples, kClasses});
    ecekde::io::write_npy(labels_path, labels, {kSamples});
  } catch (const ecekde::Error& e) {
    std::fprintf(stderr, "ecekde_make_synthetic: %s\n", e.what());
    return 1;
  }
  std::printf("wrote %s and %s: n = %zu, K = %zu, mean confidence %.4f, accuracy %.4f\n", probs_path.c_str(),
              labels_path.c_str(), kSamples, kClasses, confidence / kSamples, accuracy / kSamples);
  return 0;
}
