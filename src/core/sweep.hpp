// The blocked pairwise sweep at the heart of ecekde. Every estimator is a reduction over the kernel
// matrix k_h(x_j; x_i) (rows j = evaluation points, columns i = centres, i != j), which is never stored:
// rows are walked in blocks (one task each, in parallel), and each block of rows meets every block of
// centres as a small tile of scores. A Reducer turns the tile into whatever per-row sums it needs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/distributed.hpp"
#include "core/kernels.hpp"
#include "core/parallel.hpp"
#include "core/messages.hpp"
#include "core/work_ledger.hpp"

namespace ecekde {
struct ExecutionOptions;
}

namespace ecekde::detail {

/// Probabilities below this value (exact zeros, subnormals) enter the kernel's logarithm at this value
/// (DBL_MIN = 2^-1022). The kernel is then the limit of the exact kernel from the interior of the simplex
/// (to within exp(-708 x_ik / h)), every score is finite, and no row's kernel sum can be zero.
inline constexpr double kLogFloor = std::numeric_limits<double>::min();

/// Points on the probability simplex, prepared for the Dirichlet kernel (the Beta kernel is the case
/// dim = 2 with x = (s, 1 - s)):
///   log k_h(x_j; x_i) = a_i(h) + (1/h) sum_k x_ik log x_jk,
///   a_i(h)            = lgamma(sum_k x_ik / h + dim) - sum_k lgamma(x_ik / h + 1).
struct KernelPoints {
  std::size_t n = 0, dim = 0;
  std::vector<double> log_x;  // n x dim: log(max(x_jk, kLogFloor)), the evaluation side
  std::vector<double> x_t;    // dim x n: x_ik, the centre side, transposed for unit-stride tiles

  /// From n points given as rows of a row-major n x dim array.
  static KernelPoints from_rows(const double* x, std::size_t n, std::size_t dim);

  double x(std::size_t i, std::size_t k) const { return x_t[k * n + i]; }

  /// out[i] = a_i(h) for every centre i, on up to `threads` threads (dim lgammas a centre: at K = 1,000
  /// the nine bandwidths of a criterion took 1.8 s on one thread).
  void centre_offsets(double h, std::span<double> out, int threads) const;
};

/// Bytes of row records a distributed sweep combines at a time (over all ranks): its rows go in rounds
/// of at most this much, so that wide records (the bootstrap's classes x replicates) stay bounded.
inline constexpr std::size_t kRecordBytes = std::size_t{64} << 20;

/// Throws for an entry point that does not take ExecutionOptions::own_rows, naming those that do.
[[noreturn]] void refuse_own_rows();

/// How a sweep is cut and run.
struct SweepPlan {
  const TileKernels* kernels = nullptr;
  int threads = 1;          // resolved worker count (>= 1)
  std::size_t block = 512;  // rows per task and centres per tile
  RunControl* control = nullptr;  // progress (counted per tile of rows) and cancellation (checked per tile)
  bool expansions = true;  // one-dimensional problems by the score tree's expansions (score_tree.hpp)
  bool single_precision = false;  // reducers that take float tiles get them (sweep(), below)
  Communicator* communicator = nullptr;  // ranks to split the rows across (distributed.hpp); null = alone
  // Own rows' marginal (ring_estimate.cpp): each rank holds only its share of the problems (share_of over
  // the communicator), the others are empty; problems are always split by rank, and only per-problem
  // values (never per-row ones) are combined.
  bool owned_problems = false;
  std::size_t record_bytes = kRecordBytes;  // split: row records combined per round (sweep_blocks)
  // Marginal's pooled pilot: at most about this many negative (row, class) pairs, a label-free sample
  // above it (crossfit/family_pooled.cpp); tests lower it to reach the sampled fit at small n K.
  std::size_t pooled_negatives = std::size_t{1} << 19;
  // Crossfit's pilot: empty, the family whose held-out log-loss is lowest (Result::pilot names it), or one
  // family by that name where it is offered (tests check each family's fits apart from the choice).
  std::string_view pilot;
  // Crossfit's canonical trees (crossfit/family_trees.cpp): 0, their count of rounds chosen by the folds'
  // log-losses (one count for every fold, read off every fold's labels); tests fix it to check each fold's
  // trees apart from the choice.
  std::size_t tree_rounds = 0;

  static SweepPlan from(const ExecutionOptions& execution);
};

/// Rows of a task are processed this many at a time against each centre block: 16, so that a tile of
/// scores stays in the cache for the reducer; 128 for points of dimension kWideDim and more, where the
/// dot products dominate and each pass over the centres must serve more rows (with 16 rows at dimension
/// 1,000 every centre came from memory once per tile, at 43 GFLOP/s against 103; docs/benchmarks.md).
/// A reducer that needs another tile height says so by a member tile_rows(). Results do not depend on it.
inline constexpr std::size_t kRowTile = 16, kWideRowTile = 128, kWideDim = 64;

/// A sweep of few rows cuts them into at least this many tasks (sweep_blocks()).
inline constexpr std::size_t kMinTasks = 8;

template <class Reducer>
std::size_t row_tile(const Reducer& reducer, std::size_t dim, std::size_t block) {
  if constexpr (requires { reducer.tile_rows(); })
    return std::min(block, reducer.tile_rows());
  else
    return std::min(block, dim >= kWideDim ? kWideRowTile : kRowTile);
}

/// The work of one (row, centre) pair, in kernel evaluations, for progress: a reducer that weighs each
/// pair for several bandwidths or replicates says so by a member work_per_pair().
template <class Reducer>
double work_per_pair(const Reducer& reducer) {
  if constexpr (requires { reducer.work_per_pair(); })
    return static_cast<double>(reducer.work_per_pair());
  else
    return 1.0;
}

/// Per-worker state of a sweep: the reducer's scratch, a tile of dot products (of type Dot) and room for
/// one row's record (`record_width` values), made on a worker's first task and reused for the rest.
template <class Reducer, class Dot = double>
class WorkerScratch {
 public:
  WorkerScratch(const Reducer& reducer, int workers, std::size_t row_tile, std::size_t block,
                std::size_t record_width = 0)
      : reducer_(reducer), row_tile_(row_tile), block_(block), record_width_(record_width),
        scratch_(static_cast<std::size_t>(std::max(workers, 1))), dots_(scratch_.size()), records_(scratch_.size()) {}

  typename Reducer::Scratch& scratch(int worker) {
    auto& s = scratch_[static_cast<std::size_t>(worker)];
    if (!s) {
      s.emplace(reducer_.scratch(row_tile_, block_));
      dots_[static_cast<std::size_t>(worker)].resize(row_tile_ * block_);
      records_[static_cast<std::size_t>(worker)].resize(record_width_);
    }
    return *s;
  }
  Dot* dots(int worker) { return dots_[static_cast<std::size_t>(worker)].data(); }
  double* record(int worker) { return records_[static_cast<std::size_t>(worker)].data(); }

 private:
  const Reducer& reducer_;
  std::size_t row_tile_, block_, record_width_;
  std::vector<std::optional<typename Reducer::Scratch>> scratch_;
  std::vector<std::vector<Dot>> dots_;
  std::vector<std::vector<double>> records_;
};

/// A reducer whose tile() also takes float dot products (a template over the dot type): the float path.
template <class Reducer>
concept TakesFloatTiles = requires(const Reducer& r, typename Reducer::Scratch& s, const float* dots) {
  r.tile(s, std::size_t{}, std::size_t{}, std::size_t{}, std::size_t{}, dots, std::size_t{});
};

/// The blocks of sweep(), for dot products of type Dot: row_side is rows x dim (the rows' log x), centre_side
/// dim x centres (the centres' x, transposed), both as `dot` reads them. Split across ranks
/// (plan.communicator), each rank sweeps its share of the rows in rounds; a round's records are combined
/// over the ranks and every rank finishes every row of the round, in the same order as alone.
template <class Dot, class Reducer, class DotKernel>
void sweep_blocks(const Dot* row_side, const Dot* centre_side, std::size_t n, std::size_t m, std::size_t dim,
                  DotKernel dot, const SweepPlan& plan, const Reducer& reducer) {
  const std::size_t block = std::max<std::size_t>(1, plan.block);
  const std::size_t tile_rows = row_tile(reducer, dim, block), width = reducer.record_width();
  Communicator* comm = plan.communicator;
  const Share mine = share_of(n, comm);
  const int ranks = comm ? comm->size() : 1;
  // Rows per rank and round: all of them alone; else as many as fit plan.record_bytes over all ranks.
  const std::size_t largest_share = (n + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
  const std::size_t round_rows = std::max<std::size_t>(
      1, comm ? std::min(largest_share, plan.record_bytes / (sizeof(double) * width * static_cast<std::size_t>(ranks)))
              : n);
  const std::size_t rounds = (largest_share + round_rows - 1) / round_rows;
  // Rows per task: `block`, or fewer in a sweep of few rows, so that it still makes kMinTasks tasks (a
  // fold's share of the crossfit criterion's rows, 400 at n = 10,000, K = 1,000, ran on one thread). From
  // n alone, so that no row's tiles depend on the thread count; the centre tiles stay `block` wide.
  const std::size_t task_rows =
      std::min(block, std::max(tile_rows, (n / kMinTasks + tile_rows - 1) / tile_rows * tile_rows));
  const std::size_t most_tasks = (std::min(round_rows, mine.size()) + task_rows - 1) / task_rows;
  const int workers = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(plan.threads), std::max<std::size_t>(most_tasks, 1)));
  // A tile is never wider than the centres nor taller than the rows: the scratch of a small sweep (the
  // ring's passes, a bootstrap's copies) is allocated and cleared for what it uses, not for the block.
  // Under the sanitizers, clearing and faulting in whole-block scratch was 30% of the ring's bootstrap test.
  const std::size_t stride = std::min(block, std::max<std::size_t>(m, 1));
  WorkerScratch<Reducer, Dot> per_worker(reducer, workers, std::min(tile_rows, std::max<std::size_t>(n, 1)), stride,
                                         width);
  const double row_work = static_cast<double>(m) * work_per_pair(reducer);
  // Progress per own row: the share of the work it stands for (1 alone), so that a rank's fraction is the run's.
  const double counted = mine.size() ? static_cast<double>(n) / static_cast<double>(mine.size()) : 0.0;
  WorkLedger::start(plan.control, static_cast<double>(n) * row_work);
  std::vector<double> records(comm ? round_rows * static_cast<std::size_t>(ranks) * width : 0);
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t first = std::min(mine.end, mine.begin + round * round_rows);
    const std::size_t last = std::min(mine.end, first + round_rows);
    // Alone, each row is finished as soon as it is done; split, its record goes to the round's buffer.
    double* own_records = comm ? records.data() + static_cast<std::size_t>(comm->rank()) * round_rows * width : nullptr;
    std::fill(records.begin(), records.end(), 0.0);
    parallel_for((last - first + task_rows - 1) / task_rows, workers, [&](std::size_t task, int worker) {
      auto& s = per_worker.scratch(worker);
      Dot* d = per_worker.dots(worker);
      const std::size_t r_end = std::min(last, first + (task + 1) * task_rows);
      for (std::size_t r0 = first + task * task_rows; r0 < r_end; r0 += tile_rows) {
        const std::size_t nr = std::min(tile_rows, r_end - r0);
        reducer.begin(s, r0, nr);
        for (std::size_t c0 = 0; c0 < m; c0 += block) {
          WorkLedger::check(plan.control);  // per tile, so that a stop is prompt at any n
          const std::size_t cols = std::min(block, m - c0);
          dot(row_side + r0 * dim, dim, centre_side + c0, m, nr, cols, dim, d, stride);
          reducer.tile(s, r0, nr, c0, cols, static_cast<const Dot*>(d), stride);
        }
        for (std::size_t q = 0; q < nr; ++q) {
          double* record = own_records ? own_records + (r0 + q - first) * width : per_worker.record(worker);
          reducer.record(s, q, record);
          if (!own_records) reducer.finish(r0 + q, record);
        }
        WorkLedger::done(plan.control, static_cast<double>(nr) * row_work * counted);
      }
    });
    if (!comm) continue;
    combine_shares(comm, records);
    parallel_for(static_cast<std::size_t>(ranks), workers, [&](std::size_t rank, int) {
      const Share theirs = share_of(n, static_cast<int>(rank), ranks);
      const std::size_t start = theirs.begin + round * round_rows;
      for (std::size_t j = start; j < std::min(theirs.end, start + round_rows); ++j)
        reducer.finish(j, records.data() + (rank * round_rows + j - start) * width);
    });
  }
}

/// sweep_blocks() of n rows (log x, row-major) against m centres (x transposed, dim x m) in the plan's
/// precision: a reducer that takes float tiles gets them when the plan asks for single precision (both
/// sides rounded to float once here), any other double ones.
template <class Reducer>
void sweep_points(const double* log_x, const double* x_t, std::size_t n, std::size_t m, std::size_t dim,
                  const SweepPlan& plan, const Reducer& reducer) {
  if constexpr (TakesFloatTiles<Reducer>) {
    if (plan.single_precision) {
      const std::vector<float> rows(log_x, log_x + n * dim), centres(x_t, x_t + dim * m);
      sweep_blocks(rows.data(), centres.data(), n, m, dim, plan.kernels->dot_float, plan, reducer);
      return;
    }
  }
  sweep_blocks(log_x, x_t, n, m, dim, plan.kernels->dot, plan, reducer);
}

/// Walks all (row, centre) pairs: rows are evaluation points (their log_x is used), centres the kernel
/// centres (their x_t). The Reducer provides
///   struct Scratch;                                       per-worker state
///   Scratch scratch(std::size_t row_tile, std::size_t block) const;   makes one
///   void begin(Scratch&, std::size_t row0, std::size_t rows) const;
///   void tile(Scratch&, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols,
///             const double* dots, std::size_t ld) const;  dots[q*ld + c] = sum_k log x_{row0+q,k} x_{col0+c,k}
///   std::size_t record_width() const;                     values a row's result takes
///   void record(const Scratch&, std::size_t q, double* out) const;   row0 + q's result, after its last tile
///   void finish(std::size_t j, const double* record) const;          hands row j's result on
/// Rows are independent, so results do not depend on the thread count; each row sees the centre
/// blocks in increasing order. When rows and centres are the same points, the diagonal pair (j, j) is
/// present in `dots` and leave-one-out reducers exclude it.
/// A reducer whose tile() is a template over the dot type gets float dot products when the plan asks for
/// single precision (TakesFloatTiles): the points are rounded to float once per sweep, and the reducer
/// turns the float dot products into float weights (OnlineMax::weights), which it accumulates in double.
/// A reducer that can also be computed from kernel sums (score_tree.hpp) provides
///   void expanded(const KernelPoints& rows, const KernelPoints& centres, const SweepPlan&) const;
/// and is then computed that way for one-dimensional problems (dim 2) unless the plan says otherwise.
template <class Reducer>
void sweep(const KernelPoints& rows, const KernelPoints& centres, const SweepPlan& plan, const Reducer& reducer) {
  ECEKDE_ASSERT(rows.dim == centres.dim);
  if constexpr (requires { reducer.expanded(rows, centres, plan); }) {
    if (plan.expansions && centres.dim == 2) {
      reducer.expanded(rows, centres, plan);
      return;
    }
  }
  sweep_points(rows.log_x.data(), centres.x_t.data(), rows.n, centres.n, rows.dim, plan, reducer);
}

/// The leave-one-out sweep: rows and centres are the same points.
template <class Reducer>
void sweep(const KernelPoints& pts, const SweepPlan& plan, const Reducer& reducer) {
  sweep(pts, pts, plan, reducer);
}

/// Walks all (row, centre) pairs once for reductions that also add into per-centre outputs (gradients),
/// and that pass a second time over what their first pass kept of a tile of rows: n rows (log x, n x dim)
/// against m centres (x transposed, dim x m), as sweep_points(). Tasks are blocks of rows, as in sweep();
/// each tile of rows meets every centre block in increasing order (tile(), as in sweep()), and then end()
/// finishes the tile's rows, adding into row-indexed outputs and into `centre`, its task's own copy of the
/// centre-indexed ones. The copies are added into centre_sums() in task order, a wave of tasks at a time,
/// so no output depends on the thread count. The Reducer provides
///   struct Scratch;  Scratch scratch(std::size_t row_tile, std::size_t block) const;
///   void begin(Scratch&, std::size_t row0, std::size_t rows) const;
///   void tile(Scratch&, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols,
///             const double* dots, std::size_t ld) const;   as for sweep()
///   void end(Scratch&, std::size_t row0, std::size_t rows, std::span<double> centre) const;
///   std::span<double> centre_sums() const;                 added into, zero before the sweep
///   std::vector<std::span<double>> row_outputs() const;    written row by row, zero before the sweep
/// Split across ranks, each rank takes its share of the row blocks and every output is then summed over
/// the ranks: a row's outputs come from one rank, a centre's add the ranks' partial sums (so these agree
/// with a single process to rounding, not bitwise).
template <class Reducer>
void sweep_points_with_centre_sums(const double* log_x, const double* x_t, std::size_t n, std::size_t m,
                                   std::size_t dim, const SweepPlan& plan, const Reducer& reducer) {
  const std::size_t block = std::max<std::size_t>(1, plan.block);
  const std::size_t tile_rows = row_tile(reducer, dim, block), blocks = (n + block - 1) / block;
  const Share mine = share_of(blocks, plan.communicator);
  const auto workers = std::min<std::size_t>(static_cast<std::size_t>(plan.threads), std::max<std::size_t>(mine.size(), 1));
  WorkerScratch<Reducer> per_worker(reducer, static_cast<int>(workers), tile_rows, block);
  const std::span<double> total = reducer.centre_sums();
  std::vector<double> copies(workers * total.size());
  const double row_work = static_cast<double>(m) * work_per_pair(reducer);
  const double counted = mine.size() ? static_cast<double>(blocks) / static_cast<double>(mine.size()) : 0.0;
  WorkLedger::start(plan.control, static_cast<double>(n) * row_work);
  for (std::size_t wave = mine.begin; wave < mine.end; wave += workers) {
    const std::size_t tasks = std::min(workers, mine.end - wave);
    std::fill_n(copies.begin(), tasks * total.size(), 0.0);
    parallel_for(tasks, static_cast<int>(workers), [&](std::size_t task, int worker) {
      auto& s = per_worker.scratch(worker);
      double* d = per_worker.dots(worker);
      const std::span<double> centre(copies.data() + task * total.size(), total.size());
      const std::size_t a = wave + task, r_end = std::min(n, (a + 1) * block);
      for (std::size_t r0 = a * block; r0 < r_end; r0 += tile_rows) {
        const std::size_t rows = std::min(tile_rows, r_end - r0);
        reducer.begin(s, r0, rows);
        for (std::size_t c0 = 0; c0 < m; c0 += block) {
          WorkLedger::check(plan.control);
          const std::size_t cols = std::min(block, m - c0);
          plan.kernels->dot(log_x + r0 * dim, dim, x_t + c0, m, rows, cols, dim, d, block);
          reducer.tile(s, r0, rows, c0, cols, static_cast<const double*>(d), block);
        }
        reducer.end(s, r0, rows, centre);
        WorkLedger::done(plan.control, static_cast<double>(rows) * row_work * counted);
      }
    });
    for (std::size_t task = 0; task < tasks; ++task)
      for (std::size_t i = 0; i < total.size(); ++i) total[i] += copies[task * total.size() + i];
  }
  combine_shares(plan.communicator, total);
  for (std::span<double> out : reducer.row_outputs()) combine_shares(plan.communicator, out);
}

/// The leave-one-out sweep_points_with_centre_sums(): rows and centres are the same points.
template <class Reducer>
void sweep_with_centre_sums(const KernelPoints& pts, const SweepPlan& plan, const Reducer& reducer) {
  sweep_points_with_centre_sums(pts.log_x.data(), pts.x_t.data(), pts.n, pts.n, pts.dim, plan, reducer);
}

/// A block of centre offsets a_i(h) split into floats hi + lo (hi = a_i rounded to float, lo = the rest
/// rounded to float; hi + lo = a_i within about 2^-48 relative), for scores from float dot products.
struct SplitOffsets {
  const float* hi;
  const float* lo;
};

/// The offsets of one centre block as OnlineMax::weights reads them for dot products of type Dot: the
/// doubles themselves, or for float dots split once per tile (SplitOffsets), not once per row.
class BlockOffsets {
 public:
  explicit BlockOffsets(std::size_t block) : hi_(block), lo_(block) {}

  template <class Dot>
  auto of(const double* offsets, std::size_t cols) {
    if constexpr (std::is_same_v<Dot, double>) {
      return offsets;
    } else {
      for (std::size_t c = 0; c < cols; ++c) {
        hi_[c] = static_cast<float>(offsets[c]);
        lo_[c] = static_cast<float>(offsets[c] - static_cast<double>(hi_[c]));
      }
      return SplitOffsets{hi_.data(), lo_.data()};
    }
  }

 private:
  std::vector<float> hi_, lo_;
};

/// One row's weights of a centre block, in the precision of the tile's dot products: double, or float on
/// the float path, where reducers that accumulate doubles read them widened.
class RowWeights {
 public:
  explicit RowWeights(std::size_t block) : w_(block), w_float_(block) {}

  template <class Dot>
  Dot* data() {
    if constexpr (std::is_same_v<Dot, double>) return w_.data();
    else return w_float_.data();
  }

  /// The first `cols` weights as doubles (widened once when they are floats).
  template <class Dot>
  const double* as_double(const TileKernels& kern, std::size_t cols) {
    if constexpr (!std::is_same_v<Dot, double>) kern.widen(w_float_.data(), w_.data(), cols);
    return w_.data();
  }

 private:
  std::vector<double> w_;
  std::vector<float> w_float_;
};

/// Sum of n weights in their precision.
inline double weight_sum(const TileKernels& kern, const double* w, std::size_t n) { return kern.sum(w, n); }
inline double weight_sum(const TileKernels& kern, const float* w, std::size_t n) { return kern.sum_float(w, n); }

/// The running maximum of a row's scores and the rescaling it implies (online log-sum-exp): turns one
/// row of dot products into weights exp(score - m) with m the largest score seen so far, and tells the
/// caller by which factor to rescale what it has already accumulated.
struct OnlineMax {
  double m = -std::numeric_limits<double>::infinity();

  struct Step {
    bool any;       // false: the tile holds only the row's own diagonal; `out` is meaningless
    double factor;  // multiply what this row accumulated before by this (<= 1) before adding `out`
  };

  /// dots[c] -> exp(offset[c] + inv_h * dots[c] - m) in `out`, with out[skip] = 0 (skip >= cols: none),
  /// after raising m to the tile's maximum score where that is larger.
  Step weights(const TileKernels& kern, const double* dots, double* out, const double* offset,
               double inv_h, std::size_t cols, std::size_t skip);

  /// The same from float dot products, with the offsets split into floats (BlockOffsets); the weights in
  /// float.
  Step weights(const TileKernels& kern, const float* dots, float* out, const SplitOffsets& offset,
               double inv_h, std::size_t cols, std::size_t skip);
};

/// Index of row j inside a centre block starting at col0 with `cols` centres, or cols if absent.
inline std::size_t diagonal_in_block(std::size_t j, std::size_t col0, std::size_t cols) {
  return j >= col0 && j < col0 + cols ? j - col0 : cols;
}

}  // namespace ecekde::detail
