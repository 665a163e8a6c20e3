#include "core/score_tree.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <utility>

#include "core/messages.hpp"

namespace ecekde::detail {

namespace {

constexpr std::size_t kTerms = ScoreTree::kOrder + 1;  // Taylor coefficients per sigma order
constexpr std::size_t kRowsPerTask = 64;
// Rows walk the tree in groups of up to kGroupRows whose largest |tau| is at most kGroupSpread times their
// smallest plus kGroupSlack.
constexpr std::size_t kGroupRows = 32;
constexpr double kGroupSpread = 1.25;
constexpr double kGroupSlack = 1;

// kLargestU[t] is the largest U = ds |tau| at which the series cut after t terms (order t - 1) still errs
// by at most the bound that kOrder gives at kMaxScoreTerm (score_tree.hpp): e^{2(U + W)} (U^t / t! + W^2 / 2)
// <= 1.5e-16 with W = kMaxSigmaTerm. A node far from the rows' scores relative to its width (small U)
// needs few terms: about 8 below U = 0.01, 15 below 0.5.
const std::array<double, kTerms + 1> kLargestU = [] {
  std::array<double, kTerms + 1> largest{};
  const double w = ScoreTree::kMaxSigmaTerm;
  for (std::size_t t = 1; t <= kTerms; ++t) {
    auto error = [&](double u) {
      double term = 1;
      for (std::size_t a = 1; a <= t; ++a) term *= u / static_cast<double>(a);
      return std::exp(2 * (u + w)) * (term + w * w / 2);
    };
    double lo = 0, hi = ScoreTree::kMaxScoreTerm;
    for (int i = 0; i < 100; ++i) (error((lo + hi) / 2) <= 1.5e-16 ? lo : hi) = (lo + hi) / 2;
    largest[t] = t == kTerms ? ScoreTree::kMaxScoreTerm : lo;
  }
  return largest;
}();

// 1 / a, so that the moments' Taylor terms need no division.
constexpr std::array<double, kTerms> kInverse = [] {
  std::array<double, kTerms> inv{};
  for (std::size_t a = 1; a < kTerms; ++a) inv[a] = 1.0 / static_cast<double>(a);
  return inv;
}();

double mid(double lo, double hi) { return lo + 0.5 * (hi - lo); }

// Whether a request's moments may be formed with subnormal results flushed to zero (FlushSubnormals), at
// slope q / h. A flushed value is below 2^-1022 of its node's scale, and a walk multiplies a moment by at
// most |tau|^kOrder: every row's |tau| is at most q |log kLogFloor| / h, and the interpolation's points lie
// at most 7 times as far out (score_grid.cpp). Flushing is taken where that factor times 2^-1022 stays
// below 2^-200, far under a double's rounding: for h >= 6e-7 at q = 2.
bool flushing_is_harmless(double slope) {
  const double tau = 8 * slope * -std::log(kLogFloor);
  return ScoreTree::kOrder * std::log2(std::max(tau, 1.0)) <= 1022 - 200;
}

// std::logb(x) for finite x > 0, read from the exponent bits where x is normal: the drop test asks for it
// at every node a row visits, and the library call took 3% of marginal's time at K = 1,000.
double binary_exponent(double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const auto field = static_cast<int>((bits >> 52) & 0x7ff);
  return field != 0 && field != 0x7ff ? field - 1023 : std::logb(x);
}


}  // namespace

// std::stable_sort's order, by a least-significant-digit radix sort of the scores' bits (a problem's centres
// and rows are sorted again at every bandwidth; at K = 1,000 the comparison sort took 8% of marginal's tree
// walks).
std::vector<std::uint32_t> score_order(std::span<const double> score) {
  constexpr int kDigit = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigit;
  const std::size_t n = score.size();
  std::vector<std::uint64_t> key(n);
  std::vector<std::uint32_t> order(n);
  bool in_order = true;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = score[i] == 0 ? 0.0 : score[i];  // -0 sorts with +0, as compared
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key[i] = bits >> 63 ? ~bits : bits | (std::uint64_t{1} << 63);  // unsigned order = numeric order
    order[i] = static_cast<std::uint32_t>(i);
    in_order = in_order && (i == 0 || key[i] >= key[i - 1]);
  }
  // Keys already in order (centres placed in a tree's order, and their rows by L1 - L2 mostly): the sort
  // would leave every position where it is.
  if (in_order) return order;
  std::vector<std::uint64_t> next_key(n);
  std::vector<std::uint32_t> next(n);
  std::vector<std::size_t> start(kBuckets);
  for (int shift = 0; shift < 64; shift += kDigit) {
    std::fill(start.begin(), start.end(), 0);
    for (std::uint64_t k : key) ++start[(k >> shift) & (kBuckets - 1)];
    if (*std::max_element(start.begin(), start.end()) == n) continue;  // every key has this digit
    std::size_t total = 0;
    for (std::size_t& s : start) total += std::exchange(s, total);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = start[(key[i] >> shift) & (kBuckets - 1)]++;
      next[at] = order[i];
      next_key[at] = key[i];
    }
    order.swap(next);
    key.swap(next_key);
  }
  return order;
}

ScoreTree::ScoreTree(const KernelPoints& centres, std::size_t leaf) : centres_(centres), leaf_(leaf) {
  ECEKDE_ASSERT(centres.dim == 2);
  const std::size_t n = centres.n;
  ECEKDE_ASSERT(n < (std::size_t{1} << 31));
  order_ = score_order({centres.x_t.data(), n});
  place();
  if (n > 0) build(0, static_cast<std::uint32_t>(n));
}

ScoreTree::ScoreTree(const KernelPoints& centres, Skeleton skeleton, std::size_t leaf)
    : centres_(centres), leaf_(leaf), order_(std::move(skeleton.order)), nodes_(std::move(skeleton.nodes)) {
  ECEKDE_ASSERT(centres.dim == 2 && order_.size() == centres.n);
  place();
}

void ScoreTree::place() {
  const std::size_t n = centres_.n;
  position_.resize(n);
  sr_.resize(2 * n);
  g_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    position_[order_[k]] = static_cast<std::uint32_t>(k);
    sr_[k] = centres_.x(order_[k], 0);
    sr_[n + k] = centres_.x(order_[k], 1);
    g_[k] = sr_[k] + sr_[n + k];
    sigma_error_ = std::max(sigma_error_, std::fabs(g_[k] - 1));
  }
}

// Where to split the sorted centres [begin, end): at the position that minimises the children's count
// times width, summed, with each child holding at least a share kMinSplitShare of the centres (ties: the
// position nearest the middle). A row may expand a node whose width times its |tau| is small, so a dense
// cluster of scores is best kept apart from the sparse tail: at K = 1,000 nearly all of a class's scores
// lie below 10^-3 and a few spread up to 1, and count-halving put a slice of the tail into every node on
// the way to the top leaf, so that each row walked the whole depth. The share bounds the depth at
// log(n / leaf) / log(1 / (1 - kMinSplitShare)).
std::uint32_t ScoreTree::split_point(std::uint32_t begin, std::uint32_t end) const {
  const std::uint32_t count = end - begin;
  const auto least = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(kMinSplitShare * count));
  const std::uint32_t middle = begin + count / 2;
  std::uint32_t best = middle;
  double best_cost = std::numeric_limits<double>::infinity();
  const auto off = [&](std::uint32_t at) { return at > middle ? at - middle : middle - at; };
  for (std::uint32_t k = begin + least; k + least <= end; ++k) {
    const double cost = static_cast<double>(k - begin) * (sr_[k - 1] - sr_[begin]) +
                        static_cast<double>(end - k) * (sr_[end - 1] - sr_[k]);
    if (cost < best_cost || (cost == best_cost && off(k) < off(best))) {
      best_cost = cost;
      best = k;
    }
  }
  return best;
}

std::int32_t ScoreTree::build(std::uint32_t begin, std::uint32_t end) {
  Node node{begin, end};
  if (end - begin > leaf_) {
    const std::uint32_t split = split_point(begin, end);
    node.left = build(begin, split);
    node.right = build(split, end);
  }
  node.s_lo = sr_[begin];
  node.s_hi = sr_[end - 1];
  const auto [g_lo, g_hi] = std::minmax_element(g_.begin() + begin, g_.begin() + end);
  node.g_lo = *g_lo;
  node.g_hi = *g_hi;
  nodes_.push_back(node);
  return static_cast<std::int32_t>(nodes_.size() - 1);
}

std::vector<std::uint32_t> ScoreTree::row_order(const KernelPoints& rows, std::span<const std::size_t> self) const {
  return self.empty() ? order_ : score_order({rows.x_t.data(), rows.n});
}

void ScoreTree::sums(const KernelPoints& rows, std::span<const std::size_t> self, const KernelSumRequest& request,
                     const SweepPlan& plan, std::span<double> scale, std::span<double> sums,
                     std::span<const std::uint32_t> order) const {
  ECEKDE_ASSERT(plan.kernels != nullptr);
  walk(expand(request, *plan.kernels, true), rows, self, request, plan, scale, sums, order);
}

ScoreTree::Expansion ScoreTree::expand(const KernelSumRequest& request, const TileKernels& kern, bool sigma) const {
  const std::size_t n = g_.size(), columns = request.depth + 1;
  ECEKDE_ASSERT(request.offsets.size() == n && request.vt.size() == request.depth * n);
  const double q = request.power;
  const FlushSubnormals flush(flushing_is_harmless(q * request.inv_h));
  // The centres' exponents q a_i and payloads in sorted order (column 0: the weights themselves).
  Expansion mom;
  mom.columns = columns;
  mom.series = sigma ? 2 : 1;
  const std::size_t rows = mom.series * columns;  // of a node's moments
  std::vector<double>& qa = mom.qa;
  std::vector<double>& v = mom.v;
  qa.resize(n);
  v.assign(columns * n, 1.0);
  for (std::size_t k = 0; k < n; ++k) {
    qa[k] = q * request.offsets[order_[k]];
    for (std::size_t l = 1; l < columns; ++l) v[l * n + k] = request.vt[(l - 1) * n + order_[k]];
  }

  // Moments, children before parents, each node's a small matrix product with the sweep's kernels (a
  // node's moments are rows [column][b], kTerms long): a leaf's payloads V and, where formed, V (sigma -
  // g0), one row each, times its centres' Taylor terms; a parent's, its children's moments times the
  // triangular matrix that moves a series to the parent's centre.
  mom.scale.resize(nodes_.size());
  mom.m.assign(nodes_.size() * rows * kTerms, 0.0);
  mom.drop_base.resize(nodes_.size());
  std::vector<double> terms(leaf_ * kTerms), payloads(rows * leaf_), moved(rows * kTerms);
  // The shift's matrix, entry (k, a) = factor ds^(a-k) / (a-k)! for a >= k and 0 below, is Toeplitz: with
  // the child's moments in reverse order of k (row k' = kTerms - 1 - k), entry (k', a) is
  // shift[k' + a] for shift = kTerms - 1 zeros and then the powers, a matrix read with a row stride of 1.
  std::vector<double> shift(2 * kTerms - 1, 0.0);
  double* const powers_of_ds = shift.data() + kTerms - 1;
  std::vector<double> d(leaf_);
  for (std::size_t id = 0; id < nodes_.size(); ++id) {
    const Node& nd = nodes_[id];
    const double s0 = mid(nd.s_lo, nd.s_hi), g0 = mid(nd.g_lo, nd.g_hi);
    if (nd.left < 0) {
      const std::size_t count = nd.end - nd.begin;
      const double A = *std::max_element(qa.begin() + nd.begin, qa.begin() + nd.end);
      mom.scale[id] = A;
      // terms[u * kTerms + a] = exp(q a_k - A) (s_k - s0)^a / a! for centre k = begin + u: each centre's
      // chain of products, the centres' chains side by side.
      std::copy_n(qa.begin() + nd.begin, count, d.begin());
      kern.exp_shifted(d.data(), count, A);
      for (std::size_t u = 0; u < count; ++u) terms[u * kTerms] = d[u];
      for (std::size_t u = 0; u < count; ++u) d[u] = sr_[nd.begin + u] - s0;
      for (std::size_t a = 1; a < kTerms; ++a)
        for (std::size_t u = 0; u < count; ++u) terms[u * kTerms + a] = terms[u * kTerms + a - 1] * d[u] * kInverse[a];
      for (std::size_t l = 0; l < columns; ++l)
        for (std::size_t u = 0; u < count; ++u) {
          const std::size_t k = nd.begin + u;
          payloads[mom.series * l * count + u] = v[l * n + k];
          if (sigma) payloads[(2 * l + 1) * count + u] = v[l * n + k] * (g_[k] - g0);
        }
      kern.dot(payloads.data(), count, terms.data(), kTerms, rows, kTerms, count, mom.at(id, 0), kTerms);
    } else {
      const double A = std::max(mom.scale[static_cast<std::size_t>(nd.left)], mom.scale[static_cast<std::size_t>(nd.right)]);
      mom.scale[id] = A;
      for (const std::int32_t child : {nd.left, nd.right}) {
        const auto ch = static_cast<std::size_t>(child);
        const Node& cn = nodes_[ch];
        const double ds = mid(cn.s_lo, cn.s_hi) - s0, dg = mid(cn.g_lo, cn.g_hi) - g0;
        powers_of_ds[0] = std::exp(mom.scale[ch] - A);
        for (std::size_t t = 1; t < kTerms; ++t) powers_of_ds[t] = powers_of_ds[t - 1] * ds * kInverse[t];
        // The sigma series moves as its own plus dg times the score series: (sigma - g0) = (sigma - g1) + dg.
        // Both go in reverse order of k.
        for (std::size_t l = 0; l < columns; ++l) {
          const double* C = mom.at(ch, l);
          double *score = moved.data() + mom.series * l * kTerms + kTerms - 1, *sigma_series = score + kTerms;
          for (std::size_t k = 0; k < kTerms; ++k) {
            score[-static_cast<std::ptrdiff_t>(k)] = C[k];
            if (sigma) sigma_series[-static_cast<std::ptrdiff_t>(k)] = C[kTerms + k] + C[k] * dg;
          }
        }
        // The matrix is upper triangular: output a takes k <= a only (k' >= kTerms - 1 - a), so the outputs
        // go in blocks of 8, each with the k' from its last output's first on (the zeros still inside a block
        // add nothing).
        for (std::size_t a0 = 0; a0 < kTerms; a0 += 8) {
          const std::size_t width = std::min<std::size_t>(8, kTerms - a0), first = kTerms - a0 - width;
          kern.dot_add(moved.data() + first, kTerms, shift.data() + first + a0, 1, rows, width, a0 + width,
                       mom.at(id, 0) + a0, kTerms);
        }
      }
    }
    mom.drop_base[id] = mom.scale[id] + std::log(mom.at(id, 0)[0]);
  }
  return mom;
}

void ScoreTree::walk(const Expansion& mom, const KernelPoints& rows, std::span<const std::size_t> self,
                     const KernelSumRequest& request, const SweepPlan& plan, std::span<double> scale,
                     std::span<double> sums, std::span<const std::uint32_t> order) const {
  const std::size_t n = g_.size(), R = rows.n, columns = mom.columns;
  ECEKDE_ASSERT(rows.dim == 2 && columns == request.depth + 1);
  ECEKDE_ASSERT(self.empty() ? R == n : self.size() == R);
  ECEKDE_ASSERT(scale.size() == R && sums.size() == R * columns);
  const double q = request.power;
  const double log_share = std::log(kDroppedShare);
  const TileKernels& kern = *plan.kernels;
  const std::vector<double>& qa = mom.qa;
  const std::vector<double>& v = mom.v;
  const std::vector<double>& drop_base = mom.drop_base;

  // Rows in order of score, so that neighbouring rows walk the same nodes, in groups.
  std::vector<std::uint32_t> own_order;
  if (order.empty()) own_order = this->row_order(rows, self);
  const std::span<const std::uint32_t> row_order = order.empty() ? std::span<const std::uint32_t>(own_order) : order;
  ECEKDE_ASSERT(row_order.size() == R);
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  // Split across ranks, each takes a share of the tasks (runs of rows in score order) and the sums are
  // combined: each row's from the one rank that computed it.
  const Share mine = share_of((R + kRowsPerTask - 1) / kRowsPerTask, plan.communicator);
  if (plan.communicator) {
    std::fill(scale.begin(), scale.end(), 0.0);
    std::fill(sums.begin(), sums.end(), 0.0);
  }
  const double work = row_work(plan, 2, n) * request.pair_work;
  const double counted = plan.communicator && mine.size() ? static_cast<double>(R) / static_cast<double>(std::min(R, mine.end * kRowsPerTask) - mine.begin * kRowsPerTask) : 1.0;
  WorkLedger::start(plan.control, static_cast<double>(R) * work);
  parallel_for(
      mine.size(), plan.threads,
      [&](std::size_t own_task, int) {
        const std::size_t task = mine.begin + own_task;
        const std::size_t first = task * kRowsPerTask, r_end = std::min(R, (task + 1) * kRowsPerTask);
        // A group of rows walks the tree together (its layout: row g's values at [g], a node's series
        // and sums for column l at [l * G + g]).
        std::array<std::size_t, kGroupRows> row_of{}, own_pos{};
        std::array<double, kGroupRows> tau{}, ups{}, m{}, dropped{}, bound{}, factor{}, rescale{}, own_term{};
        std::array<bool, kGroupRows> raised{};
        std::array<double, 2 * kGroupRows> logs{};
        std::array<double, kTerms * kGroupRows> powers{};  // powers[a * G + g] = tau_g^a
        std::vector<double> acc(kGroupRows * columns), series(mom.series * columns * kGroupRows), vals(columns * kGroupRows),
            expo(kGroupRows * leaf_);
        std::vector<std::int32_t> stack;
        auto tau_of = [&](std::size_t t) {
          const double* log_row = rows.log_x.data() + 2 * row_order[t];
          return q * (log_row[0] - log_row[1]) * request.inv_h;
        };
        for (std::size_t t0 = first; t0 < r_end;) {
          // The group: consecutive rows (in score order, so in order of tau) while the largest |tau| stays
          // within kGroupSpread of the smallest (plus kGroupSlack), so that the tests, which take the
          // group's largest |tau|, ask little more of a row than its own would.
          std::size_t G = 1;
          for (double lo = std::fabs(tau_of(t0)), hi = lo; t0 + G < r_end && G < kGroupRows; ++G) {
            const double a = std::fabs(tau_of(t0 + G));
            if (std::max(hi, a) > kGroupSpread * std::min(lo, a) + kGroupSlack) break;
            lo = std::min(lo, a);
            hi = std::max(hi, a);
          }
          double tau_max = 0, ups_max = 0;
          for (std::size_t g = 0; g < G; ++g) {
            const std::size_t row = row_order[t0 + g];
            row_of[g] = row;
            const double* log_row = rows.log_x.data() + 2 * row;
            logs[2 * g] = log_row[0];
            logs[2 * g + 1] = log_row[1];
            tau[g] = tau_of(t0 + g);
            ups[g] = q * log_row[1] * request.inv_h;
            tau_max = std::max(tau_max, std::fabs(tau[g]));
            ups_max = std::max(ups_max, std::fabs(ups[g]));
            const std::size_t own = self.empty() ? row : self[row];
            own_pos[g] = own < n ? position_[own] : none;
            m[g] = -std::numeric_limits<double>::infinity();
            dropped[g] = 0;
            powers[g] = 1;
          }
          // Each row's powers are the same chain of products as alone; the rows' chains run side by side.
          for (std::size_t a = 1; a < kTerms; ++a)
            for (std::size_t g = 0; g < G; ++g) powers[a * G + g] = powers[(a - 1) * G + g] * tau[g];
          std::fill_n(acc.begin(), G * columns, 0.0);
          const double s_mid = rows.x(row_of[G / 2], 0);

          // Moves row g's running maximum to at least `top` (sums relative to exp(m[g])); rescale[g] is
          // then the exponent that brings the row's sums so far to the new maximum (apply_rescale applies it).
          auto raise_to = [&](std::size_t g, double top) {
            const double next = std::max(m[g], top);
            raised[g] = next > m[g];
            rescale[g] = raised[g] ? m[g] - next : 0;
            m[g] = next;
          };
          auto apply_rescale = [&] {
            kern.exp_shifted(rescale.data(), G, 0);
            for (std::size_t g = 0; g < G; ++g) {
              if (!raised[g]) continue;
              for (std::size_t l = 0; l < columns; ++l) acc[g * columns + l] *= rescale[g];
              dropped[g] *= rescale[g];
            }
          };
          auto holds = [&](const Node& nd, std::size_t g) { return own_pos[g] >= nd.begin && own_pos[g] < nd.end; };
          // Drops the node for every row of the group if each row's bound allows it.
          auto drop = [&](std::size_t id) {
            const Node& nd = nodes_[id];
            for (std::size_t g = 0; g < G; ++g) {
              const double sum = acc[g * columns];
              if (holds(nd, g) || !(sum > 0)) return false;
              // Below e^-700 the bound is raised to e^-700, which keeps it a bound (the kernels' exp flushes
              // below). The exponentials are only taken once every row's bound can pass: sum < 2^(logb(sum) + 1).
              const double top = drop_base[id] + std::max(tau[g] * nd.s_lo, tau[g] * nd.s_hi) +
                                 std::max(ups[g] * nd.g_lo, ups[g] * nd.g_hi);
              if (!(top - m[g] <= log_share + (binary_exponent(sum) + 1) * std::numbers::ln2)) return false;
              bound[g] = std::max(top - m[g], -700.0);
            }
            kern.exp_shifted(bound.data(), G, 0);
            for (std::size_t g = 0; g < G; ++g)
              if (!(dropped[g] + bound[g] <= kDroppedShare * acc[g * columns])) return false;
            for (std::size_t g = 0; g < G; ++g) dropped[g] += bound[g];
            return true;
          };
          // Adds node id's two series to every row's sums: a product of the node's moments with the rows'
          // powers of tau. Where the node holds a row's own centre, that centre's exact term is subtracted,
          // unless it is more than kOwnShare of the node's sum: then nothing is added and the node is
          // descended instead (returns false).
          auto add_series = [&](std::size_t id, double u) {
            const Node& nd = nodes_[id];
            const double s0 = mid(nd.s_lo, nd.s_hi), g0 = mid(nd.g_lo, nd.g_hi), A = mom.scale[id];
            std::size_t terms = 1;
            while (kLargestU[terms] < u) ++terms;
            kern.dot(mom.at(id, 0), kTerms, powers.data(), G, mom.series * columns, G, terms, series.data(), G);
            if (mom.series == 1) std::copy_n(series.begin(), columns * G, vals.begin());
            else
              for (std::size_t l = 0; l < columns; ++l)
                for (std::size_t g = 0; g < G; ++g)
                  vals[l * G + g] = series[2 * l * G + g] + ups[g] * series[(2 * l + 1) * G + g];
            for (std::size_t g = 0; g < G; ++g) {
              if (!holds(nd, g)) continue;
              const std::size_t k = own_pos[g];
              own_term[g] = std::exp(qa[k] - A + tau[g] * (sr_[k] - s0) + ups[g] * (g_[k] - g0));
              if (!(own_term[g] <= kOwnShare * vals[g])) return false;
            }
            for (std::size_t g = 0; g < G; ++g) {
              if (holds(nd, g))
                for (std::size_t l = 0; l < columns; ++l) vals[l * G + g] -= v[l * n + own_pos[g]] * own_term[g];
              const double top = A + tau[g] * s0 + ups[g] * g0;
              raise_to(g, top);
              factor[g] = top - m[g];
            }
            apply_rescale();
            kern.exp_shifted(factor.data(), G, 0);
            for (std::size_t g = 0; g < G; ++g)
              for (std::size_t l = 0; l < columns; ++l) acc[g * columns + l] += factor[g] * vals[l * G + g];
            return true;
          };
          // Sums a leaf pair by pair, with the sweep's kernels: the group's scores, each row's relative to
          // its maximum, their exponentials, and the rows' weights times the payload (column 0: ones).
          auto add_pairs = [&](const Node& nd) {
            const std::size_t count = nd.end - nd.begin;
            constexpr double none_left = -std::numeric_limits<double>::infinity();
            kern.dot(logs.data(), 2, sr_.data() + nd.begin, n, G, count, 2, expo.data(), count);
            for (std::size_t g = 0; g < G; ++g) {
              double* e = expo.data() + g * count;
              const std::size_t skip = holds(nd, g) ? own_pos[g] - nd.begin : count;
              const double top = kern.affine_max(e, e, qa.data() + nd.begin, q * request.inv_h, count, skip);
              raise_to(g, top);
              if (top == none_left) {  // the row's own centre alone
                std::fill_n(e, count, none_left);
                continue;
              }
              for (std::size_t c = 0; c < count; ++c) e[c] -= m[g];
              if (skip < count) e[skip] = none_left;
            }
            apply_rescale();
            kern.exp_shifted(expo.data(), G * count, 0);
            kern.row_dots(expo.data(), count, G, count, v.data() + nd.begin, n, columns, acc.data());
          };
          stack.assign(1, static_cast<std::int32_t>(nodes_.size() - 1));
          while (!stack.empty()) {
            const auto id = static_cast<std::size_t>(stack.back());
            stack.pop_back();
            const Node& nd = nodes_[id];
            if (drop(id)) continue;  // checked first: it is cheaper than a series
            const double u = 0.5 * (nd.s_hi - nd.s_lo) * tau_max;
            // Without the sigma series, only where its term is exactly zero.
            const bool sigma_ok = mom.series == 2 ? 0.5 * (nd.g_hi - nd.g_lo) * ups_max <= kMaxSigmaTerm
                                                  : nd.g_hi == nd.g_lo || ups_max == 0;
            if (u <= kMaxScoreTerm && sigma_ok && add_series(id, u))
              continue;
            if (nd.left < 0) {
              add_pairs(nd);
              continue;
            }
            // Visit the child nearer the group's scores first, so that the rows' sums are mostly known
            // before the far nodes are weighed for dropping.
            const bool left_near = s_mid < nodes_[static_cast<std::size_t>(nd.right)].s_lo;
            stack.push_back(left_near ? nd.right : nd.left);
            stack.push_back(left_near ? nd.left : nd.right);
          }
          for (std::size_t g = 0; g < G; ++g) {
            scale[row_of[g]] = m[g];
            std::copy_n(acc.begin() + static_cast<std::ptrdiff_t>(g * columns), columns,
                        sums.begin() + static_cast<std::ptrdiff_t>(row_of[g] * columns));
          }
          t0 += G;
        }
        WorkLedger::done(plan.control, static_cast<double>(r_end - first) * work * counted);
      },
      plan.control);
  combine_shares(plan.communicator, scale);
  combine_shares(plan.communicator, sums);
}

}  // namespace ecekde::detail
