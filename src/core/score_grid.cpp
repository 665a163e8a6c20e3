// ScoreTree::interpolated_sums: a one-dimensional problem's kernel sums at many rows from exact sums at a
// few points, with a proven bound on each row's error that is checked row by row.
//
// Row j enters the kernel through t_j = q (L1_j - L2_j) / h and ups_j = q L2_j / h (score_tree.hpp). With
// sigma_i = s_i + r_i = 1, its sums are e^{ups_j} (F_l(t_j) - own term), where
//   F_l(t) = sum_i V_il e^{q a_i} e^{t s_i}      (V_i0 = 1: the weights)
// is a sum of exponentials in t with rates s_i in [0, 1]: a function of one variable, however many rows.
// The rows are sorted by t and cut into intervals [a, b]. On each, G_l(t) = F_l(t) e^{-(t - c) u} (c its
// middle, u its mean slope of log F_0) is interpolated at kPoints Chebyshev points, where the tree's walk gives
// F_l exactly (to its 4e-16); the row's own centre is then subtracted exactly.
//
// The bound needs nothing about where the centres lie. With c_i = e^{q a_i} and P = kPoints even,
//   |G_l^(P)(x)| <= max_i |V_il| sum_i c_i |s_i - u|^P e^{x (s_i - u)}
//               <= max_i |V_il| (P / (e L))^P (G_0(x + L) + G_0(x - L)),
// by |d|^P <= (P / (e L))^P (e^{L d} + e^{-L d}). G_0 is convex, so over [a - L, b + L] it is largest at
// an end. Interpolation at points t_k errs at t by at most max_i |V_il| E(t), with
//   E(t) = |prod_k (t - t_k)| / P! * 2 (P / (e L))^P * max(G_0(a - L), G_0(b + L)),
// two more exact sums per interval; at Chebyshev points |prod_k (t - t_k)| <= 2 ((b - a) / 4)^P, and with
// L = kShift (b - a) and P = 16, E <= 2e-18 of that maximum. The product is taken at each row's t over
// the points as the walk read them (within rounding of Chebyshev's, and exactly where the rows share one
// t, which is then a point). Rounding adds at most kRoundingUnits ulps of the largest G_0 at the points,
// and sigma_i = 1 a relative |ups_j| max_i |sigma_i - 1|. A row is taken from its interval when these, in
// all, are at most kGridTolerance of the weight sum over the other centres (bounded below by the
// interpolant less the errors and the own term), and the own term is at most kOwnShare of the sum: each
// sum then errs by at most kGridTolerance max_i |V_il| times that weight sum, each kernel average by at
// most kGridTolerance max_i |V_il|, besides the rounding of the exponents (O(q / h) ulps) that bounds any
// sum in double. An interval with a row whose interpolation alone fails (at half the tolerance) is halved;
// a row that fails through its own term (a row alone in its neighbourhood) or sigma is summed exactly by
// the walk, as are the rows of intervals that would take more points than rows.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <numeric>

#include "core/messages.hpp"
#include "core/score_tree.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

namespace {

constexpr std::size_t kPoints = 16;  // Chebyshev points per interval (even: the bound takes |d|^P)
constexpr double kShift = 3;         // L = kShift (b - a)
constexpr double kRoundingUnits = 16;
constexpr int kMaxDepth = 80;        // halvings of an interval before its rows are summed exactly

// 2 (P / (4 e kShift))^P / P!: E(t) over max(G_0(a - L), G_0(b + L)) times the product in units of
// ((b - a) / 4)^P.
const double kRemainderFactor = [] {
  double f = 2;
  for (std::size_t k = 1; k <= kPoints; ++k)
    f *= static_cast<double>(kPoints) / (4 * std::numbers::e * kShift) / static_cast<double>(k);
  return f;
}();

const std::array<double, kPoints> kChebyshev = [] {
  std::array<double, kPoints> x{};
  for (std::size_t k = 0; k < kPoints; ++k)
    x[k] = std::cos((2 * static_cast<double>(k) + 1) * std::numbers::pi / (2 * static_cast<double>(kPoints)));
  return x;
}();

// Rows of one interval: positions [begin, end) of the rows sorted by t; `depth` halvings from the first.
struct Interval {
  std::size_t begin, end;
  int depth;
};

// The interpolant of one interval: G_l / e^S at its points (column-major), with G_l = F_l e^{-(t - c) u}
// for its middle c, the points' t and barycentric weights, u, c, S, and E(t) / e^S less the product
// (`remainder`, in the product's units `unit`^-P) and the rounding term (`rounding`).
struct Interpolant {
  std::size_t count = 0;  // 1: the rows share one t, a point whose sums are exact; else kPoints (+ 2 ends)
  std::array<double, kPoints> t{}, weight{};
  std::vector<double> g;  // g[l * kPoints + k]
  double u = 0, c = 0, S = 0, unit = 0, remainder = 0, rounding = 0;

  // G_l / e^S at x where x is one of the points (the interpolant's value there, exactly) and E(x) / e^S;
  // false where it is not a point. TileKernels::interpolate serves every other x.
  bool at_point(double x, std::size_t columns, double* out, double& error) const {
    const std::size_t k = count == 1 ? 0 : static_cast<std::size_t>(std::find(t.begin(), t.end(), x) - t.begin());
    if (k == kPoints) return false;
    for (std::size_t l = 0; l < columns; ++l) out[l] = g[count == 1 ? l : l * kPoints + k];
    error = count == 1 ? 0 : rounding;
    return true;
  }
};

// Positions 0..n-1 in increasing order of x, ties in increasing position: the order a walk takes its rows
// in. A comparison sort, as the points of a level are few (the radix sort's buckets cost more there).
std::vector<std::uint32_t> ascending(const double* x, std::size_t n) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [x](std::uint32_t a, std::uint32_t b) { return x[a] < x[b] || (x[a] == x[b] && a < b); });
  return order;
}
std::vector<std::uint32_t> ascending(const std::vector<double>& x) { return ascending(x.data(), x.size()); }

}  // namespace

std::vector<std::uint32_t> ScoreTree::grid_order(const KernelPoints& rows) {
  std::vector<double> difference(rows.n);
  for (std::size_t j = 0; j < rows.n; ++j) difference[j] = rows.log_x[2 * j] - rows.log_x[2 * j + 1];
  return score_order(difference);
}

ScoreTree::GridCount ScoreTree::interpolated_sums(const KernelPoints& rows, std::span<const std::size_t> self,
                                                 const KernelSumRequest& request, const SweepPlan& plan,
                                                 std::span<double> scale, std::span<double> sums,
                                                 std::span<const std::uint32_t> order) const {
  const std::size_t n = g_.size(), R = rows.n, depth = request.depth, columns = depth + 1;
  ECEKDE_ASSERT(rows.dim == 2 && request.offsets.size() == n && request.vt.size() == depth * n);
  ECEKDE_ASSERT(self.empty() ? R == n : self.size() == R);
  ECEKDE_ASSERT(scale.size() == R && sums.size() == R * columns && plan.kernels != nullptr);
  const double q = request.power, slope = q * request.inv_h, tol = kGridTolerance;
  const double work = row_work(plan, 2, n) * request.pair_work;
  WorkLedger::start(plan.control, static_cast<double>(R) * work);
  SweepPlan walks = plan;  // the walks below: cancellation is checked here, progress counted once
  walks.control = nullptr;
  // Once for every walk below, without the sigma series: the points' ups is 0, and the rows summed
  // exactly are few (they expand only nodes whose sigma is one value, and descend the others).
  const Expansion expansion = expand(request, *plan.kernels, false);

  std::vector<double> t(R), ups(R);
  for (std::size_t j = 0; j < R; ++j) {
    const double* log_row = rows.log_x.data() + 2 * j;
    t[j] = q * (log_row[0] - log_row[1]) * request.inv_h;  // as the walk forms tau: monotone in L1 - L2
    ups[j] = q * log_row[1] * request.inv_h;
  }
  std::vector<std::uint32_t> own_order;
  if (order.empty()) own_order = grid_order(rows);
  const std::span<const std::uint32_t> by_t = order.empty() ? std::span<const std::uint32_t>(own_order) : order;
  ECEKDE_ASSERT(by_t.size() == R);
  auto own_of = [&](std::size_t j) { return self.empty() ? j : self[j]; };
  // The rows' t in that order, read by every level (gathered once, not per interval and level).
  std::vector<double> sorted_t(R);
  for (std::size_t r = 0; r < R; ++r) sorted_t[r] = t[by_t[r]];

  std::vector<std::uint32_t> exact_rows;
  std::vector<Interval> open{{0, R, 0}};
  std::size_t points_used = 0;
  std::vector<double> point_l1, row_error, own_w, values;
  while (!open.empty()) {
    WorkLedger::check(plan.control);
    // Each interval's points: one where its rows share one t, else kPoints then a - L and b + L.
    // Each as L1 (with L2 = 0): a shared t is one row's difference, which the walk turns into t exactly.
    point_l1.clear();
    std::vector<std::size_t> first_point;
    for (const Interval& iv : open) {
      first_point.push_back(point_l1.size());
      const double a = sorted_t[iv.begin], b = sorted_t[iv.end - 1];
      if (a == b) {
        const double* log_row = rows.log_x.data() + 2 * by_t[iv.begin];
        point_l1.push_back(log_row[0] - log_row[1]);
        continue;
      }
      for (double c : kChebyshev) point_l1.push_back((a + 0.5 * (b - a) * (1 + c)) / slope);
      point_l1.push_back((a - kShift * (b - a)) / slope);
      point_l1.push_back((b + kShift * (b - a)) / slope);
    }
    first_point.push_back(point_l1.size());
    if (points_used + exact_rows.size() + point_l1.size() >= R) {  // dearer than the rows: those, exactly
      for (const Interval& iv : open)
        exact_rows.insert(exact_rows.end(), by_t.begin() + static_cast<std::ptrdiff_t>(iv.begin),
                          by_t.begin() + static_cast<std::ptrdiff_t>(iv.end));
      break;
    }
    points_used += point_l1.size();
    // The points as rows of the walk (L2 = 0, so ups = 0), with x the score whose logit is L1 (it only
    // orders them); their t as the walk forms it.
    const std::size_t P = point_l1.size();
    KernelPoints at;
    at.n = P;
    at.dim = 2;
    at.log_x.resize(2 * P);
    at.x_t.resize(2 * P);
    std::vector<double> point_t(P);
    for (std::size_t k = 0; k < P; ++k) {
      at.log_x[2 * k] = point_l1[k];
      point_t[k] = q * (at.log_x[2 * k] - at.log_x[2 * k + 1]) * request.inv_h;
      at.x_t[k] = 1 / (1 + std::exp(-at.log_x[2 * k]));
      at.x_t[P + k] = 1 - at.x_t[k];
    }
    std::vector<double> point_scale(P), point_sums(P * columns);
    walk(expansion, at, std::vector<std::size_t>(P, n), request, walks, point_scale, point_sums, ascending(point_t));

    std::vector<Interval> next;
    // Halves an interval at its middle t (its rows split there); one that cannot be split is summed exactly.
    auto halve_interval = [&](const Interval& iv) {
      const double a = sorted_t[iv.begin], b = sorted_t[iv.end - 1], mid = a + 0.5 * (b - a);
      const auto first = by_t.begin() + static_cast<std::ptrdiff_t>(iv.begin);
      const auto last = by_t.begin() + static_cast<std::ptrdiff_t>(iv.end);
      const auto split = static_cast<std::size_t>(
          std::partition_point(sorted_t.begin() + static_cast<std::ptrdiff_t>(iv.begin),
                               sorted_t.begin() + static_cast<std::ptrdiff_t>(iv.end),
                               [mid](double v) { return v <= mid; }) -
          sorted_t.begin());
      if (iv.depth >= kMaxDepth || split == iv.begin || split == iv.end) {
        exact_rows.insert(exact_rows.end(), first, last);
        return;
      }
      next.push_back({iv.begin, split, iv.depth + 1});
      next.push_back({split, iv.end, iv.depth + 1});
    };
    Interpolant in;
    in.g.resize(columns * kPoints);
    for (std::size_t v = 0; v < open.size(); ++v) {
      const Interval iv = open[v];
      const std::size_t p0 = first_point[v];
      const double* ps = point_sums.data() + p0 * columns;
      const double* sc = point_scale.data() + p0;
      const double* pt = point_t.data() + p0;
      in.count = first_point[v + 1] - p0;
      if (in.count == 1) {
        in.u = 0;
        in.c = pt[0];
        in.S = sc[0];
        std::copy_n(ps, columns, in.g.begin());
      } else {
        const double a = sorted_t[iv.begin], b = sorted_t[iv.end - 1], left = pt[kPoints], right = pt[kPoints + 1];
        auto log_f = [&](std::size_t k) { return sc[k] + std::log(ps[k * columns]); };
        in.u = (log_f(kPoints + 1) - log_f(kPoints)) / (right - left);
        if (!std::isfinite(in.u)) in.u = 0;
        in.S = -std::numeric_limits<double>::infinity();
        in.c = a + 0.5 * (b - a);  // t - c rather than t in the exponents: the rounding of t u (t = O(q / h)) stays out
        for (std::size_t k = 0; k < kPoints + 2; ++k) in.S = std::max(in.S, log_f(k) - (pt[k] - in.c) * in.u);
        double largest = 0;
        for (std::size_t k = 0; k < kPoints; ++k) {
          const double e = std::exp(sc[k] - in.S - (pt[k] - in.c) * in.u);
          for (std::size_t l = 0; l < columns; ++l) in.g[l * kPoints + k] = ps[k * columns + l] * e;
          largest = std::max(largest, in.g[k]);
          in.t[k] = pt[k];
        }
        auto g_end = [&](std::size_t k) { return ps[k * columns] * std::exp(sc[k] - in.S - (pt[k] - in.c) * in.u); };
        const double L = std::min(a - left, right - b);
        in.remainder = kRemainderFactor * std::pow(kShift * (b - a) / L, static_cast<double>(kPoints)) *
                       std::max(g_end(kPoints), g_end(kPoints + 1));
        in.rounding = kRoundingUnits * std::numeric_limits<double>::epsilon() * largest;
        // Barycentric weights of the points as the walk read them (differences scaled to about 1).
        in.unit = 4 / (b - a);
        for (std::size_t k = 0; k < kPoints; ++k) {
          double w = 1;
          for (std::size_t m = 0; m < kPoints; ++m)
            if (m != k) w *= (pt[k] - pt[m]) * in.unit;
          in.weight[k] = 1 / w;
        }
      }
      // The interpolant at every row (into the outputs), then the own terms' exponentials in one call,
      // then each row's test.
      const std::size_t count = iv.end - iv.begin;
      row_error.resize(count);
      own_w.resize(count);
      const double* row_t = sorted_t.data() + iv.begin;
      values.resize(count * columns);
      // An interval whose bound at its worst (the product at Chebyshev points is at most 2) exceeds the
      // tolerance of half its smallest value at the points is halved before its rows are interpolated:
      // most intervals of the first levels are, and each level would otherwise take every row again.
      if (in.count > 1 &&
          2.02 * in.remainder + in.rounding > 0.25 * tol * *std::min_element(in.g.begin(), in.g.begin() + kPoints)) {
        halve_interval(iv);
        continue;
      }
      if (in.count > 1)
        plan.kernels->interpolate(row_t, count, in.t.data(), in.weight.data(), kPoints, in.unit, in.g.data(),
                                  columns, values.data(), row_error.data());
      bool halve = false;
      for (std::size_t r = 0; r < count && !halve; ++r) {
        const std::size_t j = by_t[iv.begin + r];
        double* out = sums.data() + j * columns;
        for (std::size_t l = 0; l < columns; ++l) out[l] = values[l * count + r];
        row_error[r] = row_error[r] * in.remainder + in.rounding;
        // A row at a point (where the kernel's quotient is not finite) and a shared t: from the point.
        const bool finite =
            (in.count > 1 && std::isfinite(out[0])) || in.at_point(row_t[r], columns, out, row_error[r]);
        halve = !finite || !(out[0] - row_error[r] > 0 && row_error[r] <= 0.5 * tol * (out[0] - row_error[r]));
        scale[j] = in.S + (row_t[r] - in.c) * in.u + ups[j];
        const std::size_t own = own_of(j);
        const double* log_row = rows.log_x.data() + 2 * j;
        own_w[r] = own < n ? q * request.offsets[own] +
                                 slope * (centres_.x(own, 0) * log_row[0] + centres_.x(own, 1) * log_row[1]) - scale[j]
                           : -std::numeric_limits<double>::infinity();
      }
      if (!halve) {
        plan.kernels->exp_shifted(own_w.data(), count, 0);
        for (std::size_t r = 0; r < count; ++r) {
          const std::size_t j = by_t[iv.begin + r], own = own_of(j);
          double* out = sums.data() + j * columns;
          const double others_low = out[0] - row_error[r] - own_w[r];
          const double sigma = std::expm1(std::fabs(ups[j]) * sigma_error_) * 1.01 * out[0];
          // At most kOwnShare of the sum may be the own term: its exponent's rounding (O(q / h) ulps, as the
          // interpolant's) must not be magnified by cancelling against it.
          if (!(own_w[r] <= kOwnShare * out[0] && others_low > 0 && row_error[r] + sigma <= tol * others_low)) {
            exact_rows.push_back(static_cast<std::uint32_t>(j));  // its own term or sigma: summed exactly
            continue;
          }
          out[0] -= own_w[r];
          for (std::size_t l = 1; l < columns; ++l)
            if (own < n) out[l] -= request.vt[(l - 1) * n + own] * own_w[r];
        }
        continue;
      }
      halve_interval(iv);
    }
    open = std::move(next);
  }

  if (!exact_rows.empty()) {  // the walk's exact sums for the rest, each with its own centre left out
    const std::size_t E = exact_rows.size();
    std::vector<double> x(2 * E);  // the rows' points, whose logarithms are the rows' own
    std::vector<std::size_t> own(E);
    for (std::size_t e = 0; e < E; ++e) {
      const std::size_t j = exact_rows[e];
      x[2 * e] = rows.x(j, 0);
      x[2 * e + 1] = rows.x(j, 1);
      own[e] = std::min(own_of(j), n);
    }
    const KernelPoints some = KernelPoints::from_rows(x.data(), E, 2);
    std::vector<double> some_scale(E), some_sums(E * columns);
    walk(expansion, some, own, request, walks, some_scale, some_sums, ascending(some.x_t.data(), E));
    for (std::size_t e = 0; e < E; ++e) {
      const std::size_t j = exact_rows[e];
      scale[j] = some_scale[e];
      std::copy_n(some_sums.begin() + static_cast<std::ptrdiff_t>(e * columns), columns,
                  sums.begin() + static_cast<std::ptrdiff_t>(j * columns));
    }
  }
  WorkLedger::done(plan.control, static_cast<double>(R) * work);
  return {points_used, exact_rows.size()};
}

}  // namespace ecekde::detail
