// Kernel sums of the one-dimensional types (binary, top-label, each marginal class) in near-linear time,
// by far-field expansions over a tree of the centres sorted by score.
//
// A one-dimensional problem's points are x = (s, r) with s + r = 1 to rounding, and the kernel centred
// at x_i read at row j is exp(a_i + (s_i L1_j + r_i L2_j) / h), L_j = log x_j. With sigma_i = s_i + r_i
// the exponent is a_i + tau_j s_i + ups_j sigma_i, where tau_j = (L1_j - L2_j) / h and ups_j = L2_j / h:
// a row enters only through two numbers. For a node of the tree (centres with s in s0 +- ds and sigma
// in g0 +- dg) and a payload V,
//   sum_i V_i exp(a_i + tau s_i + ups sigma_i) = exp(A + tau s0 + ups g0) sum_{a,b} M_ab tau^a ups^b,
//   M_ab = sum_i V_i exp(a_i - A) (s_i - s0)^a (sigma_i - g0)^b / (a! b!),   A = max_i a_i,
// the Taylor series of exp(tau (s_i - s0) + ups (sigma_i - g0)). Cut at a <= kOrder and b <= 1, the
// series errs by at most e^{2(U + W)} (U^{kOrder+1} / (kOrder+1)! + W^2 / 2) of the node's sum of
// |V_i| exp(...), where U = ds |tau| and W = dg |ups|. A node is expanded for a row when
// U <= kMaxScoreTerm (2) and W <= kMaxSigmaTerm (1e-9): with kOrder = 24 the error is then below
// e^4 (2^25 / 25! + 5e-19) < 1.5e-16 of its sum. Nodes farther out are dropped when
// an upper bound of their weight (the box's largest exponent times the node's mass) keeps the total
// dropped from the row below kDroppedShare of the row's weight sum so far (so also of its final sum).
// A node holding the row's own centre (which the sums leave out) is expanded as well, with that centre's
// exact term subtracted, when the term is at most kOwnShare (1/2) of the node's sum: the node's error is
// then at most twice 1.5e-16 of what remains of it. Where the own term is larger, the node is descended.
// Everything else is summed pair by pair as in the sweep. Each row's total error is thus provably below
// 4e-16 of its weight sum (for a payload column: of its sum of |V_i| w_ji plus |V_own| times the weight
// sum), plus rounding.
//
// Rows walk the tree in groups: up to 32 rows adjacent in score order whose |tau| differ little. A node is
// dropped only where every row's bound allows it, expanded only where the group's largest U and W pass
// (and no row's own centre outweighs the node), and otherwise descended or summed pair by pair for the
// whole group, so the bound above holds for each row. A group evaluates a node's series as one small
// matrix product (the node's moments by the rows' powers of tau) and a leaf as one tile, with the
// sweep's kernels. The tree splits a node where its children's count times width, summed, is least (each
// child holding at least an eighth): a dense cluster of scores is kept apart from a sparse tail, which
// a row can then expand at once or sum pair by pair.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/sweep.hpp"

namespace ecekde::detail {

/// The work of one row against `centres` centres of dimension `dim`, in kernel evaluations, for progress:
/// every centre for the sweep; for the score tree's expansions (dim 2, unless the plan asks for the full
/// sweep), whose cost per row grows only with log n, a fixed budget: about the time of that many pairs,
/// measured over bandwidths 1e-3 to 0.1 (docs/benchmarks.md).
inline constexpr double kTreeRowWork = 1000;
inline double row_work(const SweepPlan& plan, std::size_t dim, std::size_t centres) {
  const double all = static_cast<double>(centres);
  return plan.expansions && dim == 2 ? std::min(all, kTreeRowWork) : all;
}

/// Positions 0..n-1 in increasing order of `score`, ties in increasing position.
std::vector<std::uint32_t> score_order(std::span<const double> score);

/// One set of kernel sums: per row j, S_j0 = sum_{i != self(j)} w_ji^q and, for each payload column l,
/// S_j(l+1) = sum_{i != self(j)} V_il w_ji^q, with w_ji = exp(a_i + (1/h) sum_k x_ik log x_jk).
struct KernelSumRequest {
  std::span<const double> offsets;  // a_i(h), one per centre
  double inv_h = 1;
  int power = 1;                    // q: 1 for the weights, 2 for their squares
  std::span<const double> vt;       // payload, depth x centres (transposed); empty when depth = 0
  std::size_t depth = 0;
  double pair_work = 1;             // progress counted per (row, centre) pair, as the sweep would count it
};

/// The centres of a one-dimensional problem (KernelPoints of dim 2) sorted by score, in a binary tree of
/// index ranges. Built once per problem; answers requests for any bandwidth and payload.
class ScoreTree {
  struct Node;

 public:
  explicit ScoreTree(const KernelPoints& centres, std::size_t leaf = kLeaf);

  /// What a tree holds beyond copies of its centres: their order by score and the nodes, the part that
  /// costs a sort and the splits (about 9 bytes a centre). A caller that asks for the same centres' tree
  /// again (the paper's bandwidth search, a sweep per step) keeps it and rebuilds the tree from it in O(n):
  /// the same tree, so bitwise the same sums.
  struct Skeleton {
    std::vector<std::uint32_t> order;
    std::vector<Node> nodes;
  };
  ScoreTree(const KernelPoints& centres, Skeleton skeleton, std::size_t leaf = kLeaf);
  Skeleton skeleton() const { return {order_, nodes_}; }

  /// Row q of `rows` leaves out centre self[q] (no centre when self[q] >= centres; `self` empty: rows
  /// are the centres themselves, row q leaves out centre q). Writes scale[q] and
  /// sums[q * (depth + 1) + l], the sums of the request relative to exp(scale[q]) (l = 0 the weights,
  /// then the payload columns). Rows are split across the plan's threads; each row's result does not
  /// depend on the split.
  /// `order` is row_order(rows, self), or empty to have it formed here.
  void sums(const KernelPoints& rows, std::span<const std::size_t> self, const KernelSumRequest& request,
            const SweepPlan& plan, std::span<double> scale, std::span<double> sums,
            std::span<const std::uint32_t> order = {}) const;

  /// sums() for the same rows to within kGridTolerance of each sum, relative to what the bound of sums() is
  /// relative to (the sums of |V_il| w_ji over the other centres plus |V_own,l| times their weight sum),
  /// at a cost set by n and the bandwidth rather than by how the rows spread: exact sums at a few points
  /// of the row's one variable t, interpolated, with a proven bound on each row's error checked row by
  /// row; rows whose bound fails are summed exactly (score_grid.cpp).
  /// Returns how many points it summed exactly and how many rows it could not interpolate.
  struct GridCount {
    std::size_t points = 0, exact_rows = 0;
  };
  /// `order` is grid_order(rows), or empty to have it formed here.
  GridCount interpolated_sums(const KernelPoints& rows, std::span<const std::size_t> self,
                              const KernelSumRequest& request, const SweepPlan& plan, std::span<double> scale,
                              std::span<double> sums, std::span<const std::uint32_t> order = {}) const;

  /// The rows in order of L1 - L2 (so of t at any bandwidth and power), the order interpolated_sums() reads.
  static std::vector<std::uint32_t> grid_order(const KernelPoints& rows);

  /// Relative error allowed to interpolated_sums(), per sum.
  static constexpr double kGridTolerance = 1e-12;

  /// The rows in order of score, the order sums() walks them in (rows that are the centres: the tree's).
  std::vector<std::uint32_t> row_order(const KernelPoints& rows, std::span<const std::size_t> self) const;

  std::size_t size() const { return g_.size(); }

  /// Largest Taylor order in the score direction (an expansion uses the fewest terms its U allows).
  static constexpr int kOrder = 24;
  /// Largest W = dg |ups| for which a node is expanded (the sigma direction is cut after its linear term).
  static constexpr double kMaxSigmaTerm = 1e-9;
  /// Largest U = ds |tau| for which a node is expanded.
  static constexpr double kMaxScoreTerm = 2;
  /// Share of a row's weight sum that dropped far nodes may add up to.
  static constexpr double kDroppedShare = 1e-16;
  /// Largest share of an expanded node's sum that the row's own centre may hold: that node is expanded
  /// and the centre's exact term subtracted, which at most doubles the series' error relative to the rest.
  static constexpr double kOwnShare = 0.5;
  /// Centres per leaf: the default, and interpolated_sums()'s callers' (its walks are few, so the
  /// moments, formed for every node at every request, are what a smaller leaf would cost: at n = 10,000,
  /// K = 100 they were half of a marginal estimate with leaves of 32, a third with 128).
  static constexpr std::size_t kLeaf = 32, kGridLeaf = 128;
  /// Least share of a node's centres that each child holds.
  static constexpr double kMinSplitShare = 1.0 / 8;

 private:
  struct Node {
    std::uint32_t begin, end;         // sorted positions
    std::int32_t left = -1, right = -1;  // children; -1 for a leaf
    double s_lo = 0, s_hi = 0, g_lo = 0, g_hi = 0;  // ranges of s and sigma
  };
  // A request's centre exponents q a_i and payload (column 0: ones) in sorted order, and per node its scale
  // A (the largest q a_i), its moments (per column, the coefficients M_a0 then, where `series` is 2, M_a1,
  // a = 0..kOrder, laid out [node][column][b][a]) and A + log M_00 (the drop test's bound less the row's
  // part): formed once per request, read by every walk of rows. Without the sigma series (M_a1), a walk
  // expands a node only where the sigma term is exactly zero (the row's ups is 0, or the node's sigma is
  // one value): half the moments, for interpolated_sums(), whose points have ups = 0.
  struct Expansion {
    static constexpr std::size_t kTerms = kOrder + 1;
    std::size_t columns = 0, series = 2;
    std::vector<double> qa, v, scale, m, drop_base;
    double* at(std::size_t node, std::size_t column) {
      return m.data() + (node * columns + column) * series * kTerms;
    }
    const double* at(std::size_t node, std::size_t column) const {
      return m.data() + (node * columns + column) * series * kTerms;
    }
  };
  Expansion expand(const KernelSumRequest& request, const TileKernels& kern, bool sigma) const;
  // sums() of `rows` from a request's expansion.
  void walk(const Expansion& mom, const KernelPoints& rows, std::span<const std::size_t> self,
            const KernelSumRequest& request, const SweepPlan& plan, std::span<double> scale, std::span<double> sums,
            std::span<const std::uint32_t> order) const;
  void place();  // the sorted copies of the centres, from order_
  std::int32_t build(std::uint32_t begin, std::uint32_t end);
  std::uint32_t split_point(std::uint32_t begin, std::uint32_t end) const;

  const KernelPoints& centres_;
  std::size_t leaf_;
  std::vector<double> sr_;  // sorted s then sorted r (2 x n, as the kernels read centres)
  std::vector<double> g_;   // sorted sigma = s + r
  double sigma_error_ = 0;  // max |sigma - 1|
  std::vector<std::uint32_t> order_, position_;  // sorted position -> centre, and back
  std::vector<Node> nodes_;                      // children before parents; the root is last
};

}  // namespace ecekde::detail
