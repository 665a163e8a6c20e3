#include "core/ring.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/messages.hpp"
#include "core/numeric.hpp"

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
  const double mine[] = {static_cast<double>(own), static_cast<double>(k)};
  const std::vector<double> sizes = all_gather(comm, mine);  // per rank: rows, columns
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

std::vector<std::size_t> own_rows_of(const RingLayout& at, std::span<const std::size_t> rows) {
  std::vector<std::size_t> mine;
  for (std::size_t row : rows)
    if (row >= at.first && row < at.first + at.own) mine.push_back(row - at.first);
  return mine;
}

void throw_if_any_failed(Communicator* comm, const std::string& failure) {
  if (!comm) {
    if (!failure.empty()) fail(failure);
    return;
  }
  const std::size_t R = static_cast<std::size_t>(comm->size()), width = 1 + kMessageChars;
  std::vector<double> mine(width, 0.0);  // failed, then the message's bytes
  if (!failure.empty()) {
    mine[0] = 1;
    for (std::size_t c = 0; c < std::min(failure.size(), kMessageChars); ++c)
      mine[1 + c] = static_cast<unsigned char>(failure[c]);
  }
  const std::vector<double> all = all_gather(comm, mine);
  for (std::size_t r = 0; r < R; ++r) {
    if (all[r * width] == 0) continue;
    std::string message;
    for (std::size_t c = 0; c < kMessageChars && all[r * width + 1 + c] != 0; ++c)
      message += static_cast<char>(static_cast<unsigned char>(all[r * width + 1 + c]));
    fail(concat("rank ", r, ": ", message));
  }
}

std::vector<double> CentreBlock::pack(const LabelledPoints& lp, const std::vector<std::vector<double>>& offsets,
                                      std::size_t largest, std::span<const double> payload, std::size_t per_centre) {
  const KernelPoints& x = lp.points;
  const std::size_t n = x.n;
  ECEKDE_ASSERT(payload.size() == n * per_centre);
  std::vector<double> buffer(1 + lp.classes + 1 + largest * (x.dim + offsets.size() + per_centre), 0.0);
  buffer[0] = static_cast<double>(n);
  std::transform(lp.class_begin.begin(), lp.class_begin.end(), buffer.begin() + 1,
                 [](std::size_t b) { return static_cast<double>(b); });
  auto at = buffer.begin() + static_cast<std::ptrdiff_t>(2 + lp.classes);
  at = std::copy(x.x_t.begin(), x.x_t.end(), at);
  for (const auto& set : offsets) {
    ECEKDE_ASSERT(set.size() == n);
    at = std::copy(set.begin(), set.end(), at);
  }
  std::copy(payload.begin(), payload.end(), at);
  return buffer;
}

CentreBlock::CentreBlock(std::span<const double> buffer, const Shape& shape)
    : count_(static_cast<std::size_t>(buffer[0])) {
  runs_.classes = shape.classes;
  runs_.class_begin.resize(shape.classes + 1);
  std::transform(buffer.begin() + 1, buffer.begin() + static_cast<std::ptrdiff_t>(2 + shape.classes),
                 runs_.class_begin.begin(), [](double b) { return static_cast<std::size_t>(b); });
  x_t_ = buffer.data() + 2 + shape.classes;
  const double* offsets = x_t_ + shape.dim * count_;
  const double* payload = offsets + shape.sets * count_;
  ECEKDE_ASSERT(payload + shape.per_centre * count_ <= buffer.data() + buffer.size());
  for (std::size_t s = 0; s < shape.sets; ++s)
    offsets_.emplace_back(offsets + s * count_, offsets + (s + 1) * count_);
  payload_ = {payload, shape.per_centre * count_};
}

namespace {

// The doubles' order as unsigned integers (for the bisection): negative values flipped, positive ones
// above them.
std::uint64_t order_key(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits >> 63 ? ~bits : bits | (std::uint64_t{1} << 63);
}

double from_order_key(std::uint64_t key) {
  const std::uint64_t bits = key >> 63 ? key & ~(std::uint64_t{1} << 63) : ~key;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

std::vector<double> order_statistics(Communicator* comm, std::vector<double>& values,
                                     std::span<const std::size_t> positions) {
  std::vector<double> out(positions.size());
  if (!comm) {  // selections, not a sort: the canonical spline's knots are a few of n K values
    std::vector<std::size_t> ascending(positions.begin(), positions.end());
    std::sort(ascending.begin(), ascending.end());
    auto from = values.begin();
    for (std::size_t at : ascending) {
      const auto nth = values.begin() + static_cast<std::ptrdiff_t>(at);
      if (nth >= from) std::nth_element(from, nth, values.end());
      from = nth + 1;
    }
    for (std::size_t q = 0; q < positions.size(); ++q) out[q] = values[positions[q]];
    return out;
  }
  std::sort(values.begin(), values.end());
  std::vector<std::uint64_t> keys(values.size());
  std::transform(values.begin(), values.end(), keys.begin(), order_key);
  // Each position's answer is the smallest key with more than `position` keys at or below it, in [lo, hi].
  const std::size_t P = positions.size();
  std::vector<std::uint64_t> lo(P, 0), hi(P, ~std::uint64_t{0});
  std::vector<double> counts(P);
  while (true) {
    bool open = false;
    for (std::size_t q = 0; q < P; ++q) {
      const std::uint64_t mid = lo[q] + (hi[q] - lo[q]) / 2;
      counts[q] = lo[q] < hi[q] ? static_cast<double>(std::upper_bound(keys.begin(), keys.end(), mid) - keys.begin()) : 0;
      open |= lo[q] < hi[q];
    }
    if (!open) break;  // the same on every rank: every rank holds the same brackets
    comm->all_sum(counts);
    for (std::size_t q = 0; q < P; ++q) {
      if (lo[q] == hi[q]) continue;
      const std::uint64_t mid = lo[q] + (hi[q] - lo[q]) / 2;
      if (counts[q] > static_cast<double>(positions[q])) hi[q] = mid;
      else lo[q] = mid + 1;
    }
  }
  for (std::size_t q = 0; q < P; ++q) out[q] = from_order_key(lo[q]);
  return out;
}

double total_over_ranks(Communicator* comm, std::span<const double> values) {
  std::vector<double> total{accurate_sum(values)};
  combine_shares(comm, total);
  return total[0];
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

OwnProblems own_problems(const SweepPlan& plan, std::size_t count) {
  if (!plan.owned_problems) return {{0, count}, plan};
  OwnProblems out{share_of(count, plan.communicator), plan};
  out.plan.communicator = nullptr;
  return out;
}

std::vector<double> sum_over_problems(const SweepPlan& plan, const std::vector<std::vector<double>>& per_problem,
                                      std::size_t width) {
  const Share mine = own_problems(plan, per_problem.size()).mine;
  auto add = [&](std::span<double> total) {
    for (std::size_t q = mine.begin; q < mine.end; ++q)
      for (std::size_t i = 0; i < width; ++i) total[i] += per_problem[q][i];
  };
  if (plan.owned_problems) return in_rank_order(plan.communicator, width, add);
  std::vector<double> total(width, 0.0);
  add(total);
  return total;
}

double log_add(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (lo == -std::numeric_limits<double>::infinity()) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

}  // namespace ecekde::detail
