#include "ustat.hpp"

#include <array>
#include <cstddef>

#include "ecekde/error.hpp"

namespace ecekde::detail {

namespace {

constexpr std::size_t kMaxFactors = 4;

// Calls visit(blocks, count) for every set partition of {0, ..., m-1}; blocks are bit masks.
template <class Visit>
void for_each_partition(std::size_t m, std::array<unsigned, kMaxFactors>& blocks, std::size_t count,
                        std::size_t next, const Visit& visit) {
  if (next == m) {
    visit(blocks, count);
    return;
  }
  const unsigned bit = 1u << next;
  for (std::size_t b = 0; b < count; ++b) {
    blocks[b] |= bit;
    for_each_partition(m, blocks, count, next + 1, visit);
    blocks[b] &= ~bit;
  }
  blocks[count] = bit;
  for_each_partition(m, blocks, count + 1, next + 1, visit);
}

}  // namespace

double falling_factorial(std::size_t n, std::size_t m) {
  double out = 1;
  for (std::size_t t = 0; t < m; ++t) out *= static_cast<double>(n - t);
  return out;
}

double distinct_product_sum(std::span<const std::span<const double>> factors) {
  const std::size_t m = factors.size();
  if (m < 1 || m > kMaxFactors) fail_with("internal error: distinct_product_sum of ", m, " factors");
  const std::size_t n = factors[0].size();
  for (auto f : factors)
    if (f.size() != n) fail_with("internal error: distinct_product_sum of factors of unequal length");

  // subset_sum[mask] = sum_i prod_{t in mask} factors[t][i]; per i the products of all masks are built
  // from the mask without its lowest bit.
  std::array<double, 1u << kMaxFactors> subset_sum{}, prod{};
  prod[0] = 1;
  const unsigned masks = 1u << m;
  for (std::size_t i = 0; i < n; ++i) {
    for (unsigned mask = 1; mask < masks; ++mask) {
      const unsigned low = static_cast<unsigned>(__builtin_ctz(mask));
      prod[mask] = prod[mask & (mask - 1)] * factors[low][i];
      subset_sum[mask] += prod[mask];
    }
  }

  double total = 0;
  std::array<unsigned, kMaxFactors> blocks{};
  for_each_partition(m, blocks, 0, 0, [&](const std::array<unsigned, kMaxFactors>& b, std::size_t count) {
    double term = 1;
    for (std::size_t k = 0; k < count; ++k) {
      const int size = __builtin_popcount(b[k]);
      double weight = size % 2 == 1 ? 1 : -1;  // (-1)^(size-1) (size-1)!
      for (int f = 2; f < size; ++f) weight *= f;
      term *= weight * subset_sum[b[k]];
    }
    total += term;
  });
  return total;
}

}  // namespace ecekde::detail
