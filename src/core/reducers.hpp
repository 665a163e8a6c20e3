// The reductions over the sweep that the estimators are built from.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "core/problems.hpp"
#include "core/score_tree.hpp"
#include "core/sweep.hpp"

namespace ecekde::detail {

/// Adds one row's weights w of the centres col0 .. col0 + cols to its class sums acc (L values), one
/// class run of the (label-sorted) centres at a time.
template <class Weight>
void add_class_sums(const LabelledPoints& lp, const TileKernels& kern, const Weight* w, std::size_t col0,
                    std::size_t cols, double* acc) {
  const std::size_t col_end = col0 + cols;
  for (std::size_t c = lp.label(col0); c < lp.classes && lp.class_begin[c] < col_end; ++c) {
    const std::size_t b = std::max(lp.class_begin[c], col0), e = std::min(lp.class_begin[c + 1], col_end);
    if (b < e) acc[c] += weight_sum(kern, w + (b - col0), e - b);
  }
}

/// Per row j and class c: N_jc = sum_{i != j, y_i = c} exp(s_ji - m_j), with m_j the row's largest
/// score s_ji = a_i + d_ji / h. Calls finish(j, m_j, N_j) once per row (N_j: `classes` values), from the
/// worker that owns row j. Centres are sorted by label, so each class is a contiguous run of a tile.
/// With leave_one_out false (rows are other points than the centres) no pair is excluded.
template <class Finish>
class ClassSums {
 public:
  ClassSums(const LabelledPoints& lp, const TileKernels& kern, std::span<const double> offsets,
            double inv_h, Finish finish, bool leave_one_out = true)
      : lp_(lp), kern_(kern), offsets_(offsets), inv_h_(inv_h), finish_(std::move(finish)),
        leave_one_out_(leave_one_out) {}

  struct Scratch {
    std::vector<OnlineMax> max;
    std::vector<double> sums;
    RowWeights w;
    BlockOffsets offsets;
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    return {std::vector<OnlineMax>(rows), std::vector<double>(rows * lp_.classes), RowWeights(block),
            BlockOffsets(block)};
  }

  void begin(Scratch& s, std::size_t, std::size_t rows) const {
    std::fill_n(s.max.begin(), rows, OnlineMax{});
    std::fill_n(s.sums.begin(), rows * lp_.classes, 0.0);
  }

  template <class Dot>
  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols, const Dot* dots,
            std::size_t ld) const {
    const std::size_t L = lp_.classes;
    const auto offsets = s.offsets.template of<Dot>(offsets_.data() + col0, cols);
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t skip = leave_one_out_ ? diagonal_in_block(row0 + q, col0, cols) : cols;
      Dot* w = s.w.template data<Dot>();
      const auto step = s.max[q].weights(kern_, dots + q * ld, w, offsets, inv_h_, cols, skip);
      if (!step.any) continue;
      double* acc = s.sums.data() + q * L;
      if (step.factor != 1)
        for (std::size_t c = 0; c < L; ++c) acc[c] *= step.factor;
      add_class_sums(lp_, kern_, w, col0, cols, acc);
    }
  }

  std::size_t record_width() const { return 1 + lp_.classes; }  // m_j, then N_j

  void record(const Scratch& s, std::size_t q, double* out) const {
    out[0] = s.max[q].m;
    std::copy_n(s.sums.begin() + static_cast<std::ptrdiff_t>(q * lp_.classes), lp_.classes, out + 1);
  }

  void finish(std::size_t j, const double* record) const { finish_(j, record[0], record + 1); }

  /// The same sums from the score tree (problems of dimension 2): the class indicators as payload. For
  /// one-dimensional problems only the positive class's: N_j0 = D_j - N_j1, as only their sum and N_j1
  /// are read.
  void expanded(const KernelPoints& rows, const KernelPoints& centres, const SweepPlan& plan) const {
    const std::size_t n = centres.n, L = lp_.classes, first = lp_.one_dimensional ? 1 : 0, depth = L - first;
    std::vector<double> indicator(depth * n, 0.0);
    for (std::size_t c = first; c < L; ++c)
      std::fill(indicator.begin() + static_cast<std::ptrdiff_t>((c - first) * n + lp_.class_begin[c]),
                indicator.begin() + static_cast<std::ptrdiff_t>((c - first) * n + lp_.class_begin[c + 1]), 1.0);
    const std::vector<std::size_t> no_self(leave_one_out_ ? 0 : rows.n, n);
    std::vector<double> scale(rows.n), sums(rows.n * (depth + 1)), class_sums(L);
    ScoreTree(centres).sums(rows, no_self, {offsets_, inv_h_, 1, indicator, depth}, plan, scale, sums);
    for (std::size_t j = 0; j < rows.n; ++j) {
      const double* row = sums.data() + j * (depth + 1);
      if (lp_.one_dimensional) class_sums = {row[0] - row[1], row[1]};
      else std::copy_n(row + 1, L, class_sums.begin());
      finish_(j, scale[j], class_sums.data());
    }
  }

 private:
  const LabelledPoints& lp_;
  const TileKernels& kern_;
  std::span<const double> offsets_;
  double inv_h_;
  Finish finish_;
  bool leave_one_out_;
};

/// Per row j and each of several bandwidths h: log sum_{i != self(j)} k_h(x_j; x_i), sharing the dot
/// products between bandwidths. self(j) is the centre that row j is (rows[j], or j itself when `self` is
/// empty: rows and centres are the same points). Calls finish(j, log_sums) once per row (one value per
/// bandwidth). `tree`: the centres' score tree where the caller keeps one (else built here).
template <class Finish>
class LogKernelSums {
 public:
  LogKernelSums(const TileKernels& kern, const std::vector<std::vector<double>>& offsets,
                std::vector<double> inv_h, Finish finish, std::span<const std::size_t> self = {},
                const ScoreTree* tree = nullptr)
      : kern_(kern), offsets_(offsets), inv_h_(std::move(inv_h)), finish_(std::move(finish)), self_(self),
        tree_(tree) {}

  /// Relative cost of a pair, for progress: one exponential per bandwidth.
  double work_per_pair() const { return static_cast<double>(inv_h_.size()); }

  struct Scratch {
    std::vector<OnlineMax> max;
    std::vector<double> sums, w;
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    const std::size_t H = inv_h_.size();
    return {std::vector<OnlineMax>(rows * H), std::vector<double>(rows * H), std::vector<double>(block)};
  }

  void begin(Scratch& s, std::size_t, std::size_t rows) const {
    std::fill_n(s.max.begin(), rows * inv_h_.size(), OnlineMax{});
    std::fill_n(s.sums.begin(), rows * inv_h_.size(), 0.0);
  }

  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols,
            const double* dots, std::size_t ld) const {
    const std::size_t H = inv_h_.size();
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t skip = diagonal_in_block(self_.empty() ? row0 + q : self_[row0 + q], col0, cols);
      for (std::size_t b = 0; b < H; ++b) {
        const auto step = s.max[q * H + b].weights(kern_, dots + q * ld, s.w.data(),
                                                   offsets_[b].data() + col0, inv_h_[b], cols, skip);
        if (!step.any) continue;
        double& acc = s.sums[q * H + b];
        acc = acc * step.factor + kern_.sum(s.w.data(), cols);
      }
    }
  }

  std::size_t record_width() const { return inv_h_.size(); }  // the log sums

  void record(const Scratch& s, std::size_t q, double* out) const {
    const std::size_t H = inv_h_.size();
    for (std::size_t b = 0; b < H; ++b) out[b] = s.max[q * H + b].m + std::log(s.sums[q * H + b]);
  }

  void finish(std::size_t j, const double* record) const { finish_(j, record); }

  /// The same sums from the score tree (one-dimensional problems), one request per bandwidth.
  void expanded(const KernelPoints& rows, const KernelPoints& centres, const SweepPlan& plan) const {
    const std::size_t H = inv_h_.size(), R = rows.n;
    std::optional<ScoreTree> own_tree;
    const ScoreTree& tree = tree_ ? *tree_ : own_tree.emplace(centres);
    const std::vector<std::uint32_t> order = tree.row_order(rows, self_);
    std::vector<double> log_sums(R * H), scale(R), sums(R);
    for (std::size_t b = 0; b < H; ++b) {
      tree.sums(rows, self_, {offsets_[b], inv_h_[b], 1, {}, 0}, plan, scale, sums, order);
      for (std::size_t j = 0; j < R; ++j) log_sums[j * H + b] = scale[j] + std::log(sums[j]);
    }
    for (std::size_t j = 0; j < R; ++j) finish_(j, log_sums.data() + j * H);
  }

 private:
  const TileKernels& kern_;
  const std::vector<std::vector<double>>& offsets_;
  std::vector<double> inv_h_;
  Finish finish_;
  std::span<const std::size_t> self_;
  const ScoreTree* tree_;
};

/// PayloadSums sums a tile's payload as one matrix product, the weights (rows x centres, as the row's
/// exponentials write them) with the payload block (centres x values), in the dot kernel's register tiles.
/// Payloads of at least this many values per centre (the canonical crossfit's residuals at K >= 64) also
/// skip the centres whose weights are negligible for a whole group of rows (sparse_product()).
inline constexpr std::size_t kWidePayload = 64;

/// Values per centre of a payload as PayloadSums stores it: padded with zeros to a multiple of 8, so that
/// the product runs in whole vectors (at K = 100 the dot kernel summed the last 4 columns one by one, at
/// two thirds of its rate), one value alone unpadded. Narrow payloads used to be stored transposed, for a
/// product with the tile's weights transposed: writing those, one scalar store per pair, 128 bytes from
/// the last, took 17% of a canonical crossfit estimate at n = 50,000, K = 10 (docs/benchmarks.md).
inline std::size_t payload_stride(std::size_t depth) { return depth == 1 ? 1 : (depth + 7) / 8 * 8; }

/// Where PayloadSums reads value l of centre i's payload (centre-major; n * payload_stride(depth) values
/// for n centres).
inline std::size_t payload_index(std::size_t i, std::size_t l, std::size_t depth) {
  return i * payload_stride(depth) + l;
}

/// PayloadSums' sums (D_j, Q_j, A_j: finish(j, D, Q, A)) from the score tree, for one-dimensional problems:
/// the weights with a payload given transposed (`vt`, depth x centres), interpolated (interpolated_sums),
/// then the squared weights, brought to the weights' scale. `tree` and `order` as PayloadSums takes them
/// (null and empty: formed here); `pair_work` is a pair's work for progress (PayloadSums::work_per_pair()).
template <class Finish>
void tree_payload_sums(const KernelPoints& rows, const KernelPoints& centres, std::span<const std::size_t> self,
                       std::span<const double> offsets, double inv_h, std::span<const double> vt, std::size_t depth,
                       double pair_work, const ScoreTree* tree, std::span<const std::uint32_t> order,
                       const SweepPlan& plan, const Finish& finish) {
  const std::size_t R = rows.n, width = depth + 1;
  std::optional<ScoreTree> own_tree;
  const ScoreTree& centres_tree = tree ? *tree : own_tree.emplace(centres, ScoreTree::kGridLeaf);
  ECEKDE_ASSERT(centres_tree.size() == centres.n && vt.size() == depth * centres.n);
  std::vector<std::uint32_t> own_order;
  if (order.empty()) own_order = ScoreTree::grid_order(rows);
  const std::span<const std::uint32_t> walk = order.empty() ? std::span<const std::uint32_t>(own_order) : order;
  std::vector<double> scale(R), sums(R * width), scale2(R), squares(R);
  const double half = pair_work / 2;
  centres_tree.interpolated_sums(rows, self, {offsets, inv_h, 1, vt, depth, half}, plan, scale, sums, walk);
  centres_tree.interpolated_sums(rows, self, {offsets, inv_h, 2, {}, 0, half}, plan, scale2, squares, walk);
  for (std::size_t j = 0; j < R; ++j)
    finish(j, sums[j * width], squares[j] * std::exp(scale2[j] - 2 * scale[j]), sums.data() + j * width + 1);
}

/// Per row j, with weights w_ji = exp(s_ji - m_j) over the centres i != self(j): the sum D_j = sum_i w_ji,
/// the sum of squares Q_j = sum_i w_ji^2 and A_jl = sum_i w_ji V_il for a per-centre payload V (depth
/// values per centre, stored as payload_index() says). self(j) is the centre that row j is (self[j], or j
/// itself when `self` is empty). Calls finish(j, D_j, Q_j, A_j) once per row (A_j: depth values).
template <class Finish>
class PayloadSums {
 public:
  /// `tree`: the centres' score tree, when the caller keeps one for several bandwidths (else built here);
  /// `order`: ScoreTree::grid_order(rows), when the caller keeps it too (else formed here).
  PayloadSums(const TileKernels& kern, std::span<const double> offsets, double inv_h, std::span<const double> payload,
              std::size_t depth, Finish finish, std::span<const std::size_t> self = {}, const ScoreTree* tree = nullptr,
              std::span<const std::uint32_t> order = {})
      : kern_(kern), offsets_(offsets), inv_h_(inv_h), payload_(payload), depth_(depth),
        stride_(payload_stride(depth)), finish_(std::move(finish)),
        self_(self), tree_(tree), order_(order) {}

  /// Relative cost of a pair, for progress: an exponential, and a multiply-add per payload value (about a tenth of one).
  double work_per_pair() const { return 1 + 0.1 * static_cast<double>(depth_); }

  struct Scratch {
    std::vector<OnlineMax> max;
    std::vector<double> sums;  // per row: D, Q, then depth payload sums
    RowWeights w;
    BlockOffsets offsets;
    std::vector<double> tile_weights;  // the tile's weights, `block` per row
    std::size_t block;
    // wide payloads, sparse tiles (sparse_product()): each group's live centres, and the weights of a
    // chunk of them, kSparseGroup x kGatherCentres (their payload rows are read in place)
    std::vector<std::uint32_t> live;
    std::vector<std::size_t> live_count;
    std::vector<double> gathered_weights;
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    const std::size_t groups = wide() ? (rows + kSparseGroup - 1) / kSparseGroup : 0;
    return {std::vector<OnlineMax>(rows),
            std::vector<double>(rows * sums_width()),
            RowWeights(block),
            BlockOffsets(block),
            std::vector<double>(rows * block),
            block,
            std::vector<std::uint32_t>(groups * block),
            std::vector<std::size_t>(groups),
            std::vector<double>(groups ? kSparseGroup * kGatherCentres : 0)};
  }

  void begin(Scratch& s, std::size_t, std::size_t rows) const {
    std::fill_n(s.max.begin(), rows, OnlineMax{});
    std::fill_n(s.sums.begin(), rows * sums_width(), 0.0);
  }

  template <class Dot>
  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols, const Dot* dots,
            std::size_t ld) const {
    const std::size_t width = sums_width();
    const auto offsets = s.offsets.template of<Dot>(offsets_.data() + col0, cols);
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t skip = diagonal_in_block(self_.empty() ? row0 + q : self_[row0 + q], col0, cols);
      double* tile_row = s.tile_weights.data() + q * s.block;  // double weights are written there directly
      Dot* out = s.w.template data<Dot>();
      if constexpr (std::is_same_v<Dot, double>) out = tile_row;
      const auto step = s.max[q].weights(kern_, dots + q * ld, out, offsets, inv_h_, cols, skip);
      if (!step.any) {  // the row's weights are 0: it gets nothing from the product
        std::fill_n(tile_row, cols, 0.0);
        continue;
      }
      if constexpr (!std::is_same_v<Dot, double>) kern_.widen(out, tile_row, cols);
      double* acc = s.sums.data() + q * width;
      if (step.factor != 1) {
        acc[0] *= step.factor;
        acc[1] *= step.factor * step.factor;
        for (std::size_t l = 0; l < depth_; ++l) acc[2 + l] *= step.factor;
      }
      kern_.sum_and_squares(tile_row, cols, acc, acc + 1);
      if (wide())
        for (std::size_t c = 0; c < cols; ++c)
          if (tile_row[c] < kNegligibleWeight) tile_row[c] = 0;
    }
    if (!wide() || !sparse_product(s, rows, col0, cols))
      kern_.dot_add(s.tile_weights.data(), s.block, payload_.data() + col0 * stride_, stride_, rows, stride_, cols,
                    s.sums.data() + 2, width);
  }

  std::size_t record_width() const { return depth_ + 2; }  // D_j, Q_j, then A_j

  void record(const Scratch& s, std::size_t q, double* out) const {
    std::copy_n(s.sums.begin() + static_cast<std::ptrdiff_t>(q * sums_width()), depth_ + 2, out);
  }

  void finish(std::size_t j, const double* record) const { finish_(j, record[0], record[1], record + 2); }

  /// Row q's scale m: its record's sums are those of exp(s_ji - m) (ring.hpp's WithScale).
  double scale(const Scratch& s, std::size_t q) const { return s.max[q].m; }

  /// The same sums from the score tree (one-dimensional problems): tree_payload_sums() of the payload
  /// transposed (one value per centre is both layouts; the canonical problem at K = 2 has two).
  void expanded(const KernelPoints& rows, const KernelPoints& centres, const SweepPlan& plan) const {
    std::vector<double> transposed;
    if (stride_ != 1) {
      transposed.resize(depth_ * centres.n);
      for (std::size_t i = 0; i < centres.n; ++i)
        for (std::size_t l = 0; l < depth_; ++l) transposed[l * centres.n + i] = payload_[i * stride_ + l];
    }
    tree_payload_sums(rows, centres, self_, offsets_, inv_h_, stride_ != 1 ? std::span<const double>(transposed) : payload_,
                      depth_, work_per_pair(), tree_, order_, plan, finish_);
  }

 private:
  bool wide() const { return depth_ >= kWidePayload; }
  // A row's sums in the scratch: D, Q, then the payload's (padded) stride of values.
  std::size_t sums_width() const { return stride_ + 2; }

  // At small bandwidths most weights of a wide tile are negligible. Once D and Q have them, weights below
  // kNegligibleWeight (relative to the row's largest so far, which only grows) are set to 0 for the
  // payload's product: a row's sums A_j then move by at most n 2^-60 max|V| while D_j >= 1 (its largest
  // weight is 1), so A_j / D_j moves by 9e-13 max|V| at n = 10^6 (the residuals: |V| <= 1). At K = 1,000
  // (10,000 rows; flat tails, peaked, ImageNet-like) 0.3% to 4% of the (group of 8 rows, centre) pairs
  // keep a weight at h <= 0.03 of crossfit's grid, 19% to 68% at h = 0.1; with exact zeros alone (below
  // exp(-700)) 58% were live at h = 0.01. A centre of weight 0 for every row of its group adds exactly
  // 0 to each of the group's sums (the payload is finite), so a group takes the product over its live
  // centres only, in increasing order as the full product does: the sums are bitwise those of the full
  // product of the zeroed weights. Done when at most half of the (group, centre) pairs are live; returns
  // whether it was. The live centres' payload rows are read where they lie (gathered_dot_add): copied out
  // first, they were a ninth of the canonical estimate at n = 10,000, K = 1,000 (docs/benchmarks.md).
  static constexpr std::size_t kSparseGroup = 8, kGatherCentres = 64;
  static constexpr double kNegligibleWeight = 0x1p-60;

  bool sparse_product(Scratch& s, std::size_t rows, std::size_t col0, std::size_t cols) const {
    const std::size_t groups = (rows + kSparseGroup - 1) / kSparseGroup, width = sums_width();
    std::size_t live_total = 0;
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t q0 = g * kSparseGroup, q1 = std::min(rows, q0 + kSparseGroup);
      std::uint32_t* live = s.live.data() + g * s.block;
      std::size_t m = 0;
      for (std::size_t c = 0; c < cols; ++c) {
        bool any = false;
        for (std::size_t q = q0; q < q1; ++q) any |= s.tile_weights[q * s.block + c] != 0;
        live[m] = static_cast<std::uint32_t>(c);
        m += any;
      }
      live_total += s.live_count[g] = m;
      if (2 * live_total > groups * cols) return false;  // dense: stop counting
    }
    const double* payload = payload_.data() + col0 * stride_;
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t q0 = g * kSparseGroup, group_rows = std::min(rows, q0 + kSparseGroup) - q0;
      const std::uint32_t* live = s.live.data() + g * s.block;
      for (std::size_t k0 = 0; k0 < s.live_count[g]; k0 += kGatherCentres) {
        const std::size_t chunk = std::min(kGatherCentres, s.live_count[g] - k0);
        for (std::size_t q = 0; q < group_rows; ++q)
          for (std::size_t k = 0; k < chunk; ++k)
            s.gathered_weights[q * kGatherCentres + k] = s.tile_weights[(q0 + q) * s.block + live[k0 + k]];
        kern_.gathered_dot_add(s.gathered_weights.data(), kGatherCentres, payload, stride_, live + k0, group_rows,
                               stride_, chunk, s.sums.data() + q0 * width + 2, width);
      }
    }
    return true;
  }

  const TileKernels& kern_;
  std::span<const double> offsets_;
  double inv_h_;
  std::span<const double> payload_;
  std::size_t depth_, stride_;
  Finish finish_;
  std::span<const std::size_t> self_;
  const ScoreTree* tree_;
  std::span<const std::uint32_t> order_;
};

/// Several reducers of one kind in one sweep (the crossfit's candidate bandwidths): each tile's dot
/// products are computed once and handed to every part, which then does exactly what it does in a sweep
/// of its own, so each part's results are bitwise those of its own sweep. A row's record is the parts'
/// records in turn.
template <class Part>
class SharedDots {
 public:
  explicit SharedDots(std::vector<Part> parts) : parts_(std::move(parts)) {}

  double work_per_pair() const {
    double work = 0;
    for (const Part& part : parts_) work += detail::work_per_pair(part);
    return work;
  }

  std::size_t tile_rows() const
    requires requires(const Part& part) { part.tile_rows(); }
  {
    return parts_.front().tile_rows();
  }

  struct Scratch {
    std::vector<typename Part::Scratch> parts;
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    Scratch s;
    for (const Part& part : parts_) s.parts.push_back(part.scratch(rows, block));
    return s;
  }

  void begin(Scratch& s, std::size_t row0, std::size_t rows) const {
    for (std::size_t b = 0; b < parts_.size(); ++b) parts_[b].begin(s.parts[b], row0, rows);
  }

  template <class Dot>
    requires(std::is_same_v<Dot, double> || TakesFloatTiles<Part>)
  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols, const Dot* dots,
            std::size_t ld) const {
    for (std::size_t b = 0; b < parts_.size(); ++b) parts_[b].tile(s.parts[b], row0, rows, col0, cols, dots, ld);
  }

  std::size_t record_width() const {
    std::size_t width = 0;
    for (const Part& part : parts_) width += part.record_width();
    return width;
  }

  void record(const Scratch& s, std::size_t q, double* out) const {
    for (std::size_t b = 0; b < parts_.size(); ++b) {
      parts_[b].record(s.parts[b], q, out);
      out += parts_[b].record_width();
    }
  }

  void finish(std::size_t j, const double* record) const {
    for (const Part& part : parts_) {
      part.finish(j, record);
      record += part.record_width();
    }
  }

 private:
  std::vector<Part> parts_;
};

}  // namespace ecekde::detail
