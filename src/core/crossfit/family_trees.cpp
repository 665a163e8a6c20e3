// trees: the canonical pilot's nonparametric candidate (families.hpp). Boosted regression trees on the log
// probabilities, added to the logits of the parametric pilot kept before them (each fold's own), so that a
// miscalibration confined to a region of the simplex (a bump, a step in one class's probability, a ripple)
// is learnt where no parametric family follows it; where the parametric pilot already fits, the rounds
// stop early on rows of another fold and the candidate's held-out log-loss is not lower, so it is not kept.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>

#include "core/crossfit/families.hpp"
#include "core/crossfit/folds.hpp"
#include "core/crossfit/pilot_fit.hpp"
#include "core/distributed.hpp"
#include "core/parallel.hpp"
#include "core/ring.hpp"
#include "core/work_ledger.hpp"

namespace ecekde::detail {

namespace {

constexpr std::size_t kBins = 32;         // quantile bins of each feature
constexpr std::size_t kDepth = 3;         // splits from the root to a leaf (at most 8 leaves)
constexpr std::size_t kNodes = (std::size_t{2} << kDepth) - 1;
constexpr std::size_t kMinLeafRows = 20;  // fewer rows than this make no leaf
constexpr double kLeafRidge = 1.0;        // added to a leaf's curvature in its Newton step
constexpr double kLearningRate = 0.1;     // each tree's Newton steps shrunk by this
constexpr std::size_t kMaxRounds = 200;   // rounds of K trees (one per class)
constexpr double kGainMargin = 1e-9;      // relative: a later split must gain more by this to replace one
constexpr std::size_t kPatience = 10;     // rounds without a lower validation loss before the search stops

// Each row's features as bins, row-major n x K in sorted order: log f_c (floored at kFeatureFloor) cut at
// quantiles of every row's value on every rank (`rows` in all; no labels; tied values share a bin).
std::vector<std::uint8_t> binned_features(const LabelledPoints& lp, std::size_t rows, Communicator* ranks) {
  const std::size_t n = lp.points.n, K = lp.classes;
  std::vector<std::uint8_t> bins(n * K);
  std::vector<std::size_t> at;
  for (std::size_t q = 0; q < kBins; ++q) at.push_back(q * rows / kBins);  // the first is the least value
  std::vector<double> values(n), reordered;
  for (std::size_t c = 0; c < K; ++c) {
    for (std::size_t j = 0; j < n; ++j) values[j] = safe_log(lp.points.x(j, c), kFeatureFloor);
    reordered = values;
    const std::vector<double> quantiles = order_statistics(ranks, reordered, at);
    std::vector<double> cuts;  // bin b holds values at or above cuts[b - 1] and below cuts[b]
    for (std::size_t q = 1; q < kBins; ++q)
      if (quantiles[q] > (cuts.empty() ? quantiles[0] : cuts.back())) cuts.push_back(quantiles[q]);
    for (std::size_t j = 0; j < n; ++j)
      bins[j * K + c] =
          static_cast<std::uint8_t>(std::upper_bound(cuts.begin(), cuts.end(), values[j]) - cuts.begin());
  }
  return bins;
}

// One class's tree: a complete binary tree of kDepth levels (node i's children 2i + 1 and 2i + 2), a node
// split where `split` says so (a row goes left where its feature's bin is at most `cut`), and each leaf's
// step in the class's logit.
struct Tree {
  std::array<bool, kNodes> split{};
  std::array<std::uint16_t, kNodes> feature{};
  std::array<std::uint8_t, kNodes> cut{};
  std::array<double, kNodes> step{};

  std::size_t leaf(const std::uint8_t* bins) const {
    std::size_t node = 0;
    while (node < kNodes && split[node]) node = 2 * node + (bins[feature[node]] <= cut[node] ? 1 : 2);
    return node;
  }
};

struct Sums {
  double g = 0, h = 0, rows = 0;
  void add(const Sums& s) { g += s.g, h += s.h, rows += s.rows; }
  Sums minus(const Sums& s) const { return {g - s.g, h - s.h, rows - s.rows}; }
  double score() const { return g * g / (h + kLeafRidge); }
};

// Sums of every rank (ranks: null alone).
void sum_over_ranks(Communicator* ranks, std::span<Sums> sums) {
  if (!ranks) return;
  std::vector<double> flat(3 * sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i)
    flat[3 * i] = sums[i].g, flat[3 * i + 1] = sums[i].h, flat[3 * i + 2] = sums[i].rows;
  ranks->all_sum(flat);
  for (std::size_t i = 0; i < sums.size(); ++i) sums[i] = {flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]};
}

// One fold's boosting: every row's current logits (sorted order; the fold's parametric pilot's logarithms
// to begin with). Split over `ranks` (a ring: each rank its own rows), every sum is every rank's.
class Booster {
 public:
  Booster(const std::vector<std::uint8_t>& bins, const std::vector<int>& labels, std::size_t K,
          std::vector<double> logits, Communicator* ranks)
      : bins_(bins), labels_(labels), K_(K), logits_(std::move(logits)), ranks_(ranks) {}

  // One round learnt from `rows`: K trees, one per class, each a Newton step of the softmax log-loss, added
  // to the logits of the rows `apply` (those read later, `rows` among them).
  void round(const std::vector<std::size_t>& rows, const std::vector<std::size_t>& apply) {
    const std::size_t m = rows.size();
    gradient_.resize(m * K_);
    hessian_.resize(m * K_);
    std::vector<double> p(K_);
    for (std::size_t r = 0; r < m; ++r) {
      softmax(rows[r], p.data());
      for (std::size_t c = 0; c < K_; ++c) {
        const double target = static_cast<double>(labels_[rows[r]] == static_cast<int>(c));
        gradient_[r * K_ + c] = p[c] - target;
        hessian_[r * K_ + c] = std::max(p[c] * (1 - p[c]), 1e-16);
      }
    }
    for (std::size_t c = 0; c < K_; ++c) {
      const Tree tree = grow(rows, c);
      for (std::size_t i : apply) logits_[i * K_ + c] += tree.step[tree.leaf(&bins_[i * K_])];
    }
  }

  // The softmax log-loss summed over `rows` (every rank's).
  double loss(const std::vector<std::size_t>& rows) const {
    std::vector<double> terms(rows.size()), p(K_);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      softmax(rows[r], p.data());
      terms[r] = -std::log(std::max(p[static_cast<std::size_t>(labels_[rows[r]])], 1e-300));
    }
    return total_over_ranks(ranks_, terms);
  }

  void softmax(std::size_t i, double* p) const {
    const double* z = &logits_[i * K_];
    const double top = *std::max_element(z, z + K_);
    double sum = 0;
    for (std::size_t c = 0; c < K_; ++c) sum += p[c] = std::exp(z[c] - top);
    for (std::size_t c = 0; c < K_; ++c) p[c] /= sum;
  }

 private:
  // Class c's tree on `rows`, grown level by level: each node's histograms of gradient, curvature and rows
  // over every feature's bins, and its best split by the Newton gain (none where no split gains or a side
  // would hold fewer than kMinLeafRows rows). The first of equal gains is taken, in the order of features
  // and bins. Below the root only the child with fewer rows (every rank's) is summed from its rows, the
  // other is its parent's histograms less its sibling's: a third of the row passes saved, and those are
  // most of the trees' time (docs/benchmarks.md, "... the trees' histograms by subtraction").
  Tree grow(const std::vector<std::size_t>& rows, std::size_t c) {
    Tree tree;
    std::array<Sums, kNodes> total{};
    node_of_.assign(rows.size(), 0);
    for (std::size_t r = 0; r < rows.size(); ++r) total[0].add({gradient_[r * K_ + c], hessian_[r * K_ + c], 1});
    sum_over_ranks(ranks_, std::span(total).first(1));
    const std::size_t node_bins = K_ * kBins;
    for (std::size_t level = 0; level < kDepth; ++level) {
      const std::size_t first = (std::size_t{1} << level) - 1, width = std::size_t{1} << level;
      std::swap(parent_histogram_, histogram_);  // the level above's
      histogram_.assign(width * node_bins, Sums{});
      std::array<bool, kNodes> summed{};  // this level's nodes summed from their rows
      for (std::size_t node = first; node < first + width; ++node) {
        if (node == 0) {
          summed[node] = true;
          continue;
        }
        if (!tree.split[(node - 1) / 2]) continue;  // not a node of this tree
        const bool left = node % 2 == 1;
        const std::size_t sibling = left ? node + 1 : node - 1;
        summed[node] = left ? total[node].rows <= total[sibling].rows : total[node].rows < total[sibling].rows;
      }
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::size_t node = node_of_[r];
        if (node < first || !summed[node]) continue;  // a leaf above this level, or its sibling's difference
        Sums* h = &histogram_[(node - first) * node_bins];
        const std::uint8_t* b = &bins_[rows[r] * K_];
        const Sums s{gradient_[r * K_ + c], hessian_[r * K_ + c], 1};
        for (std::size_t f = 0; f < K_; ++f) h[f * kBins + b[f]].add(s);
      }
      sum_over_ranks(ranks_, histogram_);
      for (std::size_t node = std::max<std::size_t>(first, 1); node < first + width; ++node) {
        if (summed[node] || !tree.split[(node - 1) / 2]) continue;
        const std::size_t sibling = node % 2 == 1 ? node + 1 : node - 1;
        const Sums* above = &parent_histogram_[((node - 1) / 2 - (first - 1) / 2) * node_bins];
        const Sums* beside = &histogram_[(sibling - first) * node_bins];
        Sums* h = &histogram_[(node - first) * node_bins];
        for (std::size_t i = 0; i < node_bins; ++i) h[i] = above[i].minus(beside[i]);
      }
      bool any = false;
      for (std::size_t w = 0; w < width; ++w) {
        const std::size_t node = first + w;
        if (node > 0 && !tree.split[(node - 1) / 2]) continue;  // not a node of this tree
        double best = 0;
        for (std::size_t f = 0; f < K_; ++f) {
          const Sums* h = &histogram_[(w * K_ + f) * kBins];
          Sums left;
          for (std::size_t b = 0; b + 1 < kBins; ++b) {
            // A bin no training row holds splits them as the bin before it: each split is tried once, at
            // its first cut, which is then the same whatever the order of the sums (on a ring, too).
            if (h[b].rows == 0) continue;
            left.add(h[b]);
            const Sums right{total[node].g - left.g, total[node].h - left.h, total[node].rows - left.rows};
            if (left.rows < kMinLeafRows) continue;
            if (right.rows < kMinLeafRows) break;
            // Splits on different features may part the rows alike (in a narrow band of f_0, f_1 falls as
            // f_2 rises) with gains that differ only by the order of their sums: the first is kept unless a
            // later one gains more by a margin beyond rounding, so the trees are the same on any ring.
            const double gain = left.score() + right.score() - total[node].score();
            if (gain > best * (1 + kGainMargin)) {
              best = gain;
              tree.split[node] = true;
              tree.feature[node] = static_cast<std::uint16_t>(f);
              tree.cut[node] = static_cast<std::uint8_t>(b);
              total[2 * node + 1] = left;
              total[2 * node + 2] = right;
            }
          }
        }
        any = any || tree.split[node];
      }
      if (!any) break;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::size_t node = node_of_[r];
        if (node >= first && tree.split[node])
          node_of_[r] = 2 * node + (bins_[rows[r] * K_ + tree.feature[node]] <= tree.cut[node] ? 1 : 2);
      }
    }
    for (std::size_t node = 0; node < kNodes; ++node)
      if (!tree.split[node]) tree.step[node] = -kLearningRate * total[node].g / (total[node].h + kLeafRidge);
    return tree;
  }

  const std::vector<std::uint8_t>& bins_;
  const std::vector<int>& labels_;
  std::size_t K_;
  std::vector<double> logits_;
  Communicator* ranks_;
  std::vector<double> gradient_, hessian_;
  std::vector<std::size_t> node_of_;
  std::vector<Sums> histogram_, parent_histogram_;
};

}  // namespace

bool offers_trees(std::size_t n, std::size_t classes, std::size_t folds) {
  return classes <= kMaxTreeClasses && n <= kMaxTreeRows && folds >= 3;
}

Problem trees_candidate(const Problem& base, const std::vector<std::size_t>& fold_of_input, std::size_t folds,
                        std::span<const char> trains, const SweepPlan& plan, const RingLayout* ring) {
  const int threads = plan.threads;
  const RunControl* control = plan.control;
  const LabelledPoints& lp = *base.lp;
  const std::size_t n = lp.points.n, K = lp.classes;
  Communicator* ranks = ring ? ring->comm : nullptr;
  const std::vector<std::uint8_t> bins = binned_features(lp, ring ? ring->n : n, ranks);
  // Every fold's parametric pilot at every row: the logits the trees start from.
  std::vector<double> table(folds * n * K);
  base.folds.predict(0, folds, table, K, threads);
  const FoldRows split = fold_rows(lp, fold_of_input, folds, trains);
  std::vector<std::uint32_t> fold_of(n);
  for (std::size_t j = 0; j < n; ++j) fold_of[j] = static_cast<std::uint32_t>(fold_of_input[lp.original[j]]);
  std::vector<std::size_t> every(n);
  std::iota(every.begin(), every.end(), std::size_t{0});
  auto booster = [&](std::size_t m) {
    std::vector<double> logits(n * K);
    for (std::size_t i = 0; i < n * K; ++i) logits[i] = std::log(std::max(table[m * n * K + i], 1e-300));
    return Booster(bins, base.labels, K, std::move(logits), ranks);
  };
  // The folds are independent tasks, each serial (so the trees do not depend on the thread count); on a
  // ring one after another on the calling thread, whose sums every rank takes part in, in the same order.
  auto each_fold = [&](const std::function<void(std::size_t)>& body) {
    parallel_for(folds, ring ? 1 : threads, [&](std::size_t m, int) { body(m); }, control);
  };
  // The count of rounds, one for every fold (unless the plan fixes it): in fold m, the log-loss of its
  // training rows in fold m + 1 with the trees learnt from its others, after each round until kPatience
  // rounds past its lowest; summed over the folds up to the fewest rounds any ran, and the count of the
  // lowest sum (0 where a fold has no rows to learn from or to check on). Each fold's own lowest alone
  // went from 0 to 14 rounds on one data set (a ripple, K = 6, n = 10,000).
  std::size_t rounds = plan.tree_rounds;
  if (rounds == 0) {
    std::vector<std::vector<double>> curve(folds);
    each_fold([&](std::size_t m) {
      std::vector<std::size_t> learn, check;
      for (std::size_t i : split.train[m]) (fold_of[i] == (m + 1) % folds ? check : learn).push_back(i);
      std::vector<double> sizes{static_cast<double>(learn.size()), static_cast<double>(check.size())};
      combine_shares(ranks, sizes);
      if (sizes[0] == 0 || sizes[1] == 0) return;
      Booster search = booster(m);
      curve[m].push_back(search.loss(check));
      for (std::size_t r = 1, best = 0; r <= kMaxRounds && r <= best + kPatience; ++r) {
        WorkLedger::check(control);
        search.round(learn, split.train[m]);
        curve[m].push_back(search.loss(check));
        if (curve[m][r] < curve[m][best]) best = r;
      }
    });
    std::size_t ran = kMaxRounds + 1;
    for (const std::vector<double>& c : curve) ran = std::min(ran, c.size());
    double lowest = std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < ran; ++r) {
      double sum = 0;
      for (const std::vector<double>& c : curve) sum += c[r];
      if (sum < lowest) lowest = sum, rounds = r;
    }
  }
  // Each fold's trees learnt from all its training rows, its model read at every row.
  if (rounds > 0)
    each_fold([&](std::size_t m) {
      Booster fit = booster(m);
      for (std::size_t r = 0; r < rounds; ++r) {
        WorkLedger::check(control);
        fit.round(split.train[m], every);
      }
      for (std::size_t i = 0; i < n; ++i) fit.softmax(i, &table[(m * n + i) * K]);
    });
  Problem out = make_problem(lp);
  out.saturated = base.saturated;
  out.pilot.resize(n * K);
  for (std::size_t j = 0; j < n; ++j) std::copy_n(&table[(fold_of[j] * n + j) * K], K, &out.pilot[j * K]);
  out.folds = fold_models_of_table(out, std::move(table), folds, fold_of_input);
  return out;
}

}  // namespace ecekde::detail
