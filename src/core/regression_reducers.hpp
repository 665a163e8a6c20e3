// Reductions over the sweep for the estimators that look at the kernel regression's accuracy rather than
// the density's: class sums at several bandwidths (the loo-regression bandwidth criterion), and class sums
// with the sums of squared weights (the debiased form).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "core/problems.hpp"
#include "core/sweep.hpp"

namespace ecekde::detail {

/// Adds each class's run of the weights w[0, cols) (centres col0 ...) into acc[class], and, when sq is
/// given, the run's sum of squares into sq[class].
inline void add_class_runs(const LabelledPoints& lp, const TileKernels& kern, const double* w, std::size_t col0,
                           std::size_t cols, double* acc, double* sq = nullptr) {
  const std::size_t col_end = col0 + cols;
  for (std::size_t c = lp.label(col0); c < lp.classes && lp.class_begin[c] < col_end; ++c) {
    const std::size_t b = std::max(lp.class_begin[c], col0), e = std::min(lp.class_begin[c + 1], col_end);
    if (b >= e) continue;
    if (sq) kern.sum_and_squares(w + (b - col0), e - b, acc + c, sq + c);
    else acc[c] += kern.sum(w + (b - col0), e - b);
  }
}

/// Per row j and each of H bandwidths h_b: N_jbc = sum_{i != self(j), y_i = c} exp(s_jib - m_jb), with
/// m_jb the row's largest score at h_b. self(j) is the centre that row j is (self[j], or j itself when
/// `self` is empty). Calls finish(j, N_j) once per row with H x classes values (bandwidth-major).
template <class Finish>
class BandwidthClassSums {
 public:
  BandwidthClassSums(const LabelledPoints& lp, const TileKernels& kern,
                     const std::vector<std::vector<double>>& offsets, std::vector<double> inv_h, Finish finish,
                     std::span<const std::size_t> self = {})
      : lp_(lp), kern_(kern), offsets_(offsets), inv_h_(std::move(inv_h)), finish_(std::move(finish)),
        self_(self) {}

  /// Relative cost of a pair, for progress: one exponential per bandwidth.
  double work_per_pair() const { return static_cast<double>(inv_h_.size()); }

  struct Scratch {
    std::vector<OnlineMax> max;
    std::vector<double> sums, w;
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    const std::size_t H = inv_h_.size();
    return {std::vector<OnlineMax>(rows * H), std::vector<double>(rows * H * lp_.classes),
            std::vector<double>(block)};
  }

  void begin(Scratch& s, std::size_t, std::size_t rows) const {
    const std::size_t H = inv_h_.size();
    std::fill_n(s.max.begin(), rows * H, OnlineMax{});
    std::fill_n(s.sums.begin(), rows * H * lp_.classes, 0.0);
  }

  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols,
            const double* dots, std::size_t ld) const {
    const std::size_t H = inv_h_.size(), L = lp_.classes;
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t skip = diagonal_in_block(self_.empty() ? row0 + q : self_[row0 + q], col0, cols);
      for (std::size_t b = 0; b < H; ++b) {
        const auto step = s.max[q * H + b].weights(kern_, dots + q * ld, s.w.data(), offsets_[b].data() + col0,
                                                   inv_h_[b], cols, skip);
        if (!step.any) continue;
        double* acc = s.sums.data() + (q * H + b) * L;
        if (step.factor != 1)
          for (std::size_t c = 0; c < L; ++c) acc[c] *= step.factor;
        add_class_runs(lp_, kern_, s.w.data(), col0, cols, acc);
      }
    }
  }

  std::size_t record_width() const { return inv_h_.size() * lp_.classes; }

  void record(const Scratch& s, std::size_t q, double* out) const {
    const std::size_t width = record_width();
    std::copy_n(s.sums.begin() + static_cast<std::ptrdiff_t>(q * width), width, out);
  }

  void finish(std::size_t j, const double* record) const { finish_(j, record); }

 private:
  const LabelledPoints& lp_;
  const TileKernels& kern_;
  const std::vector<std::vector<double>>& offsets_;
  std::vector<double> inv_h_;
  Finish finish_;
  std::span<const std::size_t> self_;
};

/// Per row j (leave-one-out, one bandwidth) and class c: N_jc = sum_{i != j, y_i = c} w_ji and
/// Q_jc = sum_{i != j, y_i = c} w_ji^2, with w_ji = exp(s_ji - m_j). Calls finish(j, N_j, Q_j) once per row.
template <class Finish>
class ClassSquareSums {
 public:
  ClassSquareSums(const LabelledPoints& lp, const TileKernels& kern, std::span<const double> offsets,
                  double inv_h, Finish finish)
      : lp_(lp), kern_(kern), offsets_(offsets), inv_h_(inv_h), finish_(std::move(finish)) {}

  struct Scratch {
    std::vector<OnlineMax> max;
    std::vector<double> sums, squares;
    RowWeights w;
    BlockOffsets offsets;
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    return {std::vector<OnlineMax>(rows), std::vector<double>(rows * lp_.classes),
            std::vector<double>(rows * lp_.classes), RowWeights(block), BlockOffsets(block)};
  }

  void begin(Scratch& s, std::size_t, std::size_t rows) const {
    std::fill_n(s.max.begin(), rows, OnlineMax{});
    std::fill_n(s.sums.begin(), rows * lp_.classes, 0.0);
    std::fill_n(s.squares.begin(), rows * lp_.classes, 0.0);
  }

  template <class Dot>
  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols, const Dot* dots,
            std::size_t ld) const {
    const std::size_t L = lp_.classes;
    const auto offsets = s.offsets.template of<Dot>(offsets_.data() + col0, cols);
    for (std::size_t q = 0; q < rows; ++q) {
      const auto step = s.max[q].weights(kern_, dots + q * ld, s.w.template data<Dot>(), offsets, inv_h_, cols,
                                         diagonal_in_block(row0 + q, col0, cols));
      if (!step.any) continue;
      const double* w = s.w.template as_double<Dot>(kern_, cols);
      double* acc = s.sums.data() + q * L;
      double* sq = s.squares.data() + q * L;
      if (step.factor != 1)
        for (std::size_t c = 0; c < L; ++c) {
          acc[c] *= step.factor;
          sq[c] *= step.factor * step.factor;
        }
      add_class_runs(lp_, kern_, w, col0, cols, acc, sq);
    }
  }

  std::size_t record_width() const { return 2 * lp_.classes; }  // N_j, then Q_j

  void record(const Scratch& s, std::size_t q, double* out) const {
    const std::size_t L = lp_.classes;
    std::copy_n(s.sums.begin() + static_cast<std::ptrdiff_t>(q * L), L, out);
    std::copy_n(s.squares.begin() + static_cast<std::ptrdiff_t>(q * L), L, out + L);
  }

  void finish(std::size_t j, const double* record) const { finish_(j, record, record + lp_.classes); }

 private:
  const LabelledPoints& lp_;
  const TileKernels& kern_;
  std::span<const double> offsets_;
  double inv_h_;
  Finish finish_;
};

}  // namespace ecekde::detail
