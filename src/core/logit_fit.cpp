#include "core/logit_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "core/kernels.hpp"
#include "core/messages.hpp"
#include "core/parallel.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

namespace {

// The floor of log P_j(y): the log of the smallest normal double.
const double kLogSmallest = std::log(std::numeric_limits<double>::min());

// The Newton decrement below which the full step is taken without the line search.
constexpr double kQuadraticDecrement = 1e-12;

// Row j's top class under d.top, or L where the design has no top biases.
std::size_t top_class(const LogitDesign& d, std::size_t j) { return d.top ? (*d.top)[j] : d.L; }

// Row j as the fits read it: its offsets (L values), then its features (L x D), then its matrix inputs
// (M): a binary design's as row() writes them (class by class), the others' transposed, feature k of
// class c at x[k L + c], so that the per-row sums over the classes run in vectors (at K = 1,000 they
// were the pilot's time, in scalar code). A non-binary design's last feature is read from `last`: the
// row's own, or the design's adjustment of it, written apart so that a row of the table is read in
// place (copying each 56 KB row to rewrite one feature took 12% of a canonical estimate's samples at
// K = 1,000).
struct RowView {
  const double* offset;
  const double* x;
  const double* last;

  const double* feature(std::size_t k, const LogitDesign& d) const { return k + 1 == d.D ? last : x + k * d.L; }
  // Whether the last feature follows the others (then one product takes them all).
  bool together(const LogitDesign& d) const { return d.D > 0 && last == x + (d.D - 1) * d.L; }
};

// Rows of at most this many values are copied to take their adjustment in place, so that one product
// takes all their features: at K = 10, rows read in two parts made a canonical estimate 5-8% slower.
constexpr std::size_t kCopiedRow = 2048;

// Row j's probabilities (softmax of its logits) under theta, its top class `t` (top_class()), from its
// offsets and features as design_row() lays them out; returns log P_j(y). Each logit is its offset, then
// the features' terms in increasing k, then the other parameters'. A binary design's row (two classes)
// in plain loops; the others' in the kernels: the features' terms as one product (the features
// transposed), the exponentials and their sum in vectors.
double row_probabilities(const LogitDesign& d, const TileKernels& kern, std::span<const double> theta,
                         const RowView& r, std::size_t t, double* prob, int y) {
  double top = -std::numeric_limits<double>::infinity();
  const double *x = r.x, *u = x + d.L * d.D, *w = theta.data() + d.D + d.biases(), *v = w + d.L * d.M;
  std::copy_n(r.offset, d.L, prob);
  if (d.binary()) {
    for (std::size_t c = 0; c < d.L; ++c)
      for (std::size_t k = 0; k < d.D; ++k) prob[c] += x[c * d.D + k] * theta[k];
  } else if (r.together(d)) {
    kern.dot_add(theta.data(), d.D, x, d.L, 1, d.L, d.D, prob, d.L);
  } else if (d.D > 0) {  // the features before the last, then the last: the same sums as in one product
    kern.dot_add(theta.data(), d.D, x, d.L, 1, d.L, d.D - 1, prob, d.L);
    kern.dot_add(theta.data() + d.D - 1, 1, r.last, d.L, 1, d.L, 1, prob, d.L);
  }
  for (std::size_t c = 0; c < d.L; ++c) {
    double z = prob[c];
    if (d.class_bias) z += theta[d.D + c];
    for (std::size_t m = 0; m < d.M; ++m) z += w[c * d.M + m] * u[m];
    if (c == t) z += v[c];
    prob[c] = z;
    top = std::max(top, z);
  }
  double sum = 0;
  if (d.binary()) {
    for (std::size_t c = 0; c < d.L; ++c) sum += prob[c] = std::exp(prob[c] - top);
  } else {
    kern.exp_shifted(prob, d.L, top);
    sum = kern.sum(prob, d.L);
  }
  for (std::size_t c = 0; c < d.L; ++c) prob[c] /= sum;
  return y < 0 ? 0 : std::max(std::log(prob[static_cast<std::size_t>(y)]), kLogSmallest);
}

// Writes row j into `out` (row_size() values) as the fits read it (design_row()), with `written`
// (row_size() values) for row()'s own layout where the two differ.
void read_row(const LogitDesign& d, std::size_t j, double* out, double* written) {
  if (d.binary()) {
    d.row(j, out, out + d.L);
    return;
  }
  const std::size_t L = d.L, D = d.D;
  d.row(j, written, written + L);
  std::copy_n(written, L, out);
  for (std::size_t c = 0; c < L; ++c)
    for (std::size_t k = 0; k < D; ++k) out[L + k * L + c] = written[L + c * D + k];
  std::copy_n(written + L + L * D, d.M, out + L + L * D);
}

// The scratch a design's rows need when design_row() forms them: room for row() to write a row of the
// other designs before it is transposed, and for an adjusted last feature.
std::size_t row_scratch_size(const LogitDesign& d) { return d.binary() ? d.row_size() : 2 * d.row_size() + d.L; }

// Row j from the design's table, or formed in `scratch` (row_scratch_size() values).
RowView design_row(const LogitDesign& d, std::size_t j, std::vector<double>& scratch) {
  ECEKDE_ASSERT(!d.adjust || (d.D > 0 && !d.binary()));
  const std::size_t L = d.L, size = d.row_size();
  const double* row = d.table ? d.table->data() + j * size : scratch.data();
  if (!d.table) read_row(d, j, scratch.data(), scratch.data() + size);
  const bool in_scratch = !d.table || size <= kCopiedRow;
  if (d.adjust && !in_scratch) {
    double* last = scratch.data() + 2 * size;
    d.adjust(j, last);
    return {row, row + L, last};
  }
  if (d.adjust && d.table) row = std::copy_n(row, size, scratch.data()) - size;
  if (d.adjust) d.adjust(j, scratch.data() + L + (d.D - 1) * L);
  return {row, row + L, d.D > 0 ? row + L + (d.D - 1) * L : nullptr};
}

// Row j of a binary design as its differences: z_1 - z_0 at theta = 0, then x_1 - x_0 (1 + D values), from
// the design's table of differences or written into `scratch` from the row.
const double* difference_row(const LogitDesign& d, std::size_t j, std::vector<double>& row_scratch,
                             std::vector<double>& scratch) {
  if (d.differences) return d.differences->data() + j * (1 + d.D);
  const double* row = design_row(d, j, row_scratch).offset;
  scratch[0] = row[1] - row[0];
  for (std::size_t k = 0; k < d.D; ++k) scratch[1 + k] = row[2 + d.D + k] - row[2 + k];
  return scratch.data();
}

// A chunk's row: its z_1 - z_0, then dx padded with zeros to whole vectors of 8 (the product kernel's
// columns: narrower, it sums each column as one scalar chain). pack_binary_rows() lays out a fit's rows so,
// one after another, once for all its passes (at K = 1,000 marginal's pilots spent a tenth of the estimate
// gathering them chunk by chunk in every pass).
std::size_t binary_row_stride(const LogitDesign& d) { return 1 + (d.D + 7) / 8 * 8; }

std::vector<double> pack_binary_rows(const LogitDesign& d, std::span<const std::size_t> rows) {
  const std::size_t width = 1 + d.D, stride = binary_row_stride(d);
  std::vector<double> packed(rows.size() * stride, 0.0), row_scratch(row_scratch_size(d)), scratch(width);
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy_n(difference_row(d, rows[i], row_scratch, scratch), width, packed.data() + i * stride);
  return packed;
}

// Two classes without class biases: P_1 = sigmoid(z_1 - z_0), so each row needs the feature differences
// dx = x_1 - x_0 only (gradient (P_1 - [y = 1]) dx, Hessian P_0 P_1 dx dx^T). Returns the rows' sum of
// -log P(y); with grad given, adds the gradient and Hessian sums (lower triangle) into grad and hess. The
// rows go in chunks: their margins first, then one call of the vector kernels' softplus_sigmoid (marginal's
// pilots at K = 1,000 spent most of their time in scalar exp and log1p), then the gradient and Hessian as
// one matrix product with the sweep's kernels: the rows' slopes and curvature-weighted differences
// (transposed) times the differences. Summed row by row in scalar code, those were 29% of a marginal
// estimate at K = 1,000. `packed`: the rows' pack_binary_rows().
double binary_sums(const LogitDesign& d, const TileKernels& kern, std::span<const int> labels,
                   std::span<const std::size_t> rows, std::span<const double> theta, double* grad, double* hess,
                   std::span<const double> packed) {
  constexpr std::size_t kChunk = 256;
  const std::size_t D = d.D, width = 1 + D, padded = (D + 7) / 8 * 8, stride = binary_row_stride(d);
  // weighted[a * kChunk + i]: row i's slope (a = 0), then its curvature times dx_(a-1); sums[a * padded + b]:
  // the gradient's (a = 0) and the Hessian's (a = b' + 1) sums over the chunks so far.
  std::vector<double> weighted(grad ? width * kChunk : 0), sums(grad ? width * padded : 0, 0.0);
  std::array<double, kChunk> margin, p_other, curvature;  // s = -log P(y) as softplus(s); P(not y) = sigmoid(s)
  double nll = 0;
  for (std::size_t begin = 0; begin < rows.size(); begin += kChunk) {
    const std::size_t m = std::min(kChunk, rows.size() - begin);
    const double* chunk = packed.data() + begin * stride;
    // The margins kRowGroup rows at a time, their chains of multiply-adds side by side (each row's terms
    // still in order): a row at a time, each add waited on the one before.
    constexpr std::size_t kRowGroup = 4;
    std::size_t i = 0;
    for (; i + kRowGroup <= m; i += kRowGroup) {
      const double* row = chunk + i * stride;
      std::array<double, kRowGroup> z;
      for (std::size_t g = 0; g < kRowGroup; ++g) z[g] = row[g * stride];
      for (std::size_t k = 0; k < D; ++k)
        for (std::size_t g = 0; g < kRowGroup; ++g) z[g] += row[g * stride + 1 + k] * theta[k];
      std::copy(z.begin(), z.end(), margin.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (; i < m; ++i) {
      const double* row = chunk + i * stride;
      double z = row[0];
      for (std::size_t k = 0; k < D; ++k) z += row[1 + k] * theta[k];
      margin[i] = z;
    }
    for (std::size_t r = 0; r < m; ++r)
      if (labels[rows[begin + r]] == 1) margin[r] = -margin[r];
    nll += kern.softplus_sigmoid(margin.data(), p_other.data(), m, -kLogSmallest);
    if (!grad) continue;
    for (std::size_t r = 0; r < m; ++r) {
      const double p = p_other[r];
      curvature[r] = p * (1 - p);
      weighted[r] = labels[rows[begin + r]] == 1 ? -p : p;
    }
    // Feature by feature, so that each row of `weighted` is written in order.
    for (std::size_t a = 0; a < D; ++a)
      for (std::size_t r = 0; r < m; ++r) weighted[(a + 1) * kChunk + r] = curvature[r] * chunk[r * stride + 1 + a];
    kern.dot_add(weighted.data(), kChunk, chunk + 1, stride, width, padded, m, sums.data(), padded);
  }
  if (grad)
    for (std::size_t a = 0; a < D; ++a) {
      grad[a] += sums[a];
      for (std::size_t b = 0; b <= a; ++b) hess[a * D + b] += sums[(a + 1) * padded + b];
    }
  return nll;
}

// The matrix W's terms (parameters from W = D + biases on) in the gradient and the Hessian's lower
// triangle, gathered over chunks of rows and added by the sweep's product kernel (dot_add). With S =
// diag(P) - P P^T and v = P (x) u (v_cm = P_c u_m), the Hessian of -log softmax pairs W_cm with W_eq by
// S_ce u_m u_q = [c = e] v_cm u_q - v_cm v_eq, with theta_k by v_cm (x_ck - mu_k) and with the bias b_e by
// [c = e] v_cm - v_cm P_e: products of small matrices over the chunk's rows. Added row by row, in short
// loops, they cost a canonical estimate at K = 10 1.6 times the time they cost gathered (docs/validation.md,
// 7.9).
class MatrixTerms {
 public:
  static constexpr std::size_t kRows = 64;

  MatrixTerms(const LogitDesign& d, std::size_t P)
      : L_(d.L), D_(d.D), M_(d.M), P_(P), W_(d.D + d.biases()), bias_(d.class_bias), minus_vt_(L_ * M_ * kRows),
        v_(kRows * L_ * M_), minus_u_(kRows * M_), minus_centred_(L_ * kRows * D_), prob_(kRows * L_) {}

  // Row j of design d (design_row(); its inputs u after the features), its probabilities, mu and label.
  void add(const LogitDesign& d, const RowView& row, const double* prob, const double* mu, int y, double* grad,
           double* hess, const TileKernels& kern) {
    const std::size_t r = rows_++, LM = L_ * M_;
    const double* u = row.x + L_ * D_;
    for (std::size_t c = 0; c < L_; ++c) {
      const double slope = prob[c] - (static_cast<std::size_t>(y) == c ? 1.0 : 0.0);
      for (std::size_t m = 0; m < M_; ++m) {
        const double v = prob[c] * u[m];
        grad[W_ + c * M_ + m] += slope * u[m];
        v_[r * LM + c * M_ + m] = v;
        minus_vt_[(c * M_ + m) * kRows + r] = -v;
      }
      for (std::size_t k = 0; k < D_; ++k) minus_centred_[(c * kRows + r) * D_ + k] = mu[k] - row.feature(k, d)[c];
      prob_[r * L_ + c] = prob[c];
    }
    for (std::size_t m = 0; m < M_; ++m) minus_u_[r * M_ + m] = -u[m];
    if (rows_ == kRows) flush(hess, kern);
  }

  // Adds the gathered rows' Hessian terms. Blocks on the diagonal of W's part are written whole; only the
  // lower triangle is read.
  void flush(double* hess, const TileKernels& kern) {
    if (rows_ == 0) return;
    const std::size_t LM = L_ * M_, n = rows_;
    for (std::size_t c = 0; c < L_; ++c) {
      const double* a = minus_vt_.data() + c * M_ * kRows;  // -v_c. as M rows of the chunk's values
      double* out = hess + (W_ + c * M_) * P_;
      kern.dot_add(a, kRows, v_.data(), LM, M_, (c + 1) * M_, n, out + W_, P_);                  // -v v^T
      kern.dot_add(a, kRows, minus_u_.data(), M_, M_, M_, n, out + W_ + c * M_, P_);             // + v u^T
      kern.dot_add(a, kRows, minus_centred_.data() + c * kRows * D_, D_, M_, D_, n, out, P_);  // theta
      if (bias_) {
        kern.dot_add(a, kRows, prob_.data(), L_, M_, L_, n, out + D_, P_);  // -v P^T
        for (std::size_t m = 0; m < M_; ++m)
          for (std::size_t r = 0; r < n; ++r) out[m * P_ + D_ + c] -= a[m * kRows + r];  // + v
      }
    }
    rows_ = 0;
  }

 private:
  std::size_t L_, D_, M_, P_, W_;
  bool bias_;
  std::size_t rows_ = 0;
  std::vector<double> minus_vt_, v_, minus_u_, minus_centred_, prob_;
};

// A row's scratch for objective()'s terms.
struct RowScratch {
  std::vector<double> row, prob, mu, weighted, outer;
  explicit RowScratch(const LogitDesign& d)
      : row(row_scratch_size(d)), prob(d.L), mu(d.D), weighted((d.D + 1) * d.L), outer((d.D + 1) * (d.D + 1)) {}
};

// Row j's terms of objective()'s sums over the shared features, into `out`: log P_j(y_j), then with
// `with_grad` the gradient terms mu - x_y (D) and the Hessian terms sum_c P_c x_ca x_cb - mu_a mu_b (b <= a,
// D (D + 1) / 2 of them). The sums over the classes are the kernels' row products of the transposed
// features (mu = P x, then (P x_a) . x_b for every pair). Leaves P_j in s.prob and mu in s.mu; returns
// the row, which the other parameters' terms read.
RowView shared_terms(const LogitDesign& d, const TileKernels& kern, std::span<const double> theta, std::size_t j,
                     int y, RowScratch& s, bool with_grad, double* out) {
  const std::size_t L = d.L, D = d.D;
  const RowView r = design_row(d, j, s.row);
  out[0] = row_probabilities(d, kern, theta, r, top_class(d, j), s.prob.data(), y);
  if (!with_grad || D == 0) return r;
  // Rows P, then P x_a for each a, against the features: mu and (P x_a) . x_b from one product (two
  // where the last feature is apart), [q first + b] for b < first, the last at [(D + 1) first + q].
  const bool together = r.together(d);
  const std::size_t first = together ? D : D - 1, Q = D + 1;
  std::copy_n(s.prob.begin(), L, s.weighted.begin());
  for (std::size_t k = 0; k < D; ++k) {
    const double* xk = r.feature(k, d);
    for (std::size_t c = 0; c < L; ++c) s.weighted[(k + 1) * L + c] = s.prob[c] * xk[c];
  }
  std::fill(s.outer.begin(), s.outer.end(), 0.0);
  kern.row_dots(s.weighted.data(), L, Q, L, r.x, L, first, s.outer.data());
  if (!together) kern.row_dots(s.weighted.data(), L, Q, L, r.last, L, 1, s.outer.data() + Q * first);
  auto sum = [&](std::size_t q, std::size_t b) { return b < first ? s.outer[q * first + b] : s.outer[Q * first + q]; };
  for (std::size_t k = 0; k < D; ++k) s.mu[k] = sum(0, k);
  for (std::size_t k = 0; k < D; ++k) out[1 + k] = s.mu[k] - r.feature(k, d)[static_cast<std::size_t>(y)];
  for (std::size_t a = 0, e = 0; a < D; ++a)
    for (std::size_t b = 0; b <= a; ++b, ++e) out[1 + D + e] = sum(a + 1, b) - s.mu[a] * s.mu[b];
  return r;
}

// Adds a row's shared_terms() to the sums (grad and hess: with_grad's).
void add_shared_terms(const double* t, std::size_t D, std::size_t P, double& nll, double* grad, double* hess) {
  nll -= t[0];
  if (!grad) return;
  for (std::size_t k = 0; k < D; ++k) grad[k] += t[1 + k];
  for (std::size_t a = 0, e = 0; a < D; ++a)
    for (std::size_t b = 0; b <= a; ++b, ++e) hess[a * P + b] += t[1 + D + e];
}

// Rows per task of shared_feature_sums().
constexpr std::size_t kTermRows = 256;

// The rows' sums of objective() for a design of shared features only (no biases, matrix or top biases:
// the canonical pilot at K > 64), each row's shared_terms() formed on `threads` threads and added in the
// rows' order, so that the sums are bitwise those of one thread. At K = 1,000 a row's terms are 30,000
// multiply-adds, and the first fold's fit (the others start from it) ran alone.
double shared_feature_sums(const LogitDesign& d, const TileKernels& kern, std::span<const int> labels,
                           std::span<const std::size_t> rows, std::span<const double> theta, double* grad,
                           double* hess, int threads) {
  const std::size_t D = d.D, width = 1 + (grad ? D + D * (D + 1) / 2 : 0);
  std::vector<double> terms(rows.size() * width);
  std::vector<std::optional<RowScratch>> scratch(static_cast<std::size_t>(resolve_threads(threads)));
  parallel_for((rows.size() + kTermRows - 1) / kTermRows, threads, [&](std::size_t task, int worker) {
    std::optional<RowScratch>& s = scratch[static_cast<std::size_t>(worker)];
    if (!s) s.emplace(d);
    for (std::size_t r = task * kTermRows; r < std::min(rows.size(), (task + 1) * kTermRows); ++r)
      shared_terms(d, kern, theta, rows[r], labels[rows[r]], *s, grad != nullptr, terms.data() + r * width);
  });
  double nll = 0;
  for (std::size_t r = 0; r < rows.size(); ++r)
    add_shared_terms(terms.data() + r * width, D, d.parameters(), nll, grad, hess);
  return nll;
}

// The penalised objective at theta; with grad/hess given, also its gradient and Hessian (P x P). `packed`:
// a two-class design's rows, pack_binary_rows().
double objective(const LogitDesign& d, const TileKernels& kern, std::span<const int> labels,
                 std::span<const std::size_t> rows, double lambda, std::span<const double> theta, double* grad,
                 double* hess, Communicator* ranks, double total_rows, int threads, std::span<const double> packed) {
  // W: the matrix's first parameter, T: the top biases' first
  const std::size_t P = d.parameters(), L = d.L, D = d.D, M = d.M, W = D + d.biases(), T = W + L * M;
  RowScratch scratch(d);
  std::vector<double> term(1 + D + D * (D + 1) / 2);
  const std::vector<double>& prob = scratch.prob;
  const std::vector<double>& mu = scratch.mu;
  std::optional<MatrixTerms> matrix;
  if (M > 0 && grad) matrix.emplace(d, P);
  if (grad) std::fill_n(grad, P, 0.0);
  if (hess) std::fill_n(hess, P * P, 0.0);
  double nll = 0;
  const bool shared_only = !d.binary() && d.biases() == 0 && M == 0 && !d.top;
  if (d.binary())
    nll = binary_sums(d, kern, labels, rows, theta, grad, hess, packed);
  else if (shared_only)
    nll = shared_feature_sums(d, kern, labels, rows, theta, grad, hess, threads);
  // Otherwise row by row: the shared features' terms, then the other parameters' (Hessian of -log softmax:
  // sum_c P_c x_c x_c^T - mu mu^T over the extended features (x_c, e_c)).
  for (std::size_t j : d.binary() || shared_only ? std::span<const std::size_t>{} : rows) {
    const int y = labels[j];
    const RowView r = shared_terms(d, kern, theta, j, y, scratch, grad != nullptr, term.data());
    add_shared_terms(term.data(), D, P, nll, grad, hess);
    if (!grad) continue;
    if (d.class_bias) {
      for (std::size_t c = 0; c < L; ++c) grad[D + c] += prob[c];
      grad[D + static_cast<std::size_t>(y)] -= 1;
      for (std::size_t a = 0; a < D; ++a) {
        const double* xa = r.feature(a, d);
        for (std::size_t c = 0; c < L; ++c) hess[(D + c) * P + a] += prob[c] * (xa[c] - mu[a]);
      }
      // The class biases' block, diag(P) - P P^T: the terms below the diagonal apart from the diagonal's,
      // so that the inner loop runs in vectors (at K = 100, perf put four fifths of objective()'s samples in
      // the scalar loop).
      for (std::size_t c = 0; c < L; ++c) {
        const double pc = prob[c];
        double* row = hess + (D + c) * P + D;
        for (std::size_t e = 0; e < c; ++e) row[e] += 0.0 - pc * prob[e];
        row[c] += pc - pc * pc;
      }
    }
    if (matrix) matrix->add(d, r, prob.data(), mu.data(), y, grad, hess, kern);
    // The top bias v_t is the extended feature [c = t]: its mean over the classes is P_t.
    if (const std::size_t t = top_class(d, j); t < L) {
      const std::size_t v = T + t;
      grad[v] += prob[t] - (static_cast<std::size_t>(y) == t ? 1.0 : 0.0);
      hess[v * P + v] += prob[t] * (1 - prob[t]);
      for (std::size_t a = 0; a < D; ++a) hess[v * P + a] += prob[t] * (r.feature(a, d)[t] - mu[a]);
      if (d.class_bias)
        for (std::size_t e = 0; e < L; ++e) hess[v * P + D + e] += (e == t ? prob[t] : 0) - prob[t] * prob[e];
    }
  }
  if (matrix) matrix->flush(hess, kern);
  if (ranks) {  // the sums over every rank's rows
    const std::size_t P2 = grad ? P + P * P : 0;
    std::vector<double> sums(1 + P2);
    sums[0] = nll;
    if (grad) std::copy_n(grad, P, sums.begin() + 1), std::copy_n(hess, P * P, sums.begin() + 1 + static_cast<std::ptrdiff_t>(P));
    ranks->all_sum(sums);
    nll = sums[0];
    if (grad) std::copy_n(sums.begin() + 1, P, grad), std::copy_n(sums.begin() + 1 + static_cast<std::ptrdiff_t>(P), P * P, hess);
  }
  const double m = total_rows;
  auto ridge = [&](std::size_t a) { return a >= W && a < T ? d.matrix_penalty : lambda; };
  double penalty = 0;
  for (std::size_t a = 0; a < P; ++a) penalty += ridge(a) * theta[a] * theta[a];
  if (grad)
    for (std::size_t a = 0; a < P; ++a) grad[a] = grad[a] / m + ridge(a) * theta[a];
  if (hess)
    for (std::size_t a = 0; a < P; ++a) {
      for (std::size_t b = 0; b <= a; ++b) hess[a * P + b] /= m;
      hess[a * P + a] += ridge(a);
    }
  return nll / m + 0.5 * penalty;
}

// Solves H s = g in place (g becomes s) for symmetric positive definite H given by its lower triangle.
void cholesky_solve(std::vector<double>& H, std::vector<double>& g, std::size_t P) {
  for (std::size_t a = 0; a < P; ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      double s = H[a * P + b];
      for (std::size_t k = 0; k < b; ++k) s -= H[a * P + k] * H[b * P + k];
      if (a == b) {
        H[a * P + a] = std::sqrt(std::max(s, 1e-300));
      } else {
        H[a * P + b] = s / H[b * P + b];
      }
    }
  }
  for (std::size_t a = 0; a < P; ++a) {
    for (std::size_t k = 0; k < a; ++k) g[a] -= H[a * P + k] * g[k];
    g[a] /= H[a * P + a];
  }
  for (std::size_t a = P; a-- > 0;) {
    for (std::size_t k = a + 1; k < P; ++k) g[a] -= H[k * P + a] * g[k];
    g[a] /= H[a * P + a];
  }
}

}  // namespace

std::vector<double> fit_logit(const LogitDesign& design, const TileKernels& kernels, std::span<const int> labels,
                              std::span<const std::size_t> rows, double lambda, const RunControl* control,
                              std::span<const double> start, Communicator* ranks, int threads) {
  std::vector<double> total_rows{static_cast<double>(rows.size())};
  if (ranks) ranks->all_sum(total_rows);
  ECEKDE_ASSERT(lambda > 0 && total_rows[0] > 0 && (start.empty() || start.size() == design.parameters()) &&
                (design.M == 0 || design.matrix_penalty > 0) && !(design.M > 0 && design.top));
  const std::size_t P = design.parameters();
  std::vector<double> theta(start.begin(), start.end());
  if (theta.empty()) theta.assign(P, 0.0);
  std::vector<double> grad(P), hess(P * P), step(P), trial(P), trial_grad(P), trial_hess(P * P);
  // A two-class design's rows laid out once for every pass of the fit (binary_sums()).
  const std::vector<double> packed = design.binary() ? pack_binary_rows(design, rows) : std::vector<double>{};
  double value = objective(design, kernels, labels, rows, lambda, theta, grad.data(), hess.data(), ranks,
                           total_rows[0], threads, packed);
  for (int iteration = 0; iteration < 100; ++iteration) {
    WorkLedger::check(control);
    step = grad;
    cholesky_solve(hess, step, P);
    double decrease = 0;
    for (std::size_t a = 0; a < P; ++a) decrease += grad[a] * step[a];
    if (decrease < 1e-20) break;  // the Newton decrement: converged to rounding
    // The full step is nearly always taken, so each trial also forms its gradient and Hessian: one pass
    // over the rows per Newton step instead of two. Once the decrement is tiny, the full step is in
    // Newton's quadratic range and is taken without the line search: its decrease (about decrement / 2)
    // can lie below the objective's rounding, where comparing values cannot see it (such fits stopped
    // with gradients of 1e-9 instead of converging).
    const bool quadratic = decrease < kQuadraticDecrement;
    // Far from the optimum (a Newton decrement above 1) the search starts at the damped Newton step
    // 1 / (1 + decrement): from the offsets, a canonical pilot at K = 1,000 with saturated probabilities
    // had a decrement of 67 and halved the full step 14 times, each trial a pass over 560 MB of rows.
    const double decrement = std::sqrt(decrease);
    double t = decrement > 1 ? 1 / (1 + decrement) : 1, next = value;
    for (int halving = 0; halving < 60; ++halving, t /= 2) {
      for (std::size_t a = 0; a < P; ++a) trial[a] = theta[a] - t * step[a];
      next = objective(design, kernels, labels, rows, lambda, trial, trial_grad.data(), trial_hess.data(), ranks,
                       total_rows[0], threads, packed);
      if (quadratic || next <= value - 0.25 * t * decrease) break;
    }
    if (!(next < value) && !(quadratic && std::isfinite(next))) break;
    theta.swap(trial);
    grad.swap(trial_grad);
    hess.swap(trial_hess);
    value = next;
  }
  return theta;
}

void predict_logit(const LogitDesign& design, const TileKernels& kernels, std::span<const double> theta,
                   std::span<const std::size_t> rows, double* out) {
  std::vector<double> scratch(row_scratch_size(design));
  for (std::size_t j : rows) {
    row_probabilities(design, kernels, theta, design_row(design, j, scratch), top_class(design, j), out, -1);
    out += design.L;
  }
}

void predict_logit_each(std::span<const LogitDesign> designs, const TileKernels& kernels,
                        std::span<const std::vector<double>> theta, std::span<const std::size_t> rows,
                        std::span<double* const> out) {
  ECEKDE_ASSERT(!designs.empty() && theta.size() == designs.size() && out.size() == designs.size());
  const LogitDesign& first = designs[0];
  std::vector<double> scratch(row_scratch_size(first));
  if (first.binary()) {  // the same design for every fold (no adjustment): P_1 = sigmoid(dz + dx . theta)
    std::vector<double> differences(1 + first.D);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double* diff = difference_row(first, rows[i], scratch, differences);
      for (std::size_t f = 0; f < designs.size(); ++f) {
        double z = diff[0];
        for (std::size_t k = 0; k < first.D; ++k) z += diff[1 + k] * theta[f][k];
        const double p1 = 1 / (1 + std::exp(-z));
        out[f][2 * i] = 1 - p1;
        out[f][2 * i + 1] = p1;
      }
    }
    return;
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t j = rows[i];
    const RowView row = design_row(first, j, scratch);
    // An adjusted row's last feature is in scratch (design_row()): each design rewrites it there.
    double* last = first.adjust ? scratch.data() + (row.last - scratch.data()) : nullptr;
    ECEKDE_ASSERT(!last || (last >= scratch.data() && last < scratch.data() + scratch.size()));
    for (std::size_t f = 0; f < designs.size(); ++f) {
      const LogitDesign& d = designs[f];
      if (f > 0 && last) d.adjust(j, last);
      row_probabilities(d, kernels, theta[f], row, top_class(d, j), out[f] + i * d.L, -1);
    }
  }
}

void cache_rows(LogitDesign& design, std::size_t n, std::size_t max_values, int threads) {
  const std::size_t size = design.row_size();
  ECEKDE_ASSERT(!design.adjust || !design.binary());
  if (design.table || n > max_values / size) return;
  auto table = std::make_shared<std::vector<double>>(n * size);
  // In blocks of rows: at K = 1,000 a row is 7,000 values and their logarithms, 0.4 s for 10,000 rows.
  // Laid out as design_row() reads them.
  constexpr std::size_t kBlock = 256;
  std::vector<std::vector<double>> written(static_cast<std::size_t>(resolve_threads(threads)));
  parallel_for((n + kBlock - 1) / kBlock, threads, [&](std::size_t block, int worker) {
    std::vector<double>& own = written[static_cast<std::size_t>(worker)];
    own.resize(size);
    for (std::size_t j = block * kBlock; j < std::min(n, (block + 1) * kBlock); ++j)
      read_row(design, j, table->data() + j * size, own.data());
  });
  design.table = std::move(table);
  if (!design.binary()) return;
  const std::size_t width = 1 + design.D;
  auto differences = std::make_shared<std::vector<double>>(n * width);
  std::vector<double> row_scratch, scratch(width);
  for (std::size_t j = 0; j < n; ++j)
    std::copy_n(difference_row(design, j, row_scratch, scratch), width, differences->data() + j * width);
  design.differences = std::move(differences);
}

}  // namespace ecekde::detail
