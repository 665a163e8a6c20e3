// Analytic gradient of ECE^KDE: one sweep in which each tile of rows meets every centre (the forward
// pass: the rows' class sums, their error terms and dE/dr, keeping the tile's weights), and then passes
// over the kept weights for both sides of each pair's derivative (the backward pass).
//
// Per problem, with shifted weights w_ji = exp(s_ji - m_j), D_j = sum_i w_ji, r_jc = N_jc / D_j and the
// error E = (weight/n) sum_j sum_c |r_jc - t_jc|^p:
//   g_jc = dE/dr_jc,  rho_j = sum_c g_jc r_jc,  beta_ji = dE/ds_ji = w_ji (g_{j,y_i} - rho_j) / D_j.
// Since s_ji = a_i + (1/h) sum_k x_ik log x_jk and da_i/dx_ik = (psi(sum_k alpha_ik) - psi(alpha_ik)) / h:
//   dE/dx_jk = -g_jk [target]                                   (canonical; 1-D: -g_j1 on x_j0)
//            + sum_i beta_ji x_ik / (h x_jk)                     [row side; 0 where x_jk is clamped]
//            + (1/h) [sum_i beta_ij log x_ik + (psi(sum alpha_j) - psi(alpha_jk)) sum_i beta_ij]  [centre]
// With own rows (the canonical type on the ring), own_rows_gradient takes two passes instead: the class
// sums first, then the derivatives, with each centre block carrying its centre side round and home.
#include "ecekde/gradient.hpp"

#include <cmath>
#include <functional>
#include <limits>

#include "core/estimate_steps.hpp"
#include "core/gradient.hpp"
#include "core/numeric.hpp"
#include "core/reducers.hpp"
#include "core/messages.hpp"
#include "core/ring.hpp"
#include "core/ring_estimate.hpp"

namespace ecekde::detail {

namespace {

// Rows of the centres' x as the row side's product reads them: n x width, zero-padded to a multiple of 8
// so that the product runs in the dot kernel's vector tiles (at K = 10 the per-row reductions of
// row_dots took about a fifth of the gradient's time).
std::size_t padded_width(std::size_t dim) { return (dim + 7) / 8 * 8; }

// Bytes of weights a worker keeps for its tile of rows (rows x n): the tile has fewer rows where n is
// large, so that memory stays O(n) per worker.
constexpr std::size_t kKeptWeightBytes = std::size_t{32} << 20;

// A tile's pair products once its weights are the pair derivatives beta (rows x m, leading dimension ld):
// the row side, row_acc[q*width + k] += sum_i beta_qi x_ik (x_rows: the m centres' x, m x width), and the
// centre side, centre[k*m + i] += sum_q (log x_qk, 1)[k] beta_qi, a (dim+1) x rows x m product (logs: the
// tile's rows' log x, rows x dim; logs_t: scratch of (dim+1) x rows).
void add_pair_products(const TileKernels& kern, const double* beta, std::size_t ld, std::size_t rows, std::size_t m,
                       std::span<const double> x_rows, const double* logs, std::size_t dim, double* logs_t,
                       double* row_acc, double* centre) {
  for (std::size_t q = 0; q < rows; ++q) {
    for (std::size_t k = 0; k < dim; ++k) logs_t[k * rows + q] = logs[q * dim + k];
    logs_t[dim * rows + q] = 1;
  }
  const std::size_t width = padded_width(dim);
  kern.dot_add(beta, ld, x_rows.data(), width, rows, width, m, row_acc, width);
  kern.dot_add(logs_t, rows, beta, ld, dim + 1, m, rows, centre, m);
}

// The centres' x as the row side's product reads them (m centres, x transposed: dim x m).
std::vector<double> x_rows_of(const double* x_t, std::size_t m, std::size_t dim) {
  const std::size_t width = padded_width(dim);
  std::vector<double> rows(m * width, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < dim; ++k) rows[i * width + k] = x_t[k * m + i];
  return rows;
}

// Each row's error term from its class sums, and dE/dr folded into the pair coefficients
// coef[j*L + c] = (g_jc - rho_j) / D_j, with the derivative through the row's own target (target_grad).
// scale = weight / n, n the rows of the whole problem.
struct RowCoefficients {
  RowCoefficients(const LabelledPoints& lp, double p, double scale)
      : lp(lp), p(p), scale(scale), terms(lp.points.n, 0.0), coef(lp.points.n * lp.classes),
        target_grad(lp.points.n * lp.points.dim, 0.0) {}

  void operator()(std::size_t j, const double* sums) {
    const KernelPoints& x = lp.points;
    const std::size_t L = lp.classes, dim = x.dim;
    terms[lp.original[j]] = row_error(lp, j, sums, p);
    double den = 0;
    for (std::size_t c = 0; c < L; ++c) den += sums[c];
    double g[2], rho = 0;
    double* gj = lp.one_dimensional ? g : target_grad.data() + j * dim;  // canonical: g_jc = -target grad
    if (lp.one_dimensional) {
      g[0] = 0;
      g[1] = scale * pow_abs_derivative(sums[1] / den - x.x(j, 0), p);
      target_grad[j * dim] = -g[1];
    } else {
      for (std::size_t c = 0; c < L; ++c) gj[c] = scale * pow_abs_derivative(sums[c] / den - x.x(j, c), p);
    }
    for (std::size_t c = 0; c < L; ++c) rho += gj[c] * sums[c] / den;
    for (std::size_t c = 0; c < L; ++c) coef[j * L + c] = (gj[c] - rho) / den;
    if (!lp.one_dimensional)
      for (std::size_t c = 0; c < L; ++c) gj[c] = -gj[c];
  }

  const LabelledPoints& lp;
  double p, scale;
  std::vector<double> terms, coef, target_grad;  // terms in input order, the others in the problem's
};

// Row j's gradient (dim values into out) from its target derivative, its row side (row_acc: n x
// padded_width) and its centre side (centre: (dim+1) x n, centre j's sums of beta_ij (log x_ik, 1)).
void row_gradient(const KernelPoints& x, std::size_t j, double inv_h, std::span<const double> target_grad,
                  std::span<const double> row_acc, std::span<const double> centre, double* out) {
  const std::size_t n = x.n, dim = x.dim, width = padded_width(dim);
  double sum_alpha = 0;
  for (std::size_t k = 0; k < dim; ++k) sum_alpha += x.x(j, k) * inv_h + 1;
  const double psi_sum = digamma(sum_alpha);
  for (std::size_t k = 0; k < dim; ++k) {
    const double xjk = x.x(j, k);
    const double row_side = xjk >= kLogFloor ? row_acc[j * width + k] * inv_h / xjk : 0.0;
    const double centre_side = inv_h * (centre[k * n + j] + (psi_sum - digamma(xjk * inv_h + 1)) * centre[dim * n + j]);
    out[k] = target_grad[j * dim + k] + row_side + centre_side;
  }
}

// The forward pass computes each row's class sums exactly as ClassSums does (so the value is estimate()'s
// to the bit) and keeps the tile's weights, each block's relative to the row's running maximum after
// that block. end() hands each row's sums to `finish`, which sets the row's coefficients
// coef[j*L + c] = (g_jc - rho_j) / D_j, then turns the kept weights into beta_ji and adds
// beta_ji x_ik per row (row_acc: n x padded_width) and beta_ji (log x_jk, 1) per centre.
template <class Finish>
class GradientSums {
 public:
  GradientSums(const LabelledPoints& lp, const TileKernels& kern, std::span<const double> offsets, double inv_h,
               std::span<const double> coef, std::span<const double> x_rows, Finish finish,
               std::vector<std::span<double>> row_outputs, std::span<double> row_acc, std::span<double> centre_acc)
      : lp_(lp), kern_(kern), offsets_(offsets), inv_h_(inv_h), coef_(coef), x_rows_(x_rows),
        finish_(std::move(finish)), row_outputs_(std::move(row_outputs)), row_acc_(row_acc), centre_acc_(centre_acc) {}

  double work_per_pair() const { return 2; }  // the forward pass and the backward one

  std::size_t tile_rows() const {
    const std::size_t fit = kKeptWeightBytes / (sizeof(double) * std::max<std::size_t>(lp_.points.n, 1));
    return std::clamp<std::size_t>(fit, 1, lp_.points.dim >= kWideDim ? kWideRowTile : kRowTile);
  }

  struct Scratch {
    std::size_t block;
    std::vector<OnlineMax> max;
    std::vector<double> sums, w, block_max, logs_t;  // rows x L;  rows x n;  rows x blocks;  (dim + 1) x rows
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    const std::size_t n = lp_.points.n, blocks = (n + block - 1) / block;
    return {block, std::vector<OnlineMax>(rows), std::vector<double>(rows * lp_.classes),
            std::vector<double>(rows * n), std::vector<double>(rows * blocks),
            std::vector<double>((lp_.points.dim + 1) * rows)};
  }

  void begin(Scratch& s, std::size_t, std::size_t rows) const {
    std::fill_n(s.max.begin(), rows, OnlineMax{});
    std::fill_n(s.sums.begin(), rows * lp_.classes, 0.0);
  }

  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols, const double* dots,
            std::size_t ld) const {
    const std::size_t n = lp_.points.n, L = lp_.classes, blocks = (n + s.block - 1) / s.block;
    for (std::size_t q = 0; q < rows; ++q) {
      double* w = s.w.data() + q * n + col0;
      const auto step = s.max[q].weights(kern_, dots + q * ld, w, offsets_.data() + col0, inv_h_, cols,
                                         diagonal_in_block(row0 + q, col0, cols));
      s.block_max[q * blocks + col0 / s.block] = s.max[q].m;
      if (!step.any) {
        std::fill_n(w, cols, 0.0);
        continue;
      }
      double* acc = s.sums.data() + q * L;
      if (step.factor != 1)
        for (std::size_t c = 0; c < L; ++c) acc[c] *= step.factor;
      add_class_sums(lp_, kern_, w, col0, cols, acc);
    }
  }

  void end(Scratch& s, std::size_t row0, std::size_t rows, std::span<double> centre) const {
    const KernelPoints& x = lp_.points;
    const std::size_t n = x.n, dim = x.dim, L = lp_.classes, blocks = (n + s.block - 1) / s.block;
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t j = row0 + q;
      const double m = s.max[q].m;
      finish_(j, s.sums.data() + q * L);
      // beta_ji = w_ji exp(m_block - m_j) coef_{j, y_i}: a block's weights went with the maximum after it
      for (std::size_t b = 0; b < blocks; ++b) {
        const double block_max = s.block_max[q * blocks + b];
        if (block_max == -std::numeric_limits<double>::infinity()) continue;  // its weights are all 0
        const double factor = std::exp(block_max - m);
        const std::size_t col0 = b * s.block, col_end = std::min(n, col0 + s.block);
        for (std::size_t c = lp_.label(col0); c < L && lp_.class_begin[c] < col_end; ++c) {
          const std::size_t lo = std::max(lp_.class_begin[c], col0), hi = std::min(lp_.class_begin[c + 1], col_end);
          if (lo < hi) kern_.scale(s.w.data() + q * n + lo, hi - lo, factor * coef_[j * L + c]);
        }
      }
    }
    add_pair_products(kern_, s.w.data(), n, rows, n, x_rows_, x.log_x.data() + row0 * dim, dim, s.logs_t.data(),
                      row_acc_.data() + row0 * padded_width(dim), centre.data());
  }

  std::span<double> centre_sums() const { return centre_acc_; }
  std::vector<std::span<double>> row_outputs() const { return row_outputs_; }

 private:
  const LabelledPoints& lp_;
  const TileKernels& kern_;
  std::span<const double> offsets_;
  double inv_h_;
  std::span<const double> coef_, x_rows_;
  Finish finish_;
  std::vector<std::span<double>> row_outputs_;
  std::span<double> row_acc_, centre_acc_;
};

// The ring's second pass (own_rows_gradient): this rank's rows against one travelling block of centres,
// with each row's final maximum m_j and coefficients known from the first pass. Each tile's
// beta_ji = exp(s_ji - m_j) coef_{j, y_i} over the block's centres is kept for the tile's rows and then
// multiplied out as GradientSums does: the row side into row_acc, the centre side into the block's sums.
class RingPairDerivatives {
 public:
  RingPairDerivatives(const CentreBlock& block, const TileKernels& kern, double inv_h, const RowCoefficients& rows,
                      std::span<const double> row_max, std::span<const double> x_rows, bool own,
                      std::span<double> row_acc, std::span<double> centre_acc)
      : block_(block), kern_(kern), inv_h_(inv_h), rows_(rows), row_max_(row_max), x_rows_(x_rows), own_(own),
        row_acc_(row_acc), centre_acc_(centre_acc) {}

  double work_per_pair() const { return 1; }

  std::size_t tile_rows() const {
    const std::size_t fit = kKeptWeightBytes / (sizeof(double) * std::max<std::size_t>(block_.count(), 1));
    return std::clamp<std::size_t>(fit, 1, rows_.lp.points.dim >= kWideDim ? kWideRowTile : kRowTile);
  }

  struct Scratch {
    std::vector<double> beta, logs_t;  // rows x m;  (dim + 1) x rows
  };

  Scratch scratch(std::size_t rows, std::size_t) const {
    return {std::vector<double>(rows * block_.count()), std::vector<double>((rows_.lp.points.dim + 1) * rows)};
  }

  void begin(Scratch&, std::size_t, std::size_t) const {}

  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols, const double* dots,
            std::size_t ld) const {
    const LabelledPoints& runs = block_.runs();
    const std::size_t m = block_.count(), L = runs.classes, col_end = col0 + cols;
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t j = row0 + q;
      double* beta = s.beta.data() + q * m + col0;
      kern_.affine_exp(dots + q * ld, beta, block_.offsets()[0].data() + col0, inv_h_, row_max_[j], cols);
      const std::size_t skip = own_ ? diagonal_in_block(j, col0, cols) : cols;
      if (skip < cols) beta[skip] = 0;
      for (std::size_t c = runs.label(col0); c < L && runs.class_begin[c] < col_end; ++c) {
        const std::size_t lo = std::max(runs.class_begin[c], col0), hi = std::min(runs.class_begin[c + 1], col_end);
        if (lo < hi) kern_.scale(beta + (lo - col0), hi - lo, rows_.coef[j * L + c]);
      }
    }
  }

  void end(Scratch& s, std::size_t row0, std::size_t rows, std::span<double> centre) const {
    const KernelPoints& x = rows_.lp.points;
    const std::size_t m = block_.count();
    add_pair_products(kern_, s.beta.data(), m, rows, m, x_rows_, x.log_x.data() + row0 * x.dim, x.dim,
                      s.logs_t.data(), row_acc_.data() + row0 * padded_width(x.dim), centre.data());
  }

  std::span<double> centre_sums() const { return centre_acc_; }
  std::vector<std::span<double>> row_outputs() const { return {}; }  // row_acc: each row from one task

 private:
  const CentreBlock& block_;
  const TileKernels& kern_;
  double inv_h_;
  const RowCoefficients& rows_;
  std::span<const double> row_max_, x_rows_;
  bool own_;
  std::span<double> row_acc_, centre_acc_;
};

}  // namespace

ProblemGradient problem_gradient(const LabelledPoints& lp, double h, double p, double weight,
                                 const SweepPlan& plan) {
  const KernelPoints& x = lp.points;
  const std::size_t n = x.n, dim = x.dim;
  const double inv_h = 1 / h;
  std::vector<double> offsets(n);
  x.centre_offsets(h, offsets, plan.threads);
  RowCoefficients rows(lp, p, weight / static_cast<double>(n));
  const std::vector<double> x_rows = x_rows_of(x.x_t.data(), n, dim);
  std::vector<double> row_acc(n * padded_width(dim), 0.0), centre_acc((dim + 1) * n, 0.0);
  sweep_with_centre_sums(x, plan,
                         GradientSums(lp, *plan.kernels, offsets, inv_h, rows.coef, x_rows, std::ref(rows),
                                      {rows.terms, rows.target_grad, row_acc}, row_acc, centre_acc));

  // The value as estimate() gives it: a one-dimensional problem's by the score tree's sums, whose last bits
  // differ from the exact pairs' that the derivatives use.
  if (plan.expansions && dim == 2) {
    SweepPlan in_double = plan;
    in_double.single_precision = false;
    sweep(x, in_double, ClassSums(lp, *plan.kernels, offsets, inv_h, [&](std::size_t j, double, const double* sums) {
            rows.terms[lp.original[j]] = row_error(lp, j, sums, p);
          }));
  }
  ProblemGradient out;
  out.value = weight * accurate_sum(rows.terms) / static_cast<double>(n);
  out.grad.resize(n * dim);
  for (std::size_t j = 0; j < n; ++j)
    row_gradient(x, j, inv_h, rows.target_grad, row_acc, centre_acc, out.grad.data() + lp.original[j] * dim);
  return out;
}

ValueGradient value_and_gradient(const CheckedPredictions& pred, const std::vector<LabelledPoints>& problems,
                                 CalibrationType type, double h, double p, const SweepPlan& plan) {
  const std::size_t n = pred.n, k = pred.k;
  const double weight = problem_weight(type);
  ValueGradient out;
  out.grad.assign(n * k, 0.0);
  std::vector<double> other_total(n, 0.0);  // marginal: sum over classes of d/d(rest)
  for (std::size_t c = 0; c < problems.size(); ++c) {
    const ProblemGradient pg = problem_gradient(problems[c], h, p, weight, plan);
    out.ce_pow_p += pg.value;
    out.class_values.push_back(pg.value);
    const auto& G = pg.grad;  // n x dim, input order
    for (std::size_t j = 0; j < n; ++j) {
      double* row = out.grad.data() + j * k;
      switch (type) {
        case CalibrationType::canonical:
          std::copy_n(G.begin() + static_cast<std::ptrdiff_t>(j * k), k, row);
          break;
        case CalibrationType::binary:  // x = (P(y=1), rest): rest is 1 - p, or column 0
          if (k == 1) {
            row[0] = G[2 * j] - G[2 * j + 1];
          } else {
            row[1] = G[2 * j];
            row[0] = G[2 * j + 1];
          }
          break;
        case CalibrationType::top_label: {  // x = (f_top, sum of the other columns)
          const std::size_t top = top_index(pred, j);
          for (std::size_t col = 0; col < k; ++col) row[col] = col == top ? G[2 * j] : G[2 * j + 1];
          break;
        }
        case CalibrationType::marginal:  // x = (f_c, sum of the other columns)
          row[c] += G[2 * j] - G[2 * j + 1];
          other_total[j] += G[2 * j + 1];
          break;
      }
    }
  }
  if (type == CalibrationType::marginal)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t col = 0; col < k; ++col) out.grad[j * k + col] += other_total[j];
  return out;
}

GradientResult with_gradient(Result r, std::vector<double> grad_ce_pow_p) {
  GradientResult out;
  out.result = std::move(r);
  out.grad_ce_pow_p = std::move(grad_ce_pow_p);
  // d CE_p = (1/p) (CE_p^p)^(1/p - 1) d CE_p^p; at CE_p^p = 0 with p > 1 the factor is infinite and the
  // subgradient 0 is used.
  const double p = out.result.p, ce_pow_p = out.result.ce_pow_p;
  const double factor = p == 1 ? 1.0 : ce_pow_p > 0 ? std::pow(ce_pow_p, 1 / p - 1) / p : 0.0;
  out.grad_ce.resize(out.grad_ce_pow_p.size());
  for (std::size_t i = 0; i < out.grad_ce.size(); ++i) out.grad_ce[i] = factor * out.grad_ce_pow_p[i];
  return out;
}

// Two passes of the ring. The first forms each row's class sums over every block (max-shifted, as the
// ring's estimate), and from them its error term and pair coefficients. In the second, each block carries
// its centres' sums of the pair derivatives ((dim + 1) per centre) around the ring: every rank adds its
// rows' share, and one more pass brings the block home, where the centre side of its rows' gradient is
// then complete.
GradientResult own_rows_gradient(ProbsView probs, LabelsView labels, const EstimateOptions& given) {
  EstimateOptions options = given;
  options.estimator = Estimator::paper;  // the gradient is the paper's estimator's, whatever the estimator
  if (options.type != CalibrationType::canonical)
    fail_with("own_rows (each rank passing only its own rows): the gradient supports the canonical type only, got ",
              to_string(options.type));
  RingInput ring = ring_input(probs, labels, options);
  const RingLayout& at = ring.at;
  Prepared& in = ring.in;
  in.problems = make_problems(in.pred, options.type, in.plan.threads);
  std::vector<double>().swap(in.pred.f);  // the sweeps read the problem's points only
  const LabelledPoints& lp = in.problems.front();
  const KernelPoints& x = lp.points;
  SweepPlan plan = in.plan;
  plan.single_precision = false;  // the gradient is computed in double whatever the precision, as alone
  Result r = ring_paper_result(ring, options);
  const double h = r.bandwidth, inv_h = 1 / h, weight = problem_weight(options.type);
  const std::size_t L = lp.classes, dim = x.dim, own = x.n;

  std::vector<std::vector<double>> offsets(1, std::vector<double>(own));
  x.centre_offsets(h, offsets[0], plan.threads);
  std::vector<double> packed = CentreBlock::pack(lp, offsets, at.largest);
  const CentreBlock::Shape shape{L, dim, 1, 0};
  std::vector<double> row_max(own, -std::numeric_limits<double>::infinity()), sums(own * L, 0.0);
  around_the_ring(at, packed, shape, [&](const CentreBlock& block, bool own_block) {
    auto merge = [&](std::size_t j, double m, const double* v) { add_shifted(row_max[j], sums.data() + j * L, m, v, L); };
    sweep_block(x, block, plan, ClassSums(block.runs(), *plan.kernels, block.offsets()[0], inv_h, merge, own_block));
  });
  RowCoefficients rows(lp, options.p, weight / static_cast<double>(at.n));
  for (std::size_t j = 0; j < own; ++j) rows(j, sums.data() + j * L);
  r.ce_pow_p = weight * total_over_ranks(at.comm, rows.terms) / static_cast<double>(at.n);
  r.ce = root_of(r.ce_pow_p, options.p);

  // The block's centre sums follow its packed centres: (dim + 1) x count.
  const std::size_t centre_width = (dim + 1) * at.largest, centre_at = packed.size();
  packed.resize(packed.size() + centre_width, 0.0);
  std::vector<double> row_acc(own * padded_width(dim), 0.0);
  const std::vector<double> home = pass_around_and_back(at.comm, std::move(packed), [&](std::span<double> buffer, bool own_block) {
    const CentreBlock block(buffer, shape);
    if (own == 0 || block.count() == 0) return;
    const std::vector<double> x_rows = x_rows_of(block.x_t(), block.count(), dim);
    SweepPlan alone = plan;
    alone.communicator = nullptr;
    sweep_points_with_centre_sums(x.log_x.data(), block.x_t(), own, block.count(), dim, alone,
                                  RingPairDerivatives(block, *plan.kernels, inv_h, rows, row_max, x_rows, own_block,
                                                      row_acc, buffer.subspan(centre_at, (dim + 1) * block.count())));
  });
  std::vector<double> grad(own * dim);
  const std::span<const double> centre_acc(home.data() + centre_at, (dim + 1) * own);
  for (std::size_t j = 0; j < own; ++j)
    row_gradient(x, j, inv_h, rows.target_grad, row_acc, centre_acc, grad.data() + lp.original[j] * dim);
  return with_gradient(std::move(r), std::move(grad));
}

}  // namespace ecekde::detail

namespace ecekde {

GradientResult estimate_with_gradient(ProbsView probs, LabelsView labels, const EstimateOptions& options) {
  check_options(options);
  detail::check_paper_entry(options, "estimate_with_gradient");
  if (options.execution.own_rows) return detail::own_rows_gradient(probs, labels, options);
  const auto in = detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true);
  const detail::PlannedWork planned(in.plan.control, detail::leave_one_out_work(in, 2));  // forward and backward
  Result r = detail::start_result(options, in);
  auto vg = detail::value_and_gradient(in.pred, in.problems, options.type, r.bandwidth, options.p, in.plan);
  r.ce_pow_p = vg.ce_pow_p;
  r.ce = detail::root_of(r.ce_pow_p, options.p);
  if (options.type == CalibrationType::marginal) r.class_ce_pow_p = vg.class_values;
  return detail::with_gradient(std::move(r), std::move(vg.grad));
}

}  // namespace ecekde
