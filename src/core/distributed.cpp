#include "core/distributed.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "core/messages.hpp"
#include "ecekde/random.hpp"

namespace ecekde {

void Communicator::start_pass(std::span<const double> send, std::span<double> receive) {
  if (send.size() != receive.size()) fail("Communicator::start_pass: send and receive differ in size");
  pass_send_ = send;
  pass_receive_ = receive;
}

void Communicator::finish_pass() {
  const std::size_t m = pass_send_.size(), R = static_cast<std::size_t>(size());
  const std::size_t from = (static_cast<std::size_t>(rank()) + R - 1) % R;
  const std::vector<double> all = detail::all_gather(this, pass_send_);
  std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(from * m), m, pass_receive_.begin());
  pass_send_ = {};
  pass_receive_ = {};
}

}  // namespace ecekde

namespace ecekde::detail {

std::vector<double> all_gather(Communicator* comm, std::span<const double> mine) {
  if (!comm) return {mine.begin(), mine.end()};
  const std::size_t m = mine.size(), R = static_cast<std::size_t>(comm->size());
  std::vector<double> all(R * m, 0.0);
  std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(comm->rank()) * m));
  comm->all_sum(all);
  return all;
}

void check_same_input(Communicator* comm, std::span<const double> what) {
  if (!comm) return;
  const std::size_t m = what.size(), R = static_cast<std::size_t>(comm->size());
  const std::vector<double> all = all_gather(comm, what);
  for (std::size_t r = 1; r < R; ++r)
    if (!std::equal(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m), all.begin() + static_cast<std::ptrdiff_t>(r * m))) {
      auto sizes = [&](std::size_t rank) {
        return "rank " + std::to_string(rank) + ": n = " + std::to_string(static_cast<std::size_t>(all[rank * m])) +
               ", K = " + std::to_string(static_cast<std::size_t>(all[rank * m + 1]));
      };
      ecekde::fail("the ranks were given different inputs or options (" + sizes(0) + "; " + sizes(r) +
           "): every rank must read the same data with the same settings");
    }
}

double checksum(std::span<const double> values, std::span<const std::int32_t> labels) {
  std::uint64_t h = 0x65636b6465ULL;
  for (double v : values) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    h = Rng(h ^ bits).next();
  }
  for (std::int32_t y : labels) h = Rng(h ^ static_cast<std::uint64_t>(y)).next();
  return static_cast<double>(h >> 12);
}

}  // namespace ecekde::detail
