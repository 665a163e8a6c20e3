// Penalised multinomial logistic regression with offsets: the pilot recalibration maps of the cross-fit
// estimator (their designs: crossfit/families.hpp; their cross-fitting: crossfit/pilot_fit.hpp). Small
// parameter counts only (a dense Hessian, solved by Cholesky).
#pragma once

#include "ecekde/communicator.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace ecekde {
class RunControl;
}

namespace ecekde::detail {

struct TileKernels;

/// The model z_jc = offset_jc + sum_d x_jcd theta_d (+ b_c with class biases) (+ sum_m W_cm u_jm with a
/// matrix) (+ v_c [c = top_j] with top biases), P_j = softmax(z_j), over L classes, D shared features and
/// M matrix inputs. `row(j, offset, x)` writes row j's L offsets, then L x D features and its M matrix
/// inputs u_j from x on. The parameters are theta (D), the class biases (L), W (L x M, row by row), then
/// the top biases v (L); W's entries are penalised by `matrix_penalty` instead of the fit's lambda.
struct LogitDesign {
  std::size_t L = 0, D = 0, M = 0;
  bool class_bias = false;
  double matrix_penalty = 0;
  std::function<void(std::size_t j, double* offset, double* x)> row;
  /// Optional: row j's class top_j (each below L), which gains the bias v_{top_j}. The same model as L
  /// more features [c = d = top_j], but a row adds D + L terms to the Hessian instead of L (D + L)^2 / 2.
  std::shared_ptr<const std::vector<std::uint32_t>> top;
  /// Optional: writes the L values of row j's last feature (class by class), which the fits then read in
  /// place of the row's own, so that designs differing in that feature (the folds of the canonical pilot)
  /// share one table and read its rows in place. Not for binary designs, whose differences are kept apart.
  std::function<void(std::size_t j, double* last_feature)> adjust;
  /// Every row's offsets then features (L + L D values per row), written once by cache_rows(): the fits
  /// read them at each Newton step instead of calling row() (whose logarithms dominated the pilots). A
  /// binary design's rows as row() writes them; the others' with the features transposed, feature k of
  /// class c at [L + k L + c], so that the sums over the classes run in vectors.
  std::shared_ptr<const std::vector<double>> table;
  /// Two classes without class biases (binary()): every row's z_1 - z_0 at theta = 0 then x_1 - x_0
  /// (1 + D values per row), all a fit reads of a row; written by cache_rows() with the table.
  std::shared_ptr<const std::vector<double>> differences;

  std::size_t biases() const { return class_bias ? L : 0; }
  std::size_t top_biases() const { return top ? L : 0; }
  std::size_t parameters() const { return D + biases() + L * M + top_biases(); }
  std::size_t row_size() const { return L + L * D + M; }
  bool binary() const { return L == 2 && !class_bias && M == 0 && !top; }
};

/// Fills design.table (and for binary designs design.differences) with rows 0..n-1 when the table takes
/// at most `max_values` doubles; otherwise leaves the design as it is (row() is then called at each use).
/// The rows are written on up to `threads` threads (row() must then be safe to call concurrently).
void cache_rows(LogitDesign& design, std::size_t n, std::size_t max_values, int threads = 1);

/// Minimises (1/|rows|) sum_{j in rows} -log P_j(y_j) + (lambda / 2) ||theta, b||^2 (+ (matrix_penalty / 2)
/// ||W||^2) by Newton's method with
/// a backtracking line search, from `start` (empty: theta = 0, the offsets themselves) until the Newton
/// decrement reaches rounding. Two-class designs take their rows' exp and log1p from `kernels`. Throws
/// Cancelled at the next Newton step once `control` is cancelled (one step at K = 1,000 is a pass over a
/// (K + D)^2 Hessian per row). With `ranks` (ExecutionOptions::own_rows) each rank passes its own rows
/// and the fit is over all ranks' rows: every objective's sums are combined by an all_sum, so every rank
/// takes the same steps to the same parameters. A design of shared features only forms its rows' terms on
/// up to `threads` threads, bitwise as on one.
std::vector<double> fit_logit(const LogitDesign& design, const TileKernels& kernels, std::span<const int> labels,
                              std::span<const std::size_t> rows, double lambda, const RunControl* control = nullptr,
                              std::span<const double> start = {}, Communicator* ranks = nullptr, int threads = 1);

/// Writes P_j (L values) under theta of each row j = rows[i] into out[i L, (i + 1) L).
void predict_logit(const LogitDesign& design, const TileKernels& kernels, std::span<const double> theta,
                   std::span<const std::size_t> rows, double* out);

/// predict_logit() of several designs that differ only in their adjustment (LogitDesign::adjust: the
/// canonical pilot's folds), each under its own parameters: each row is formed once for all of them.
/// Writes P_j under designs[f] and theta[f] into out[f][i L, (i + 1) L): bitwise predict_logit()'s, but
/// for binary designs (one and the same for every f), whose P_1 is the sigmoid of the row's margin (one
/// exponential, not a softmax of two), to rounding.
void predict_logit_each(std::span<const LogitDesign> designs, const TileKernels& kernels,
                        std::span<const std::vector<double>> theta, std::span<const std::size_t> rows,
                        std::span<double* const> out);

}  // namespace ecekde::detail
