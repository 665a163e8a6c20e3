#include "core/crossfit/folds.hpp"

#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "core/crossfit.hpp"
#include "core/ring.hpp"
#include "ecekde/random.hpp"

namespace ecekde::detail {

FoldRows fold_rows(const LabelledPoints& lp, const std::vector<std::size_t>& fold_of_input, std::size_t folds,
                   std::span<const char> trains) {
  FoldRows out{std::vector<std::vector<std::size_t>>(folds), std::vector<std::vector<std::size_t>>(folds)};
  for (std::size_t j = 0; j < lp.points.n; ++j) {
    const std::size_t i = lp.original[j];
    for (std::size_t f = 0; f < folds; ++f)
      if (fold_of_input[i] == f) out.held_out[f].push_back(j);
      else if (trains.empty() || trains[i]) out.train[f].push_back(j);
  }
  return out;
}

namespace {

// Each row's key: the hash of its predictions and its turn among the rows with that hash (how many came
// before it, on this rank and the earlier ones). Distinct rows are told apart by their values alone, tied
// rows by their turn.
struct RowKey {
  std::uint64_t hash;
  std::size_t turn;
};

std::vector<RowKey> row_keys(const CheckedPredictions& pred, const RingLayout* ring) {
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
  std::vector<RowKey> keys(pred.n);
  for (std::size_t j = 0; j < pred.n; ++j) keys[j] = {hashes[j], dealt[hashes[j]]++};
  return keys;
}

}  // namespace

std::vector<std::size_t> folds_of(const CheckedPredictions& pred, std::size_t folds, const RingLayout* ring) {
  const std::vector<RowKey> keys = row_keys(pred, ring);
  std::vector<std::size_t> fold(pred.n);
  for (std::size_t j = 0; j < pred.n; ++j) fold[j] = (keys[j].hash % folds + keys[j].turn % folds) % folds;
  return fold;
}

std::vector<char> pilot_training_rows(const CheckedPredictions& pred, std::size_t n, const RingLayout* ring) {
  if (n <= kMaxPilotRows) return {};
  const std::vector<RowKey> keys = row_keys(pred, ring);
  std::vector<char> trains(pred.n);
  for (std::size_t j = 0; j < pred.n; ++j)
    trains[j] = Rng(keys[j].hash ^ Rng(keys[j].turn).next()).next() % n < kMaxPilotRows;
  return trains;
}

}  // namespace ecekde::detail
