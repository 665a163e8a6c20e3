#include "metrics_oracle.hpp"

#include <algorithm>
#include <cmath>

namespace metrics_oracle {

using ecekde::BinnedForm;
using ecekde::Binning;
using ecekde::CalibrationType;

std::vector<double> edges(const std::vector<double>& scores, Binning binning, std::size_t bins) {
  std::vector<double> sorted = scores;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  std::vector<double> e(bins + 1);
  for (std::size_t b = 0; b <= bins; ++b) {
    if (b == 0) e[b] = 0;
    else if (b == bins) e[b] = 1;
    else if (binning == Binning::equal_width) e[b] = double(b) / double(bins);
    else e[b] = std::min(1.0, sorted[b * n / bins]);
  }
  return e;
}

std::size_t bin_of(const std::vector<double>& edges, double s) {
  std::size_t b = 0;
  for (std::size_t j = 1; j + 1 < edges.size(); ++j)
    if (edges[j] <= s) ++b;
  return b;
}

std::vector<Problem> problems(const oracle::Data& d, CalibrationType type) {
  std::vector<Problem> out;
  auto one = [&](auto score, auto positive) {
    Problem pr;
    for (std::size_t i = 0; i < d.n; ++i) {
      pr.score.push_back({score(i)});
      pr.label.push_back({positive(i) ? 1.0 : 0.0});
    }
    out.push_back(pr);
  };
  switch (type) {
    case CalibrationType::binary:
      one([&](std::size_t i) { return d.at(i, d.k - 1); }, [&](std::size_t i) { return d.y[i] == 1; });
      break;
    case CalibrationType::top_label: {
      auto top = [&](std::size_t i) {
        std::size_t t = 0;
        for (std::size_t c = 0; c < d.k; ++c)
          if (d.at(i, c) > d.at(i, t)) t = c;
        return t;
      };
      one([&](std::size_t i) { return d.at(i, top(i)); },
          [&](std::size_t i) { return d.y[i] == static_cast<std::int64_t>(top(i)); });
      break;
    }
    case CalibrationType::marginal:
      for (std::size_t c = 0; c < d.k; ++c)
        one([&](std::size_t i) { return d.at(i, c); }, [&](std::size_t i) { return d.y[i] == static_cast<std::int64_t>(c); });
      break;
    case CalibrationType::canonical: {
      Problem pr;
      for (std::size_t i = 0; i < d.n; ++i) {
        pr.score.emplace_back(d.f.begin() + static_cast<std::ptrdiff_t>(i * d.k),
                              d.f.begin() + static_cast<std::ptrdiff_t>((i + 1) * d.k));
        pr.label.emplace_back(d.k, 0.0);
        pr.label.back()[static_cast<std::size_t>(d.y[i])] = 1;
      }
      out.push_back(pr);
      break;
    }
  }
  return out;
}

namespace {

double problem_value(const Problem& pr, Binning binning, const std::vector<std::size_t>& bins, BinnedForm form,
                     double p, bool maximum) {
  const std::size_t n = pr.score.size(), dim = pr.score[0].size();
  std::vector<std::vector<std::size_t>> cell(n, std::vector<std::size_t>(dim));
  for (std::size_t d = 0; d < dim; ++d) {
    std::vector<double> column;
    for (const auto& row : pr.score) column.push_back(row[d]);
    const std::vector<double> e = edges(column, binning, bins[d]);
    for (std::size_t i = 0; i < n; ++i) cell[i][d] = bin_of(e, pr.score[i][d]);
  }
  double total = 0, largest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // Means over the samples sharing sample i's cell.
    std::vector<double> mean_score(dim, 0.0), mean_label(dim, 0.0);
    std::size_t count = 0;
    bool first_of_cell = true;
    for (std::size_t j = 0; j < n; ++j) {
      if (cell[j] != cell[i]) continue;
      if (j < i) first_of_cell = false;
      ++count;
      for (std::size_t d = 0; d < dim; ++d) {
        mean_score[d] += pr.score[j][d];
        mean_label[d] += pr.label[j][d];
      }
    }
    for (std::size_t d = 0; d < dim; ++d) {
      mean_score[d] /= double(count);
      mean_label[d] /= double(count);
    }
    if (form == BinnedForm::per_sample) {
      for (std::size_t d = 0; d < dim; ++d) {
        const double gap = std::fabs(mean_label[d] - pr.score[i][d]);
        total += std::pow(gap, p) / double(n);
        largest = std::max(largest, gap);
      }
    } else if (first_of_cell) {
      for (std::size_t d = 0; d < dim; ++d) {
        const double gap = std::fabs(mean_label[d] - mean_score[d]);
        largest = std::max(largest, gap);
        if (form == BinnedForm::per_bin) total += double(count) / double(n) * std::pow(gap, p);
        else if (count >= 2)
          total += double(count) / double(n) *
                   (gap * gap - mean_label[d] * (1 - mean_label[d]) / (double(count) - 1));
      }
    }
  }
  return maximum ? largest : total;
}

}  // namespace

double binned(const oracle::Data& d, CalibrationType type, Binning binning, const std::vector<std::size_t>& bins,
              BinnedForm form, double p, bool maximum) {
  double value = 0;
  std::size_t c = 0;
  for (const Problem& pr : problems(d, type)) {
    const std::vector<std::size_t> own = type == CalibrationType::marginal ? std::vector<std::size_t>{bins[c++]} : bins;
    const double v = problem_value(pr, binning, own, form, p, maximum);
    value = maximum ? std::max(value, v) : value + v;
  }
  return type == CalibrationType::binary && !maximum ? 2 * value : value;
}

Mmce mmce(const oracle::Data& d, bool weighted, double width) {
  const std::size_t n = d.n;
  std::vector<double> r(n), c(n);
  double correct = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t t = 0;
    for (std::size_t k = 0; k < d.k; ++k)
      if (d.at(i, k) > d.at(i, t)) t = k;
    r[i] = d.at(i, t);
    c[i] = d.y[i] == static_cast<std::int64_t>(t) ? 1 : 0;
    correct += c[i];
  }
  Mmce out;
  out.d_squared.assign(n, 0.0);
  auto kernel = [&](std::size_t i, std::size_t j) { return std::exp(-std::fabs(r[i] - r[j]) / width); };
  auto sign = [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; };
  if (!weighted) {
    // MMCE^2 = (1/n^2) sum_ij (c_i - r_i)(c_j - r_j) k_ij
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) out.squared += (c[i] - r[i]) * (c[j] - r[j]) * kernel(i, j) / double(n * n);
  } else {
    // sum over correct pairs (1-r_i)(1-r_j)k / m^2 + wrong pairs r_i r_j k / (n-m)^2
    //   - 2 sum over (correct i, wrong j) (1-r_i) r_j k / (m (n-m))
    const double m = correct, w = double(n) - correct;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (c[i] == 1 && c[j] == 1) out.squared += (1 - r[i]) * (1 - r[j]) * kernel(i, j) / (m * m);
        if (c[i] == 0 && c[j] == 0) out.squared += r[i] * r[j] * kernel(i, j) / (w * w);
        if (c[i] == 1 && c[j] == 0) out.squared -= 2 * (1 - r[i]) * r[j] * kernel(i, j) / (m * w);
      }
  }
  // Derivative of the first form's summand pairs (i, j) and (j, i) with respect to r_l, written per pair
  // with the scale s_i of sample i: u_i = s_i (c_i - r_i), S = sum_ij u_i u_j k_ij.
  std::vector<double> s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = weighted ? 1 / (c[i] == 1 ? correct : double(n) - correct) : 1 / double(n);
  for (std::size_t l = 0; l < n; ++l)
    for (std::size_t j = 0; j < n; ++j) {
      const double ul = s[l] * (c[l] - r[l]), uj = s[j] * (c[j] - r[j]);
      const double dk = -sign(r[l] - r[j]) / width * kernel(l, j);  // d k_lj / d r_l
      out.d_squared[l] += 2 * (-s[l] * uj * kernel(l, j) + (j == l ? 0.0 : ul * uj * dk));
    }
  return out;
}

double nll(const std::vector<double>& z, std::size_t k, const std::vector<int>& y, double T) {
  const std::size_t n = y.size();
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double m = -INFINITY;
    for (std::size_t c = 0; c < k; ++c) m = std::max(m, z[i * k + c] / T);
    double s = 0;
    for (std::size_t c = 0; c < k; ++c) s += std::exp(z[i * k + c] / T - m);
    total += m + std::log(s) - z[i * k + static_cast<std::size_t>(y[i])] / T;
  }
  return total / double(n);
}

}  // namespace metrics_oracle
