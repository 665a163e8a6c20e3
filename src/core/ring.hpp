// Runs whose ranks each hold only their own rows (ExecutionOptions::own_rows): the rows stay where they
// are and the centres travel. Each rank packs its centres into one block (its label runs, its points'
// x transposed and the kernel's offsets at the bandwidths in play), and the blocks pass from rank to
// rank around a ring (Communicator::start_pass), R steps in all: at each step a rank sweeps its own rows
// against the block it holds while the next block is in transit. A rank holds its own n/R rows and two
// blocks, O(n K / R), never the whole input.
//
// A row's sums over the blocks are kept max-shifted, as OnlineMax keeps them within a sweep, and merged
// block by block, the rank's own block first. Results agree with a single process to rounding, not
// bitwise: a single process meets the centres in one label-sorted order, the ring block by block.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/problems.hpp"
#include "core/sweep.hpp"

namespace ecekde::detail {

/// Bytes of per-row sums a rank keeps across the ring's blocks at once: a grid of bandwidths (crossfit's
/// criterion) or its rows (the calibration test's copies) go round the ring in groups of at most this much.
inline constexpr std::size_t kRingSumsBytes = std::size_t{512} << 20;

/// Where a rank's rows sit among all ranks' rows: rank r holds rows [first, first + own) of the whole
/// input, the ranks' rows following one another in rank order.
struct RingLayout {
  Communicator* comm = nullptr;  // null: alone (one block, no passes)
  std::size_t n = 0;             // rows over all ranks
  std::size_t own = 0;           // this rank's rows
  std::size_t first = 0;         // the whole input's index of this rank's first row
  std::size_t largest = 0;       // the most rows one rank holds
};

/// This rank's rows among the whole input's `rows` (increasing), as indices of its own rows.
std::vector<std::size_t> own_rows_of(const RingLayout& at, std::span<const std::size_t> rows);

/// The layout of `own` rows of `k` columns on each rank of `comm` (one all_sum). Throws on every rank,
/// with the same message, when the ranks' column counts differ.
RingLayout ring_layout(Communicator* comm, std::size_t own, std::size_t k);

/// Throws Error on every rank of `comm` when `failure` (the message of this rank's failure, empty for
/// none) is not empty on some rank: the lowest failing rank's message, prefixed "rank r: " (alone: the
/// message itself). One all_sum, so that no rank is left waiting for one that failed.
void throw_if_any_failed(Communicator* comm, const std::string& failure);

/// A block of centres as it travels, in one buffer of doubles: count, then the class run boundaries
/// (classes + 1), x transposed (dim x count), `sets` rows of the centres' offsets a_i(h) (one per
/// bandwidth), then a payload of `per_centre` values per centre (PayloadSums' layout for `count` centres).
/// Sized for the largest block, so that every rank passes the same number of values.
class CentreBlock {
 public:
  /// What a block holds besides its points: the sizes every rank's blocks share.
  struct Shape {
    std::size_t classes = 0, dim = 0, sets = 0, per_centre = 0;
  };

  /// The buffer of a label-sorted problem's centres with offsets[s][i] for centre i and their payload.
  static std::vector<double> pack(const LabelledPoints& lp, const std::vector<std::vector<double>>& offsets,
                                  std::size_t largest, std::span<const double> payload = {},
                                  std::size_t per_centre = 0);

  /// Reads a packed buffer.
  CentreBlock(std::span<const double> buffer, const Shape& shape);

  std::size_t count() const { return count_; }
  /// dim x count, unit stride along the centres.
  const double* x_t() const { return x_t_; }
  /// The class runs (classes, class_begin) as reducers read them; its points are this block's x_t().
  const LabelledPoints& runs() const { return runs_; }
  /// offsets()[s][i]: centre i's offset in set s.
  const std::vector<std::vector<double>>& offsets() const { return offsets_; }
  /// per_centre x count values.
  std::span<const double> payload() const { return payload_; }

 private:
  std::size_t count_ = 0;
  const double* x_t_ = nullptr;
  LabelledPoints runs_;
  std::vector<std::vector<double>> offsets_;
  std::span<const double> payload_;
};

/// Calls visit(buffer, own) once for every rank's `buffer` (every rank's of the same size), this rank's
/// own first, then the previous rank's, and so on, while the next one is in transit.
template <class Visit>
void pass_around(Communicator* comm, std::vector<double> buffer, Visit visit) {
  const int ranks = comm ? comm->size() : 1;
  std::vector<double> incoming(ranks > 1 ? buffer.size() : 0);
  for (int step = 0; step < ranks; ++step) {
    const bool more = step + 1 < ranks;
    if (more) comm->start_pass(buffer, incoming);
    try {
      visit(std::span<const double>(buffer), step == 0);
    } catch (...) {
      if (more) comm->finish_pass();  // the transfer must end before its buffers do
      throw;
    }
    if (!more) break;
    comm->finish_pass();
    buffer.swap(incoming);
  }
}

/// pass_around() for buffers that the ranks add into: visit(buffer, own) may change the buffer, which then
/// passes on (after the visit: no overlap), and once every rank has visited it one more pass brings each
/// buffer back to its own rank, which returns it with every rank's additions.
template <class Visit>
std::vector<double> pass_around_and_back(Communicator* comm, std::vector<double> buffer, Visit visit) {
  const int ranks = comm ? comm->size() : 1;
  std::vector<double> incoming(ranks > 1 ? buffer.size() : 0);
  for (int step = 0; step < ranks; ++step) {
    visit(std::span<double>(buffer), step == 0);
    if (ranks == 1) break;
    comm->start_pass(buffer, incoming);
    comm->finish_pass();
    buffer.swap(incoming);
  }
  return buffer;
}

/// `width` values formed by the ranks one after another, in rank order: rank 0 applies add(values) to
/// zeros, each next rank to what the previous one left, and every rank returns the last rank's values.
/// R - 1 passes and one all_sum; alone, add(zeros).
template <class Add>
std::vector<double> in_rank_order(Communicator* comm, std::size_t width, Add add) {
  std::vector<double> values(width, 0.0);
  const int ranks = comm ? comm->size() : 1, me = comm ? comm->rank() : 0;
  if (me == 0) add(std::span<double>(values));
  for (int step = 1; step < ranks; ++step) {  // step s: rank s continues from rank s - 1
    std::vector<double> incoming(width);
    comm->start_pass(values, incoming);
    comm->finish_pass();
    if (me == step) {
      values.swap(incoming);
      add(std::span<double>(values));
    }
  }
  if (ranks > 1) {
    if (me != ranks - 1) std::fill(values.begin(), values.end(), 0.0);
    comm->all_sum(values);  // the last rank's values, exactly (x + 0 = x)
  }
  return values;
}

/// The problems this rank computes, and the plan each is swept with: every problem on `plan`, or where the
/// problems are owned by ranks (SweepPlan::owned_problems) this rank's share, each swept alone on this rank.
struct OwnProblems {
  Share mine;
  SweepPlan plan;
};
OwnProblems own_problems(const SweepPlan& plan, std::size_t count);

/// The sum over problems, in problem order, of each problem's `width` values per_problem[q]: bitwise what
/// one process adds up. Where the problems are owned by ranks (SweepPlan::owned_problems), each rank fills
/// only its own problems' values, and the owners add theirs in rank order (in_rank_order).
std::vector<double> sum_over_problems(const SweepPlan& plan, const std::vector<std::vector<double>>& per_problem,
                                      std::size_t width);

/// pass_around() for blocks of centres (CentreBlock::pack): visit(block, own), own when the block's
/// centres are this rank's rows, in their order.
template <class Visit>
void around_the_ring(const RingLayout& at, std::vector<double> buffer, const CentreBlock::Shape& shape, Visit visit) {
  pass_around(at.comm, std::move(buffer),
              [&](std::span<const double> block, bool own) { visit(CentreBlock(block, shape), own); });
}

/// The sweep of this rank's rows (their log x) against one travelling block, on this process's threads, in
/// the plan's precision (sweep_points).
template <class Reducer>
void sweep_block(const KernelPoints& rows, const CentreBlock& block, const SweepPlan& plan, const Reducer& reducer) {
  if (rows.n == 0 || block.count() == 0) return;
  SweepPlan alone = plan;
  alone.communicator = nullptr;
  sweep_points(rows.log_x.data(), block.x_t(), rows.n, block.count(), rows.dim, alone, reducer);
}

/// A reducer whose per-row sums are scaled by exp(-m), m the row's largest score so far (OnlineMax), with
/// m put in front of its record, so that the ring can merge a row's records from different blocks.
/// The reducer tells m by scale(scratch, q); finish(j, m, record) receives the reducer's own record.
template <class Reducer, class Finish>
class WithScale {
 public:
  WithScale(Reducer reducer, Finish finish) : reducer_(std::move(reducer)), finish_(std::move(finish)) {}

  using Scratch = typename Reducer::Scratch;
  double work_per_pair() const { return detail::work_per_pair(reducer_); }
  Scratch scratch(std::size_t rows, std::size_t block) const { return reducer_.scratch(rows, block); }
  void begin(Scratch& s, std::size_t row0, std::size_t rows) const { reducer_.begin(s, row0, rows); }
  template <class Dot>
    requires(std::is_same_v<Dot, double> || TakesFloatTiles<Reducer>)
  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols, const Dot* dots,
            std::size_t ld) const {
    reducer_.tile(s, row0, rows, col0, cols, dots, ld);
  }
  std::size_t record_width() const { return 1 + reducer_.record_width(); }
  void record(const Scratch& s, std::size_t q, double* out) const {
    out[0] = reducer_.scale(s, q);
    reducer_.record(s, q, out + 1);
  }
  void finish(std::size_t j, const double* record) const { finish_(j, record[0], record + 1); }

 private:
  Reducer reducer_;
  Finish finish_;
};

/// The values at 0-based positions `positions` of all ranks' `values` in increasing order, as one sorted
/// array of every rank's values would hold them (each position below the total count). Reorders `values`.
/// Split across ranks: a bisection over the doubles' order, each step one all_sum of the counts at or
/// below the candidates (at most 64 steps); the values must not be NaN.
std::vector<double> order_statistics(Communicator* comm, std::vector<double>& values,
                                     std::span<const std::size_t> positions);

/// The sum over all ranks of `values`: each rank's accurate_sum, combined by an all_sum.
double total_over_ranks(Communicator* comm, std::span<const double> values);

/// Adds `count` sums scaled by exp(m) into a row's running ones, scaled by exp(acc_m): both are brought to
/// the larger scale (m = -inf: nothing to add).
void add_shifted(double& acc_m, double* acc, double m, const double* sums, std::size_t count);

/// log(exp(a) + exp(b)), with -inf standing for exp's 0.
double log_add(double a, double b);

}  // namespace ecekde::detail
