// The oracle: plain O(n^2) loops written straight from the paper's formulas, with no blocking, no
// threads and no shared code with the library. The fast paths are tested against it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace oracle {

/// Row-major n x k probabilities and labels.
struct Data {
  std::size_t n = 0, k = 0;
  std::vector<double> f;
  std::vector<std::int64_t> y;
  double at(std::size_t r, std::size_t c) const { return f[r * k + c]; }
  /// Data of K classes from row-major probabilities and labels (n = labels' size).
  static Data of(std::size_t k, std::vector<double> f, std::vector<std::int64_t> y) {
    const std::size_t n = y.size();
    return {n, k, std::move(f), std::move(y)};
  }
};

/// log of the Dirichlet density with alpha = centre / h + 1, read at `at` (K = size). Probabilities below
/// DBL_MIN enter the logarithm as DBL_MIN (ecekde's documented rule for 0 and 1).
double log_dirichlet(const double* at, const double* centre, std::size_t K, double h);

/// log of the Beta density with alpha = c / h + 1, beta = (1 - c) / h + 1, read at x.
double log_beta(double x, double c, double h);

/// Canonical CE_p^p (Eq. 9).
double canonical(const Data& d, double h, double p);
/// One-dimensional problem (scores s, 0/1 labels b): mean_j |r_j - s_j|^p with the Beta kernel.
double one_dimensional(const std::vector<double>& s, const std::vector<int>& b, double h, double p);
/// Marginal: sum over classes of one_dimensional(f_c, 1[y = c]).
double marginal(const Data& d, double h, double p);
/// Top-label: one_dimensional(max_c f_c, 1[argmax = y]); ties to the lowest index.
double top_label(const Data& d, double h, double p);
/// Binary (one column P(y = 1)): 2 x one_dimensional(p, y).
double binary(const Data& d, double h, double p);

/// Mean LOO log-likelihood of the Dirichlet KDE of the rows of d.f at bandwidth h.
double loo_canonical(const Data& d, double h);
/// Mean LOO log-likelihood of the Beta KDE of the scores s.
double loo_one_dimensional(const std::vector<double>& s, double h);

}  // namespace oracle
