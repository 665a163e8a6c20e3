// Analytic gradient of ECE^KDE: a forward sweep for the per-row statistics, then one backward sweep in
// rounds that accumulates both the row side and the centre side of every pair's derivative.
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

// Accumulates beta_ji x_ik per row (row_acc: n x padded_width) and beta_ji (log x_jk, 1) per centre.
class BackwardSums {
 public:
  BackwardSums(const LabelledPoints& lp, const TileKernels& kern, std::span<const double> offsets, double inv_h,
               std::span<const double> row_max, std::span<const double> coef, std::span<const double> x_rows,
               std::span<double> row_acc, std::span<double> centre_acc)
      : lp_(lp), kern_(kern), offsets_(offsets), inv_h_(inv_h), row_max_(row_max), coef_(coef), x_rows_(x_rows),
        row_acc_(row_acc), centre_acc_(centre_acc) {}

  struct Scratch {
    std::vector<double> beta, logs_t;  // row_tile x block;  (dim + 1) x row_tile
  };

  Scratch scratch(std::size_t rows, std::size_t block) const {
    return {std::vector<double>(rows * block), std::vector<double>((lp_.points.dim + 1) * rows)};
  }

  std::vector<std::span<double>> outputs() const { return {row_acc_, centre_acc_}; }

  void tile(Scratch& s, std::size_t row0, std::size_t rows, std::size_t col0, std::size_t cols,
            const double* dots, std::size_t ld) const {
    const KernelPoints& x = lp_.points;
    const std::size_t dim = x.dim, L = lp_.classes, col_end = col0 + cols, first = lp_.label(col0);
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t j = row0 + q;
      double* b = s.beta.data() + q * ld;
      kern_.affine_exp(dots + q * ld, b, offsets_.data() + col0, inv_h_, row_max_[j], cols);
      if (const std::size_t skip = diagonal_in_block(j, col0, cols); skip < cols) b[skip] = 0;
      for (std::size_t c = first; c < L && lp_.class_begin[c] < col_end; ++c) {
        const std::size_t lo = std::max(lp_.class_begin[c], col0), hi = std::min(lp_.class_begin[c + 1], col_end);
        if (lo < hi) kern_.scale(b + (lo - col0), hi - lo, coef_[j * L + c]);
      }
      for (std::size_t k = 0; k < dim; ++k) s.logs_t[k * rows + q] = x.log_x[j * dim + k];
      s.logs_t[dim * rows + q] = 1;
    }
    const std::size_t width = padded_width(dim);
    kern_.dot_add(s.beta.data(), ld, x_rows_.data() + col0 * width, width, rows, width, cols,
                  row_acc_.data() + row0 * width, width);
    // centre side: centre_acc[k][i] += sum_q (log x_qk, 1)[k] * beta_qi, as a (dim+1) x rows x cols product
    kern_.dot_add(s.logs_t.data(), rows, s.beta.data(), ld, dim + 1, cols, rows, centre_acc_.data() + col0, x.n);
  }

 private:
  const LabelledPoints& lp_;
  const TileKernels& kern_;
  std::span<const double> offsets_;
  double inv_h_;
  std::span<const double> row_max_, coef_, x_rows_;
  std::span<double> row_acc_, centre_acc_;
};

}  // namespace

ProblemGradient problem_gradient(const LabelledPoints& lp, double h, double p, double weight,
                                 const SweepPlan& plan) {
  const KernelPoints& x = lp.points;
  const std::size_t n = x.n, dim = x.dim, L = lp.classes;
  const double scale = weight / static_cast<double>(n), inv_h = 1 / h;
  std::vector<double> offsets(n), terms(n), row_max(n), coef(n * L), target_grad(n * dim, 0.0);
  x.centre_offsets(h, offsets);

  // Forward: per-row statistics, the error terms, and dE/dr folded into the pair coefficients.
  auto finish = [&](std::size_t j, double m, const double* sums) {
    terms[lp.original[j]] = row_error(lp, j, sums, p);
    row_max[j] = m;
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
  SweepPlan in_double = plan;  // the backward sweep recomputes these weights in double from row_max
  in_double.single_precision = false;
  sweep(x, in_double, ClassSums(lp, *plan.kernels, offsets, inv_h, finish));

  // Backward: both sides of every pair in one sweep.
  const std::size_t width = padded_width(dim);
  std::vector<double> x_rows(n * width, 0.0), row_acc(n * width, 0.0), centre_acc((dim + 1) * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < dim; ++k) x_rows[i * width + k] = x.x(i, k);
  sweep_in_rounds(x, plan,
                  BackwardSums(lp, *plan.kernels, offsets, inv_h, row_max, coef, x_rows, row_acc, centre_acc));

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
  const detail::PlannedWork planned(in.plan.control,  // the forward sweep (expandable), the backward one
                                    detail::leave_one_out_work(in, 1, true) + detail::leave_one_out_work(in, 1));
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
