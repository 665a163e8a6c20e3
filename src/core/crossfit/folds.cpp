#include "core/crossfit/folds.hpp"

#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "core/crossfit.hpp"
#include "core/ring.hpp"
#include "ecekde/random.hpp"

namespace ecekde::detail {

FoldRows fold_rows(const LabelledPoints& lp, const std::vector<std::size_t>& fold_of_input, std::size_t folds) {
  FoldRows out{std::vector<std::vector<std::size_t>>(folds), std::vector<std::vector<std::size_t>>(folds)};
  for (std::size_t j = 0; j < lp.points.n; ++j)
    for (std::size_t f = 0; f < folds; ++f) (fold_of_input[lp.original[j]] == f ? out.held_out : out.train)[f].push_back(j);
  return out;
}

std::vector<std::size_t> folds_of(const CheckedPredictions& pred, std::size_t folds, const RingLayout* ring) {
  std::vector<std::uint64_t> hashes(pred.n);
  const std::size_t first = pred.k <= 2 ? pred.k - 1 : 0;
  for (std::size_t j = 0; j < pred.n; ++j) {
    std::uint64_t h = 0x63726f7373666974ULL;
    for (std::size_t c = first; c < pred.k; ++c) {
      // Rounded to float: the same predictions read from float32 or float64 files share their folds.
      const double rounded = static_cast<float>(pred.f[j * pred.k + c]);
      std::uint64_t bits;
      std::memcpy(&bits, &rounded, sizeof bits);
      h = Rng(h ^ bits).next();  // seeding mixes the bits (splitmix64)
    }
    hashes[j] = h;
  }
  // How many rows with each of this rank's hashes came before its first row, on the earlier ranks.
  std::unordered_map<std::uint64_t, std::size_t> dealt;
  for (std::uint64_t h : hashes) dealt.emplace(h, 0);
  if (ring && split_across(ring->comm)) {
    std::vector<double> halves(2 * ring->n, 0.0);  // each hash as two exact 32-bit halves
    for (std::size_t j = 0; j < pred.n; ++j) {
      halves[2 * (ring->first + j)] = static_cast<double>(hashes[j] >> 32);
      halves[2 * (ring->first + j) + 1] = static_cast<double>(hashes[j] & 0xffffffffULL);
    }
    combine_shares(ring->comm, halves);
    for (std::size_t r = 0; r < ring->first; ++r) {
      const auto h = (static_cast<std::uint64_t>(halves[2 * r]) << 32) | static_cast<std::uint64_t>(halves[2 * r + 1]);
      if (const auto at = dealt.find(h); at != dealt.end()) ++at->second;
    }
  }
  std::vector<std::size_t> fold(pred.n);
  for (std::size_t j = 0; j < pred.n; ++j) fold[j] = (hashes[j] % folds + dealt[hashes[j]]++ % folds) % folds;
  return fold;
}

}  // namespace ecekde::detail
