// How the sweeps split their work across the ranks of a distributed run (ecekde/communicator.hpp).
// Every rank holds the whole input; each computes a contiguous share of the rows (or of the problems,
// or of the folds) and the results are combined by an all_sum in which each value comes from one rank
// and the others add zeros. x + 0 = x exactly, so every rank then holds the values a single process
// would have computed, bitwise, and goes on as it would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ecekde/communicator.hpp"

namespace ecekde::detail {

/// The items [begin, end) of `count` that one rank computes: contiguous, in rank order, sizes within 1.
struct Share {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

inline Share share_of(std::size_t count, int rank, int ranks) {
  const auto r = static_cast<std::size_t>(rank), R = static_cast<std::size_t>(ranks);
  return {count * r / R, count * (r + 1) / R};
}

/// This process's share: everything when it runs alone (no communicator, or one rank).
inline Share share_of(std::size_t count, const Communicator* comm) {
  return comm ? share_of(count, comm->rank(), comm->size()) : Share{0, count};
}

/// The communicator of a run that is split across more than one rank, else null.
inline Communicator* split_across(Communicator* comm) { return comm && comm->size() > 1 ? comm : nullptr; }

/// Combines values that each rank computed for its own share, zeros elsewhere (a no-op alone).
inline void combine_shares(Communicator* comm, std::span<double> values) {
  if (comm && !values.empty()) comm->all_sum(values);
}

/// Every rank's `mine` (the same size on every rank), rank r's at [r * size, (r + 1) * size): one zero-padded
/// all_sum, so each value arrives exactly. Alone (null), `mine` itself.
std::vector<double> all_gather(Communicator* comm, std::span<const double> mine);

/// Throws Error on every rank unless every rank passes the same `what` (sizes, a checksum of the input:
/// a few exact doubles, the first two named in the message as n and K), so that ranks given different
/// inputs stop with a message instead of combining unrelated sums (or waiting on each other).
void check_same_input(Communicator* comm, std::span<const double> what);

/// check_same_input() of a resampling: n rows of K columns, B replicates from `seed`.
inline void check_same_replicates(Communicator* comm, std::size_t n, std::size_t k, std::size_t replicates,
                                  std::uint64_t seed) {
  const double what[] = {static_cast<double>(n), static_cast<double>(k), static_cast<double>(replicates),
                         static_cast<double>(seed >> 32), static_cast<double>(seed & 0xffffffffu)};
  check_same_input(comm, what);
}

/// A checksum of doubles and labels as an exact double (52 bits), for check_same_input().
double checksum(std::span<const double> values, std::span<const std::int32_t> labels);

}  // namespace ecekde::detail
