// A small reproducible random number generator: the same seed gives the same stream on every platform
// (the standard library's distributions are implementation-defined, so ecekde does not use them).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstddef>
#include <span>

namespace ecekde {

/// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Rng {
  __extension__ typedef unsigned __int128 u128;

 public:
  explicit Rng(std::uint64_t seed = 0) {
    for (auto& s : state_) s = splitmix64(seed);
  }

  /// An independent stream derived from (seed, stream), e.g. one per bootstrap replicate.
  static Rng stream(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t s = seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1));
    return Rng(splitmix64(s));
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform on [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift with rejection: unbiased).
  std::uint64_t below(std::uint64_t n) {
    u128 m = static_cast<u128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<u128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Standard normal (Marsaglia's polar method).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2 * uniform() - 1;
      v = 2 * uniform() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    const double f = std::sqrt(-2 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

  /// Gamma(shape, 1), shape > 0 (Marsaglia & Tsang; shape < 1 by the boost u^(1/shape)).
  double gamma(double shape) {
    if (shape < 1) {
      double u;
      do u = uniform(); while (u == 0);
      return gamma(shape + 1) * std::pow(u, 1 / shape);
    }
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const double u = uniform();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (u > 0 && std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
    }
  }

  /// Index drawn from the probability vector p (entries >= 0, summing to about 1; the last index takes
  /// whatever rounding leaves over).
  std::size_t categorical(std::span<const double> p) {
    const double u = uniform();
    double acc = 0;
    for (std::size_t c = 0; c + 1 < p.size(); ++c) {
      acc += p[c];
      if (u < acc) return c;
    }
    return p.size() - 1;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace ecekde
