#include "core/ring.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/messages.hpp"

namespace ecekde::detail {

namespace {

// Characters of a failure's message that travel to the other ranks (the rest is cut).
constexpr std::size_t kMessageChars = 480;

}  // namespace

RingLayout ring_layout(Communicator* comm, std::size_t own, std::size_t k) {
  RingLayout at;
  at.comm = comm;
  at.own = own;
  const std::size_t R = comm ? static_cast<std::size_t>(comm->size()) : 1, me = comm ? static_cast<std::size_t>(comm->rank()) : 0;
  std::vector<double> sizes(2 * R, 0.0);  // per rank: rows, columns
  sizes[2 * me] = static_cast<double>(own);
  sizes[2 * me + 1] = static_cast<double>(k);
  if (comm) comm->all_sum(sizes);
  for (std::size_t r = 0; r < R; ++r) {
    const auto rows = static_cast<std::size_t>(sizes[2 * r]);
    if (sizes[2 * r + 1] != sizes[1])
      fail_with("the ranks' probabilities have different numbers of columns (rank 0: K = ",
                static_cast<std::size_t>(sizes[1]), "; rank ", r, ": K = ", static_cast<std::size_t>(sizes[2 * r + 1]),
                "): every rank must pass its own rows of the same input");
    if (r < me) at.first += rows;
    at.n += rows;
    at.largest = std::max(at.largest, rows);
  }
  return at;
}

void throw_if_any_failed(Communicator* comm, const std::string& failure) {
  if (!comm) {
    if (!failure.empty()) fail(failure);
    return;
  }
  const std::size_t R = static_cast<std::size_t>(comm->size()), me = static_cast<std::size_t>(comm->rank());
  const std::size_t width = 1 + kMessageChars;  // per rank: failed, then the message's bytes
  std::vector<double> all(R * width, 0.0);
  if (!failure.empty()) {
    all[me * width] = 1;
    for (std::size_t c = 0; c < std::min(failure.size(), kMessageChars); ++c)
      all[me * width + 1 + c] = static_cast<unsigned char>(failure[c]);
  }
  comm->all_sum(all);
  for (std::size_t r = 0; r < R; ++r) {
    if (all[r * width] == 0) continue;
    std::string message;
    for (std::size_t c = 0; c < kMessageChars && all[r * width + 1 + c] != 0; ++c)
      message += static_cast<char>(static_cast<unsigned char>(all[r * width + 1 + c]));
    fail(concat("rank ", r, ": ", message));
  }
}

std::vector<double> CentreBlock::pack(const LabelledPoints& lp, const std::vector<std::vector<double>>& offsets,
                                      std::size_t largest) {
  const KernelPoints& x = lp.points;
  const std::size_t n = x.n;
  std::vector<double> buffer(1 + lp.classes + 1 + largest * (x.dim + offsets.size()), 0.0);
  buffer[0] = static_cast<double>(n);
  std::transform(lp.class_begin.begin(), lp.class_begin.end(), buffer.begin() + 1,
                 [](std::size_t b) { return static_cast<double>(b); });
  auto at = buffer.begin() + static_cast<std::ptrdiff_t>(2 + lp.classes);
  at = std::copy(x.x_t.begin(), x.x_t.end(), at);
  for (const auto& set : offsets) {
    ECEKDE_ASSERT(set.size() == n);
    at = std::copy(set.begin(), set.end(), at);
  }
  return buffer;
}

CentreBlock::CentreBlock(std::span<const double> buffer, std::size_t classes, std::size_t dim, std::size_t sets)
    : count_(static_cast<std::size_t>(buffer[0])) {
  runs_.classes = classes;
  runs_.class_begin.resize(classes + 1);
  std::transform(buffer.begin() + 1, buffer.begin() + static_cast<std::ptrdiff_t>(2 + classes),
                 runs_.class_begin.begin(), [](double b) { return static_cast<std::size_t>(b); });
  x_t_ = buffer.data() + 2 + classes;
  const double* offsets = x_t_ + dim * count_;
  ECEKDE_ASSERT(offsets + sets * count_ <= buffer.data() + buffer.size());
  for (std::size_t s = 0; s < sets; ++s)
    offsets_.emplace_back(offsets + s * count_, offsets + (s + 1) * count_);
}

void add_shifted(double& acc_m, double* acc, double m, const double* sums, std::size_t count) {
  if (m == -std::numeric_limits<double>::infinity()) return;
  if (m > acc_m) {  // exp(-inf) = 0 clears a row that had nothing yet
    const double f = std::exp(acc_m - m);
    for (std::size_t c = 0; c < count; ++c) acc[c] = acc[c] * f + sums[c];
    acc_m = m;
  } else {
    const double f = std::exp(m - acc_m);
    for (std::size_t c = 0; c < count; ++c) acc[c] += sums[c] * f;
  }
}

double log_add(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (lo == -std::numeric_limits<double>::infinity()) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

}  // namespace ecekde::detail
