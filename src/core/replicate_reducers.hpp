// Reductions that carry many replicates of an ECE^KDE estimate through one sweep: bootstrap resamples
// (per-centre multiplicities) and relabelled copies (per-centre labels). The kernel weights are computed
// once per pair; each replicate adds one multiply-add (bootstrap) or one add (relabelling) per pair.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/problems.hpp"
#include "core/reducers.hpp"
#include "core/sweep.hpp"

namespace ecekde::detail {

/// The relative cost of a pair carrying B replicates or copies, for progress: an exponential, and a
/// multiply-add or an add per replicate (about a tenth of one).
inline double replicate_pair_work(std::size_t replicates) { return 1 + 0.1 * static_cast<double>(replicates); }

/// Whether estimate()'s sweep of lp is the full sweep in double that the replicate reducers below run (not
/// the score tree of a one-dimensional problem, nor float tiles): their sweep then gives the estimate's own
/// class sums too, bitwise (they keep them as ClassSums does), and the estimate needs no sweep of its own.
inline bool replicates_give_estimate(const LabelledPoints& lp, const SweepPlan& plan) {
  return !plan.single_precision && !(plan.expansions && lp.points.dim == 2);
}

/// The bootstrap's replicates per row as the sweep carries them: padded with zero replicates to a multiple
/// of 8, so that the tile x multiplicity product runs in whole vectors.
inline std::size_t padded_replicates(std::size_t replicates) { return (replicates + 7) / 8 * 8; }

/// A row's own class sums (the data's labels) from one tile's weights, as ClassSums accumulates them.
inline void add_own_class_sums(const LabelledPoints& lp, const TileKernels& kern, OnlineMax::Step step,
                               const double* w, std::size_t col0, std::size_t cols, double* own) {
  if (step.factor != 1)
    for (std::size_t c = 0; c < lp.classes; ++c) own[c] *= step.factor;
  add_class_sums(lp, kern, w, col0, cols, own);
}

/// Per row j, class c and replicate b: N^b_jc = sum_{i != j, y_i = c} mult[i*B + b] exp(s_ji - m_j), with
/// m_j the row's largest score over all i != j. Calls finish(j, m_j, self_score_j, N_j, S_j) with N_j laid
/// out [c*B + b], self_score_j = s_jj (the row's own kernel, which copies in a resample would see) and S_j
/// the data's own class sums, as ClassSums gives them. Row r is centre first_row + r and is left out of its
/// own sums, unless leave_one_out is false (the ring's other blocks: self_score_j is then -inf).
template <class Finish>
class ReplicateClassSums {
 public:
  ReplicateClassSums(const LabelledPoints& lp, const TileKernels& kern, std::span<const double> offsets, double inv_h,
                     const double* mult, std::size_t replicates, Finish finish, bool leave_one_out = true,
                     std::size_t first_row = 0)
      : lp_(lp), kern_(kern), offsets_(offsets), inv_h_(inv_h), mult_(mult), B_(replicates), finish_(std::move(finish)),
        leave_one_out_(leave_one_out), first_row_(first_row) {}

  double work_per_pair() const { return replicate_pair_work(B_); }

  /// Rows per tile: as many as keep the tile's sums (rows x L x B) within 1 MB, from 16 to 128, so that
  /// each row of multiplicities loaded serves many rows (K = 10, B = 100: 112 rows; the bootstrap went
  /// from 5.0 to 4.7 times one estimate against 16 rows).
  std::size_t tile_rows() const {
    const std::size_t fit = (std::size_t{1} << 20) / (sizeof(double) * lp_.classes * B_);
    return std::clamp<std::size_t>(fit / 16 * 16, 16, 128);
  }

  struct Scratch {
    std::vector<OnlineMax> max;
    std::vector<double> self, w, sums, own;  // rows;  rows x block;  rows x L x B;  rows x L
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    return {std::vector<OnlineMax>(rows), std::vector<double>(rows), std::vector<double>(rows * block),
            std::vector<double>(rows * lp_.classes * B_), std::vector<double>(rows * lp_.classes)};
  }

  void begin(Scratch& s, std::size_t, std::size_t rows) const {
    std::fill_n(s.max.begin(), rows, OnlineMax{});
    std::fill_n(s.self.begin(), rows, -std::numeric_limits<double>::infinity());
    std::fill_n(s.sums.begin(), rows * lp_.classes * B_, 0.0);
    std::fill_n(s.own.begin(), rows * lp_.classes, 0.0);
  }

  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols,
            const double* dots, std::size_t ld) const {
    const std::size_t L = lp_.classes, col_end = col0 + cols;
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t skip = leave_one_out_ ? diagonal_in_block(first_row_ + row0 + q, col0, cols) : cols;
      if (skip < cols) s.self[q] = offsets_[col0 + skip] + inv_h_ * dots[q * ld + skip];
      double* w = s.w.data() + q * ld;
      const auto step = s.max[q].weights(kern_, dots + q * ld, w, offsets_.data() + col0, inv_h_, cols, skip);
      if (!step.any) {
        std::fill_n(w, cols, 0.0);
        continue;
      }
      if (step.factor != 1) kern_.scale(s.sums.data() + q * L * B_, L * B_, step.factor);
      add_own_class_sums(lp_, kern_, step, w, col0, cols, s.own.data() + q * L);
    }
    for (std::size_t c = lp_.label(col0); c < L && lp_.class_begin[c] < col_end; ++c) {
      const std::size_t lo = std::max(lp_.class_begin[c], col0), hi = std::min(lp_.class_begin[c + 1], col_end);
      if (lo < hi)
        kern_.dot_add(s.w.data() + (lo - col0), ld, mult_ + lo * B_, B_, rows, B_, hi - lo, s.sums.data() + c * B_,
                      L * B_);
    }
  }

  std::size_t record_width() const { return 2 + lp_.classes * (B_ + 1); }  // m_j, self_score_j, N_j, S_j

  void record(const Scratch& s, std::size_t q, double* out) const {
    const std::size_t L = lp_.classes, LB = L * B_;
    out[0] = s.max[q].m;
    out[1] = s.self[q];
    std::copy_n(s.sums.begin() + static_cast<std::ptrdiff_t>(q * LB), LB, out + 2);
    std::copy_n(s.own.begin() + static_cast<std::ptrdiff_t>(q * L), L, out + 2 + LB);
  }

  void finish(std::size_t j, const double* record) const {
    finish_(j, record[0], record[1], record + 2, record + 2 + lp_.classes * B_);
  }

 private:
  const LabelledPoints& lp_;
  const TileKernels& kern_;
  std::span<const double> offsets_;
  double inv_h_;
  const double* mult_;
  std::size_t B_;
  Finish finish_;
  bool leave_one_out_;
  std::size_t first_row_;
};

/// Per row j and relabelled copy b: N^b_jc = sum_{i != j, label_b(i) = c} exp(s_ji - m_j), where
/// labels[i*B + b] is centre i's class in copy b. Calls finish(j, acc, stride, S_j) with
/// N^b_jc = acc[(b*L + c) * stride] and S_j the data's own class sums, as ClassSums gives them. Row r is
/// centre first_row + r and is left out of its own sums, unless leave_one_out is false (rows are other
/// points than the centres). `block` is the sweep's (SweepPlan::block): each block's centres are grouped
/// by their class in each copy once, here, for every tile of rows to sum class by class.
template <class Finish>
class RelabelledClassSums {
 public:
  static constexpr std::size_t R = 16;  // rows per tile, as class_run_sums expects

  RelabelledClassSums(const LabelledPoints& lp, const TileKernels& kern, std::span<const double> offsets,
                      double inv_h, const std::uint16_t* labels, std::size_t copies, std::size_t block, Finish finish,
                      bool leave_one_out = true, std::size_t first_row = 0)
      : lp_(lp), L_(lp.classes), kern_(kern), offsets_(offsets), inv_h_(inv_h), B_(copies),
        block_(std::max<std::size_t>(1, block)), finish_(std::move(finish)), leave_one_out_(leave_one_out),
        first_row_(first_row) {
    // Per block and copy, a counting sort of the block's centres by class: order_ (block-major, then copy)
    // lists them class by class in increasing index, starts_ where each class begins.
    const std::size_t n = offsets.size();
    order_.resize(n * B_);
    starts_.assign((n + block_ - 1) / block_ * B_ * (L_ + 1), 0);
    std::vector<std::uint32_t> next(L_);
    for (std::size_t c0 = 0; c0 < n; c0 += block_) {
      const std::size_t cols = std::min(block_, n - c0);
      for (std::size_t b = 0; b < B_; ++b) {
        std::uint32_t* st = starts_.data() + (c0 / block_ * B_ + b) * (L_ + 1);
        for (std::size_t c = 0; c < cols; ++c) ++st[labels[(c0 + c) * B_ + b] + 1];
        for (std::size_t l = 0; l < L_; ++l) st[l + 1] += st[l];
        std::copy_n(st, L_, next.begin());
        std::uint32_t* ord = order_.data() + c0 * B_ + b * cols;
        for (std::size_t c = 0; c < cols; ++c) ord[next[labels[(c0 + c) * B_ + b]]++] = static_cast<std::uint32_t>(c);
      }
    }
  }

  double work_per_pair() const { return replicate_pair_work(B_); }
  std::size_t tile_rows() const { return R; }

  struct Scratch {
    std::vector<OnlineMax> max;
    std::vector<double> w, wt, acc, own;  // R x block;  block x R;  B x L x R;  R x L
  };

  Scratch scratch(std::size_t, std::size_t block) const {
    return {std::vector<OnlineMax>(R), std::vector<double>(R * block), std::vector<double>(block * R),
            std::vector<double>(B_ * L_ * R), std::vector<double>(R * L_)};
  }

  void begin(Scratch& s, std::size_t, std::size_t) const {
    std::fill(s.max.begin(), s.max.end(), OnlineMax{});
    std::fill(s.acc.begin(), s.acc.end(), 0.0);
    std::fill(s.own.begin(), s.own.end(), 0.0);
  }

  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols,
            const double* dots, std::size_t ld) const {
    std::fill_n(s.wt.begin(), cols * R, 0.0);
    for (std::size_t q = 0; q < rows; ++q) {
      double* w = s.w.data() + q * ld;
      const auto step = s.max[q].weights(kern_, dots + q * ld, w, offsets_.data() + col0, inv_h_, cols,
                                         leave_one_out_ ? diagonal_in_block(first_row_ + row0 + q, col0, cols) : cols);
      if (!step.any) continue;
      if (step.factor != 1)
        for (std::size_t i = q; i < s.acc.size(); i += R) s.acc[i] *= step.factor;
      add_own_class_sums(lp_, kern_, step, w, col0, cols, s.own.data() + q * L_);
      for (std::size_t c = 0; c < cols; ++c) s.wt[c * R + q] = w[c];
    }
    ECEKDE_ASSERT(col0 % block_ == 0 && cols <= block_);
    kern_.class_run_sums(s.wt.data(), order_.data() + col0 * B_, starts_.data() + col0 / block_ * B_ * (L_ + 1), cols,
                         B_, L_, s.acc.data());
  }

  std::size_t record_width() const { return (B_ + 1) * L_; }  // N^b_jc at b*L + c, then S_j

  void record(const Scratch& s, std::size_t q, double* out) const {
    for (std::size_t i = 0; i < B_ * L_; ++i) out[i] = s.acc[i * R + q];
    std::copy_n(s.own.begin() + static_cast<std::ptrdiff_t>(q * L_), L_, out + B_ * L_);
  }

  void finish(std::size_t j, const double* record) const { finish_(j, record, 1, record + B_ * L_); }

  /// Row q's largest score so far, which its record's sums are scaled by (WithScale).
  double scale(const Scratch& s, std::size_t q) const { return s.max[q].m; }

 private:
  const LabelledPoints& lp_;
  std::size_t L_;
  const TileKernels& kern_;
  std::span<const double> offsets_;
  double inv_h_;
  std::size_t B_, block_;
  Finish finish_;
  bool leave_one_out_;
  std::size_t first_row_;
  std::vector<std::uint32_t> order_, starts_;
};

}  // namespace ecekde::detail
