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
constexpr std::size_t kLanes = 5;  // partial sums of a series
constexpr std::size_t kGroup = 4;  // a leaf's centres whose Taylor terms are formed side by side
constexpr std::size_t kPowerChains = 4;  // rows whose powers of tau are formed side by side
static_assert(kTerms % kLanes == 0);

// Moments of one request: per node, its scale A (the largest q a_i) and, per column, the coefficients
// M_a0 then M_a1 (a = 0..kOrder), laid out [node][column][b][a].
struct Moments {
  std::size_t columns = 0;
  std::vector<double> scale, m;
  double* at(std::size_t node, std::size_t column) { return m.data() + (node * columns + column) * 2 * kTerms; }
  const double* at(std::size_t node, std::size_t column) const {
    return m.data() + (node * columns + column) * 2 * kTerms;
  }
};

// 1 / a, so that the moments' Taylor terms need no division.
constexpr std::array<double, kTerms> kInverse = [] {
  std::array<double, kTerms> inv{};
  for (std::size_t a = 1; a < kTerms; ++a) inv[a] = 1.0 / static_cast<double>(a);
  return inv;
}();

double mid(double lo, double hi) { return lo + 0.5 * (hi - lo); }

// std::logb(x) for finite x > 0, read from the exponent bits where x is normal: the drop test asks for it
// at every node a row visits, and the library call took 3% of marginal's time at K = 1,000.
double binary_exponent(double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const auto field = static_cast<int>((bits >> 52) & 0x7ff);
  return field != 0 && field != 0x7ff ? field - 1023 : std::logb(x);
}

// Positions 0..n-1 in increasing order of their scores, ties in increasing position: std::stable_sort's
// order, by a least-significant-digit radix sort of the scores' bits (a problem's centres and rows are
// sorted again at every bandwidth; at K = 1,000 the comparison sort took 8% of marginal's tree walks).
std::vector<std::uint32_t> score_order(std::span<const double> score) {
  constexpr int kDigit = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kDigit;
  const std::size_t n = score.size();
  std::vector<std::uint64_t> key(n), next_key(n);
  std::vector<std::uint32_t> order(n), next(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = score[i] == 0 ? 0.0 : score[i];  // -0 sorts with +0, as compared
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key[i] = bits >> 63 ? ~bits : bits | (std::uint64_t{1} << 63);  // unsigned order = numeric order
    order[i] = static_cast<std::uint32_t>(i);
  }
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

}  // namespace

ScoreTree::ScoreTree(const KernelPoints& centres) : centres_(centres) {
  ECEKDE_ASSERT(centres.dim == 2);
  const std::size_t n = centres.n;
  ECEKDE_ASSERT(n < (std::size_t{1} << 31));
  order_ = score_order({centres.x_t.data(), n});
  position_.resize(n);
  sr_.resize(2 * n);
  g_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    position_[order_[k]] = static_cast<std::uint32_t>(k);
    sr_[k] = centres.x(order_[k], 0);
    sr_[n + k] = centres.x(order_[k], 1);
    g_[k] = sr_[k] + sr_[n + k];
  }
  if (n > 0) build(0, static_cast<std::uint32_t>(n));
}

std::int32_t ScoreTree::build(std::uint32_t begin, std::uint32_t end) {
  Node node{begin, end};
  if (end - begin > kLeaf) {
    const std::uint32_t half = begin + (end - begin) / 2;
    node.left = build(begin, half);
    node.right = build(half, end);
  }
  node.s_lo = sr_[begin];
  node.s_hi = sr_[end - 1];
  const auto [g_lo, g_hi] = std::minmax_element(g_.begin() + begin, g_.begin() + end);
  node.g_lo = *g_lo;
  node.g_hi = *g_hi;
  nodes_.push_back(node);
  return static_cast<std::int32_t>(nodes_.size() - 1);
}

void ScoreTree::sums(const KernelPoints& rows, std::span<const std::size_t> self, const KernelSumRequest& request,
                     const SweepPlan& plan, std::span<double> scale, std::span<double> sums) const {
  const std::size_t n = g_.size(), R = rows.n, columns = request.depth + 1;
  ECEKDE_ASSERT(rows.dim == 2 && request.offsets.size() == n && request.vt.size() == request.depth * n);
  ECEKDE_ASSERT(self.empty() ? R == n : self.size() == R);
  ECEKDE_ASSERT(scale.size() == R && sums.size() == R * columns);
  const double q = request.power;
  const double log_share = std::log(kDroppedShare);
  ECEKDE_ASSERT(plan.kernels != nullptr);
  const TileKernels& kern = *plan.kernels;

  // The centres' exponents q a_i and payloads in sorted order (column 0: the weights themselves).
  std::vector<double> qa(n), v(columns * n, 1.0);
  for (std::size_t k = 0; k < n; ++k) {
    qa[k] = q * request.offsets[order_[k]];
    for (std::size_t l = 1; l < columns; ++l) v[l * n + k] = request.vt[(l - 1) * n + order_[k]];
  }

  // Moments, children before parents: leaves from their centres, parents by shifting their children's.
  Moments mom;
  mom.columns = columns;
  mom.scale.resize(nodes_.size());
  mom.m.assign(nodes_.size() * columns * 2 * kTerms, 0.0);
  // Per node, A + log M_00: the drop test's bound less the row's part (added in the test's order).
  std::vector<double> drop_base(nodes_.size());
  std::array<std::array<double, kTerms>, kGroup> term{};
  for (std::size_t id = 0; id < nodes_.size(); ++id) {
    const Node& nd = nodes_[id];
    const double s0 = mid(nd.s_lo, nd.s_hi), g0 = mid(nd.g_lo, nd.g_hi);
    if (nd.left < 0) {
      const double A = *std::max_element(qa.begin() + nd.begin, qa.begin() + nd.end);
      mom.scale[id] = A;
      for (std::uint32_t k0 = nd.begin; k0 < nd.end; k0 += kGroup) {
        // term[u][a] = exp(q a_k - A) (s_k - s0)^a / a! for centre k = k0 + u: the recurrences of a group
        // of centres side by side, as independent chains, each centre's the same operations as alone (lanes
        // past a leaf's end are computed and not used).
        const std::size_t count = std::min<std::size_t>(kGroup, nd.end - k0);
        std::array<double, kGroup> d{};
        for (std::size_t u = 0; u < count; ++u) {
          d[u] = sr_[k0 + u] - s0;
          term[u][0] = std::exp(qa[k0 + u] - A);
        }
        for (std::size_t a = 1; a < kTerms; ++a)
          for (std::size_t u = 0; u < kGroup; ++u) term[u][a] = term[u][a - 1] * d[u] * kInverse[a];
        for (std::size_t u = 0; u < count; ++u) {
          const std::size_t k = k0 + u;
          const double e = g_[k] - g0;
          for (std::size_t l = 0; l < columns; ++l) {
            double* M = mom.at(id, l);
            const double t = v[l * n + k], te = t * e;
            for (std::size_t a = 0; a < kTerms; ++a) {
              M[a] += t * term[u][a];
              M[kTerms + a] += te * term[u][a];
            }
          }
        }
      }
    } else {
      const double A = std::max(mom.scale[static_cast<std::size_t>(nd.left)], mom.scale[static_cast<std::size_t>(nd.right)]);
      mom.scale[id] = A;
      for (const std::int32_t child : {nd.left, nd.right}) {
        const auto ch = static_cast<std::size_t>(child);
        const Node& cn = nodes_[ch];
        const double factor = std::exp(mom.scale[ch] - A);
        const double ds = mid(cn.s_lo, cn.s_hi) - s0, dg = mid(cn.g_lo, cn.g_hi) - g0;
        std::array<double, kTerms> shift;  // ds^t / t!
        shift[0] = factor;
        for (std::size_t t = 1; t < kTerms; ++t) shift[t] = shift[t - 1] * ds / static_cast<double>(t);
        for (std::size_t l = 0; l < columns; ++l) {
          const double* C = mom.at(ch, l);
          double* M = mom.at(id, l);
          // M[a] += sum_{k <= a} C[k] shift[a - k] (and the sigma series likewise), each sum in increasing
          // k as a running total per a: the totals of all a advance together, one k at a time, so the
          // products need not wait for each other.
          std::array<double, kTerms> m0{}, m1{}, c1;
          for (std::size_t k = 0; k < kTerms; ++k) c1[k] = C[kTerms + k] + C[k] * dg;
          for (std::size_t k = 0; k < kTerms; ++k)
            for (std::size_t a = k; a < kTerms; ++a) {
              m0[a] += C[k] * shift[a - k];
              m1[a] += c1[k] * shift[a - k];
            }
          for (std::size_t a = 0; a < kTerms; ++a) {
            M[a] += m0[a];
            M[kTerms + a] += m1[a];
          }
        }
      }
    }
    drop_base[id] = mom.scale[id] + std::log(mom.at(id, 0)[0]);
  }

  // Rows in order of score, so that neighbouring rows of a task walk the same nodes (cache locality).
  std::vector<std::uint32_t> row_order = order_;  // rows that are the centres: already sorted
  if (!self.empty()) row_order = score_order({rows.x_t.data(), R});
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
        std::vector<std::int32_t> stack;
        std::vector<double> acc(columns), vals(columns), expo(kLeaf);
        // powers[u][a] = tau^a of the rows of a chain group, formed side by side: each row's powers are a
        // chain of dependent products, the same as alone, which the processor can now overlap.
        std::array<std::array<double, kTerms>, kPowerChains> powers;
        std::array<double, kPowerChains> taus{};
        const std::size_t first = task * kRowsPerTask, r_end = std::min(R, (task + 1) * kRowsPerTask);
        for (std::size_t t = first; t < r_end; ++t) {
          const std::size_t chain = (t - first) % kPowerChains;
          if (chain == 0) {
            for (std::size_t u = 0; u < kPowerChains && t + u < r_end; ++u) {
              const double* log_row = rows.log_x.data() + 2 * row_order[t + u];
              taus[u] = q * (log_row[0] - log_row[1]) * request.inv_h;
            }
            for (auto& power : powers) power[0] = 1;
            for (std::size_t a = 1; a < kTerms; ++a)
              for (std::size_t u = 0; u < kPowerChains; ++u) powers[u][a] = powers[u][a - 1] * taus[u];
          }
          const std::array<double, kTerms>& power = powers[chain];
          const std::size_t row = row_order[t];
          const double* log_row = rows.log_x.data() + 2 * row;
          const double L2 = log_row[1], sj = rows.x(row, 0);
          const double tau = taus[chain], ups = q * L2 * request.inv_h;
          const std::size_t own = self.empty() ? row : self[row];
          const std::size_t own_pos = own < n ? position_[own] : none;
          double m = -std::numeric_limits<double>::infinity(), dropped = 0;
          std::fill(acc.begin(), acc.end(), 0.0);
          auto raise_to = [&](double top) {  // keeps every sum relative to exp(m), m the largest scale seen
            if (top <= m) return;
            const double f = std::exp(m - top);
            for (double& a : acc) a *= f;
            dropped *= f;
            m = top;
          };
          // Adds node id's two series to the row's sums. Where the node holds the row's own centre, that
          // centre's exact term is subtracted, unless it is more than kOwnShare of the node's sum: then
          // nothing is added and the node is descended instead (returns false).
          auto add_series = [&](std::size_t id, bool holds_own) {
            const Node& nd = nodes_[id];
            const double s0 = mid(nd.s_lo, nd.s_hi), g0 = mid(nd.g_lo, nd.g_hi);
            for (std::size_t l = 0; l < columns; ++l) {  // the two series as dot products with tau^a
              const double* M = mom.at(id, l);
              double p0[kLanes] = {}, p1[kLanes] = {};  // independent partial sums, for speed
              for (std::size_t a = 0; a < kTerms; a += kLanes)
                for (std::size_t u = 0; u < kLanes; ++u) {
                  p0[u] += M[a + u] * power[a + u];
                  p1[u] += M[kTerms + a + u] * power[a + u];
                }
              double v0 = 0, v1 = 0;
              for (std::size_t u = 0; u < kLanes; ++u) {
                v0 += p0[u];
                v1 += p1[u];
              }
              vals[l] = v0 + ups * v1;
            }
            if (holds_own) {
              const double own_term =
                  std::exp(qa[own_pos] - mom.scale[id] + tau * (sr_[own_pos] - s0) + ups * (g_[own_pos] - g0));
              if (!(own_term <= kOwnShare * vals[0])) return false;
              for (std::size_t l = 0; l < columns; ++l) vals[l] -= v[l * n + own_pos] * own_term;
            }
            const double top = mom.scale[id] + tau * s0 + ups * g0;
            raise_to(top);
            const double f = std::exp(top - m);
            for (std::size_t l = 0; l < columns; ++l) acc[l] += f * vals[l];
            return true;
          };
          stack.assign(1, static_cast<std::int32_t>(nodes_.size() - 1));
          while (!stack.empty()) {
            const auto id = static_cast<std::size_t>(stack.back());
            stack.pop_back();
            const Node& nd = nodes_[id];
            const bool holds_own = own_pos >= nd.begin && own_pos < nd.end;
            // Drop the node if its whole weight is negligible (checked first: it is cheaper than a series).
            // Below e^-700 the bound is raised to e^-700, which keeps it a bound and std::exp on its fast path.
            // The exponential is only taken where the bound can pass: acc[0] < 2^(logb(acc[0]) + 1).
            if (!holds_own && acc[0] > 0) {
              const double top = drop_base[id] + std::max(tau * nd.s_lo, tau * nd.s_hi) +
                                 std::max(ups * nd.g_lo, ups * nd.g_hi);
              if (top - m <= log_share + (binary_exponent(acc[0]) + 1) * std::numbers::ln2) {
                const double bound = std::exp(std::max(top - m, -700.0));
                if (dropped + bound <= kDroppedShare * acc[0]) {
                  dropped += bound;
                  continue;
                }
              }
            }
            if (0.5 * (nd.s_hi - nd.s_lo) * std::fabs(tau) <= kMaxScoreTerm &&
                0.5 * (nd.g_hi - nd.g_lo) * std::fabs(ups) <= kMaxSigmaTerm && add_series(id, holds_own))
              continue;
            if (nd.left < 0) {  // pair by pair, with the sweep's kernels
              const std::size_t count = nd.end - nd.begin;
              const std::size_t skip = holds_own ? own_pos - nd.begin : count;
              kern.dot(log_row, 2, sr_.data() + nd.begin, n, 1, count, 2, expo.data(), kLeaf);
              const double top = kern.affine_max(expo.data(), expo.data(), qa.data() + nd.begin, q * request.inv_h,
                                                 count, skip);
              if (top == -std::numeric_limits<double>::infinity()) continue;
              raise_to(top);
              kern.exp_shifted(expo.data(), count, m);
              if (skip < count) expo[skip] = 0;
              acc[0] += kern.sum(expo.data(), count);
              kern.row_dots(expo.data(), 0, 1, count, v.data() + n + nd.begin, n, columns - 1, acc.data() + 1);
              continue;
            }
            // Visit the child nearer the row's score first, so that the row's sum is mostly known before
            // the far nodes are weighed for dropping.
            const bool left_near = sj < nodes_[static_cast<std::size_t>(nd.right)].s_lo;
            stack.push_back(left_near ? nd.right : nd.left);
            stack.push_back(left_near ? nd.left : nd.right);
          }
          scale[row] = m;
          std::copy(acc.begin(), acc.end(), sums.begin() + static_cast<std::ptrdiff_t>(row * columns));
        }
        WorkLedger::done(plan.control, static_cast<double>(r_end - first) * work * counted);
      },
      plan.control);
  combine_shares(plan.communicator, scale);
  combine_shares(plan.communicator, sums);
}

}  // namespace ecekde::detail
