#include "oracle.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace oracle {

namespace {

double safe_log(double v) { return std::log(std::max(v, DBL_MIN)); }

// max over i != j of logk[i], then the shifted sums (log-sum-exp), so that tiny h stays finite.
struct Shifted {
  std::vector<double> w;  // exp(logk[i] - max), 0 at i = j
  double sum = 0, log_sum = 0;
};

Shifted shift(const std::vector<double>& logk, std::size_t j) {
  double m = -INFINITY;
  for (std::size_t i = 0; i < logk.size(); ++i)
    if (i != j) m = std::max(m, logk[i]);
  Shifted s;
  s.w.assign(logk.size(), 0.0);
  for (std::size_t i = 0; i < logk.size(); ++i)
    if (i != j) {
      s.w[i] = std::exp(logk[i] - m);
      s.sum += s.w[i];
    }
  s.log_sum = m + std::log(s.sum);
  return s;
}

// Each kernel's log is its normaliser, which depends on the centre alone, plus the power terms read at
// `at`. The estimates below form the normalisers once per centre rather than once per pair (DirichletRows,
// BetaRows): lgamma was most of their time.
double dirichlet_normaliser(const double* centre, std::size_t K, double h) {
  double sum_alpha = 0, log_gamma_sum = 0;
  for (std::size_t k = 0; k < K; ++k) {
    const double alpha = centre[k] / h + 1;
    sum_alpha += alpha;
    log_gamma_sum += std::lgamma(alpha);
  }
  return std::lgamma(sum_alpha) - log_gamma_sum;
}

double dirichlet_powers(const double* at, const double* centre, std::size_t K, double h) {
  double log_pow = 0;
  for (std::size_t k = 0; k < K; ++k) {
    const double alpha = centre[k] / h + 1;
    if (alpha != 1) log_pow += (alpha - 1) * safe_log(at[k]);  // x^0 = 1, also at x = 0
  }
  return log_pow;
}

double beta_normaliser(double c, double h) {
  const double a = c / h + 1, b = (1 - c) / h + 1;
  return std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
}

double beta_powers(double x, double c, double h) {
  const double a = c / h + 1, b = (1 - c) / h + 1;
  double v = 0;
  if (a != 1) v += (a - 1) * safe_log(x);
  if (b != 1) v += (b - 1) * safe_log(1 - x);
  return v;
}

// Every centre's log kernel read at one row at a time, the normalisers formed once (canonical rows of d;
// one-dimensional scores).
class DirichletRows {
 public:
  DirichletRows(const Data& d, double h) : d_(d), h_(h), normaliser_(d.n), logk_(d.n) {
    for (std::size_t i = 0; i < d.n; ++i) normaliser_[i] = dirichlet_normaliser(&d.f[i * d.k], d.k, h);
  }
  const std::vector<double>& at(std::size_t j) {
    for (std::size_t i = 0; i < d_.n; ++i)
      logk_[i] = normaliser_[i] + dirichlet_powers(&d_.f[j * d_.k], &d_.f[i * d_.k], d_.k, h_);
    return logk_;
  }

 private:
  const Data& d_;
  double h_;
  std::vector<double> normaliser_, logk_;
};

class BetaRows {
 public:
  BetaRows(const std::vector<double>& s, double h) : s_(s), h_(h), normaliser_(s.size()), logk_(s.size()) {
    for (std::size_t i = 0; i < s.size(); ++i) normaliser_[i] = beta_normaliser(s[i], h);
  }
  const std::vector<double>& at(std::size_t j) {
    for (std::size_t i = 0; i < s_.size(); ++i) logk_[i] = normaliser_[i] + beta_powers(s_[j], s_[i], h_);
    return logk_;
  }

 private:
  const std::vector<double>& s_;
  double h_;
  std::vector<double> normaliser_, logk_;
};

}  // namespace

double log_dirichlet(const double* at, const double* centre, std::size_t K, double h) {
  return dirichlet_normaliser(centre, K, h) + dirichlet_powers(at, centre, K, h);
}

double log_beta(double x, double c, double h) { return beta_normaliser(c, h) + beta_powers(x, c, h); }

double canonical(const Data& d, double h, double p) {
  double total = 0;
  DirichletRows rows(d, h);
  for (std::size_t j = 0; j < d.n; ++j) {
    const Shifted s = shift(rows.at(j), j);
    for (std::size_t c = 0; c < d.k; ++c) {
      double num = 0;
      for (std::size_t i = 0; i < d.n; ++i)
        if (d.y[i] == static_cast<std::int64_t>(c)) num += s.w[i];
      total += std::pow(std::fabs(num / s.sum - d.at(j, c)), p);
    }
  }
  return total / static_cast<double>(d.n);
}

double one_dimensional(const std::vector<double>& sc, const std::vector<int>& b, double h, double p) {
  const std::size_t n = sc.size();
  double total = 0;
  BetaRows rows(sc, h);
  for (std::size_t j = 0; j < n; ++j) {
    const Shifted s = shift(rows.at(j), j);
    double num = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (b[i] == 1) num += s.w[i];
    total += std::pow(std::fabs(num / s.sum - sc[j]), p);
  }
  return total / static_cast<double>(n);
}

double marginal(const Data& d, double h, double p) {
  double total = 0;
  for (std::size_t c = 0; c < d.k; ++c) {
    std::vector<double> s(d.n);
    std::vector<int> b(d.n);
    for (std::size_t j = 0; j < d.n; ++j) {
      s[j] = d.at(j, c);
      b[j] = d.y[j] == static_cast<std::int64_t>(c);
    }
    total += one_dimensional(s, b, h, p);
  }
  return total;
}

double top_label(const Data& d, double h, double p) {
  std::vector<double> s(d.n);
  std::vector<int> b(d.n);
  for (std::size_t j = 0; j < d.n; ++j) {
    std::size_t top = 0;
    for (std::size_t c = 1; c < d.k; ++c)
      if (d.at(j, c) > d.at(j, top)) top = c;
    s[j] = d.at(j, top);
    b[j] = d.y[j] == static_cast<std::int64_t>(top);
  }
  return one_dimensional(s, b, h, p);
}

double binary(const Data& d, double h, double p) {
  std::vector<double> s(d.n);
  std::vector<int> b(d.n);
  for (std::size_t j = 0; j < d.n; ++j) {
    s[j] = d.at(j, d.k - 1);
    b[j] = static_cast<int>(d.y[j]);
  }
  return 2 * one_dimensional(s, b, h, p);
}

double loo_canonical(const Data& d, double h) {
  double total = 0;
  DirichletRows rows(d, h);
  for (std::size_t j = 0; j < d.n; ++j) {
    total += shift(rows.at(j), j).log_sum - std::log(static_cast<double>(d.n - 1));
  }
  return total / static_cast<double>(d.n);
}

double loo_one_dimensional(const std::vector<double>& s, double h) {
  const std::size_t n = s.size();
  double total = 0;
  BetaRows rows(s, h);
  for (std::size_t j = 0; j < n; ++j) {
    total += shift(rows.at(j), j).log_sum - std::log(static_cast<double>(n - 1));
  }
  return total / static_cast<double>(n);
}

}  // namespace oracle
