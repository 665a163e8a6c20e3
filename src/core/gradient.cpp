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
#include "ecekde/gradient.hpp"

#include <cmath>

#include "core/estimate_steps.hpp"
#include "core/gradient.hpp"
#include "core/numeric.hpp"
#include "core/reducers.hpp"
#include "core/messages.hpp"

namespace ecekde::detail {

namespace {

// Rows of the centres' x as the row side's product reads them: n x width, zero-padded to a multiple of 8
// so that the product runs in the dot kernel's vector tiles (at K = 10 the per-row reductions of
// row_dots took about a fifth of the gradient's time).
std::size_t padded_width(std::size_t dim) { return (dim + 7) / 8 * 8; }

// Bytes of weights a worker keeps for its tile of rows (rows x n): the tile has fewer rows where n is
// large, so that memory stays O(n) per worker.
constexpr std::size_t kKeptWeightBytes = std::size_t{32} << 20;

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
      for (std::size_t k = 0; k < dim; ++k) s.logs_t[k * rows + q] = x.log_x[j * dim + k];
      s.logs_t[dim * rows + q] = 1;
    }
    const std::size_t width = padded_width(dim);
    kern_.dot_add(s.w.data(), n, x_rows_.data(), width, rows, width, n, row_acc_.data() + row0 * width, width);
    // centre side: centre[k*n + i] += sum_q (log x_qk, 1)[k] * beta_qi, a (dim+1) x rows x n product
    kern_.dot_add(s.logs_t.data(), rows, s.w.data(), n, dim + 1, n, rows, centre.data(), n);
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

}  // namespace

ProblemGradient problem_gradient(const LabelledPoints& lp, double h, double p, double weight,
                                 const SweepPlan& plan) {
  const KernelPoints& x = lp.points;
  const std::size_t n = x.n, dim = x.dim, L = lp.classes;
  const double scale = weight / static_cast<double>(n), inv_h = 1 / h;
  std::vector<double> offsets(n), terms(n, 0.0), coef(n * L), target_grad(n * dim, 0.0);
  x.centre_offsets(h, offsets);

  // Each row's error term, and dE/dr folded into the pair coefficients.
  auto finish = [&](std::size_t j, const double* sums) {
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
  };
  const std::size_t width = padded_width(dim);
  std::vector<double> x_rows(n * width, 0.0), row_acc(n * width, 0.0), centre_acc((dim + 1) * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < dim; ++k) x_rows[i * width + k] = x.x(i, k);
  sweep_with_centre_sums(x, plan,
                         GradientSums(lp, *plan.kernels, offsets, inv_h, coef, x_rows, finish,
                                      {terms, target_grad, row_acc}, row_acc, centre_acc));

  // The value as estimate() gives it: a one-dimensional problem's by the score tree's sums, whose last bits
  // differ from the exact pairs' that the derivatives use.
  if (plan.expansions && dim == 2) {
    SweepPlan in_double = plan;
    in_double.single_precision = false;
    sweep(x, in_double, ClassSums(lp, *plan.kernels, offsets, inv_h, [&](std::size_t j, double, const double* sums) {
            terms[lp.original[j]] = row_error(lp, j, sums, p);
          }));
  }
  ProblemGradient out;
  out.value = weight * accurate_sum(terms) / static_cast<double>(n);
  out.grad.resize(n * dim);
  for (std::size_t j = 0; j < n; ++j) {
    double sum_alpha = 0;
    for (std::size_t k = 0; k < dim; ++k) sum_alpha += x.x(j, k) * inv_h + 1;
    const double psi_sum = digamma(sum_alpha);
    for (std::size_t k = 0; k < dim; ++k) {
      const double xjk = x.x(j, k);
      const double row_side = xjk >= kLogFloor ? row_acc[j * width + k] * inv_h / xjk : 0.0;
      const double centre_side =
          inv_h * (centre_acc[k * n + j] + (psi_sum - digamma(xjk * inv_h + 1)) * centre_acc[dim * n + j]);
      out.grad[lp.original[j] * dim + k] = target_grad[j * dim + k] + row_side + centre_side;
    }
  }
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

}  // namespace ecekde::detail

namespace ecekde {

GradientResult estimate_with_gradient(ProbsView probs, LabelsView labels, const EstimateOptions& options) {
  check_options(options);
  detail::check_plug_in(options, "estimate_with_gradient");
  const auto in = detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true);
  const detail::PlannedWork planned(in.plan.control, detail::leave_one_out_work(in, 2));  // forward and backward
  GradientResult out;
  out.result = detail::start_result(options, in);
  auto vg = detail::value_and_gradient(in.pred, in.problems, options.type, out.result.bandwidth, options.p, in.plan);
  Result& r = out.result;
  r.ce_pow_p = vg.ce_pow_p;
  r.ce = detail::root_of(r.ce_pow_p, options.p);
  if (options.type == CalibrationType::marginal) r.class_ce_pow_p = vg.class_values;
  out.grad_ce_pow_p = std::move(vg.grad);
  // d CE_p = (1/p) (CE_p^p)^(1/p - 1) d CE_p^p; at CE_p^p = 0 with p > 1 the factor is infinite and the
  // subgradient 0 is used.
  const double factor = options.p == 1 ? 1.0 : r.ce_pow_p > 0 ? std::pow(r.ce_pow_p, 1 / options.p - 1) / options.p : 0.0;
  out.grad_ce.resize(out.grad_ce_pow_p.size());
  for (std::size_t i = 0; i < out.grad_ce.size(); ++i) out.grad_ce[i] = factor * out.grad_ce_pow_p[i];
  return out;
}

}  // namespace ecekde
