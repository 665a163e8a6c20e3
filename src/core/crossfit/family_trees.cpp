// trees: the canonical pilot's nonparametric candidate (families.hpp). Boosted regression trees on the log
// probabilities, added to the logits of the parametric pilot kept before them (each fold's own), so that a
// miscalibration confined to a region of the simplex (a bump, a step in one class's probability, a ripple)
// is learnt where no parametric family follows it; where the parametric pilot already fits, the rounds
// stop early on rows of another fold and the candidate's held-out log-loss is not lower, so it is not kept.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>

#include "core/crossfit/families.hpp"
#include "core/crossfit/folds.hpp"
#include "core/crossfit/pilot_fit.hpp"
#include "core/distributed.hpp"
#include "core/parallel.hpp"
#include "core/ring.hpp"

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

constexpr std::size_t kInner = kNodes / 2;  // the nodes above the last level

// One class's tree: a complete binary tree of kDepth levels (node i's children 2i + 1 and 2i + 2), a node
// split where `split` says so (a row goes left where its feature's bin is at most `cut`), and each leaf's
// step in the class's logit. Read without branches (step_at()): a node not split sends every row left
// (cut kAllLeft), down to the last level's slot that holds its step.
struct Tree {
  static constexpr std::uint8_t kAllLeft = 255;  // above every bin
  std::array<bool, kNodes> split{};
  std::array<std::uint16_t, kNodes> feature{};
  std::array<std::uint8_t, kNodes> cut{};
  std::array<double, kNodes - kInner> slot{};  // each leaf's step, at the last level's slot below it

  // Once the splits are chosen: each leaf's step(node) in its slot, and the nodes not split sending every
  // row left.
  template <class Step>
  void settle(Step step) {
    for (std::size_t node = 0; node < kNodes; ++node) {
      if (tree_node(node) && !split[node]) {
        std::size_t down = node;
        while (down < kInner) down = 2 * down + 1;
        slot[down - kInner] = step(node);
      }
      if (node < kInner && !split[node]) cut[node] = kAllLeft;
    }
  }

  bool tree_node(std::size_t node) const { return node == 0 || split[(node - 1) / 2]; }

  double step_at(const std::uint8_t* bins) const {
    std::size_t node = 0;
    for (std::size_t level = 0; level < kDepth; ++level)
      node = 2 * node + 1 + static_cast<std::size_t>(bins[feature[node]] > cut[node]);
    return slot[node - kInner];
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

// A round's working arrays, one set per thread: the gradient and curvature of each row it learns from
// (class by class: class c's of row r at c m + r, m rows, so that a class's tree reads its own in order),
// every class's root histograms (feature f's bin b is cell f kBins + b: its count of rows at that index,
// class c's sums of gradient and curvature at cell K + c), the K trees, and while a tree grows its rows
// grouped by node and the histograms of a level and the one above.
struct RoundScratch {
  std::vector<double> gradient, hessian;
  std::vector<double> root_rows, root_gradient, root_hessian;
  std::vector<Tree> trees;
  std::vector<std::uint32_t> order, right;
  std::vector<Sums> histogram, parent_histogram;
};

// One fold's boosting: every row's current logits (sorted order; the fold's parametric pilot's logarithms
// to begin with), held in the caller's table. Split over `ranks` (a ring: each rank its own rows), every
// sum is every rank's.
class Booster {
 public:
  Booster(const std::vector<std::uint8_t>& bins, const std::vector<int>& labels, std::size_t K,
          std::span<double> logits, Communicator* ranks)
      : bins_(bins), labels_(labels), K_(K), logits_(logits), ranks_(ranks) {}

  // One round learnt from `rows`: K trees, one per class, on the gradient and curvature of the softmax
  // log-loss at those rows, added to the logits of the rows `apply` (those read later, `rows` among them).
  void round(const std::vector<std::size_t>& rows, const std::vector<std::size_t>& apply, RoundScratch& scratch) {
    const std::size_t m = rows.size();
    scratch.gradient.resize(m * K_);
    scratch.hessian.resize(m * K_);
    std::vector<double> p(K_);
    for (std::size_t r = 0; r < m; ++r) {
      softmax(rows[r], p.data());
      for (std::size_t c = 0; c < K_; ++c) {
        const double target = static_cast<double>(labels_[rows[r]] == static_cast<int>(c));
        scratch.gradient[c * m + r] = p[c] - target;
        scratch.hessian[c * m + r] = std::max(p[c] * (1 - p[c]), 1e-16);
      }
    }
    root_histograms(rows, scratch);
    scratch.trees.resize(K_);
    for (std::size_t c = 0; c < K_; ++c) scratch.trees[c] = grow(rows, c, scratch);
    for (std::size_t i : apply)
      for (std::size_t c = 0; c < K_; ++c) logits_[i * K_ + c] += scratch.trees[c].step_at(&bins_[i * K_]);
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

  // Row i's probabilities into p, which may be the row's own logits (finish()).
  void softmax(std::size_t i, double* p) const {
    const double* z = &logits_[i * K_];
    const double top = *std::max_element(z, z + K_);
    double sum = 0;
    for (std::size_t c = 0; c < K_; ++c) sum += p[c] = std::exp(z[c] - top);
    for (std::size_t c = 0; c < K_; ++c) p[c] /= sum;
  }

  // Every row's logits replaced by its probabilities.
  void finish() {
    for (std::size_t i = 0; i < logits_.size() / K_; ++i) softmax(i, &logits_[i * K_]);
  }

  // Every class's root histograms in one pass over `rows`: a row's bin of each feature takes the K classes'
  // gradients and curvatures together, where a pass per class read the row's bins K times (the roots were
  // half of the trees' additions, and the trees 65% of an estimate at n = 200,000, K = 20). Each class's sums
  // take their rows in the same order as a pass of its own: the same sums.
  void root_histograms(const std::vector<std::size_t>& rows, RoundScratch& scratch) const {
    const std::size_t cells = K_ * kBins, m = rows.size();
    scratch.root_rows.assign(cells, 0.0);
    scratch.root_gradient.assign(cells * K_, 0.0);
    scratch.root_hessian.assign(cells * K_, 0.0);
    // A block of rows at a time, each class's values of the block read together (one cache line, where a
    // row at a time read K lines, a class's apart).
    constexpr std::size_t kBlock = 8;
    std::array<double, kBlock * kMaxTreeClasses> gradient, hessian;  // K per row (offers_trees(): K fits)
    for (std::size_t r0 = 0; r0 < m; r0 += kBlock) {
      const std::size_t block = std::min(kBlock, m - r0);
      for (std::size_t c = 0; c < K_; ++c)
        for (std::size_t q = 0; q < block; ++q) {
          gradient[q * K_ + c] = scratch.gradient[c * m + r0 + q];
          hessian[q * K_ + c] = scratch.hessian[c * m + r0 + q];
        }
      for (std::size_t q = 0; q < block; ++q) {
        const std::uint8_t* b = &bins_[rows[r0 + q] * K_];
        for (std::size_t f = 0; f < K_; ++f) {
          const std::size_t cell = f * kBins + b[f];
          double* g = &scratch.root_gradient[cell * K_];
          double* h = &scratch.root_hessian[cell * K_];
          for (std::size_t c = 0; c < K_; ++c) g[c] += gradient[q * K_ + c];
          for (std::size_t c = 0; c < K_; ++c) h[c] += hessian[q * K_ + c];
          scratch.root_rows[cell] += 1;
        }
      }
    }
    if (ranks_) {
      ranks_->all_sum(scratch.root_rows);
      ranks_->all_sum(scratch.root_gradient);
      ranks_->all_sum(scratch.root_hessian);
    }
  }

  // Class c's tree on `rows` (their gradients in `scratch`), grown level by level: each node's histograms
  // of gradient, curvature and rows over every feature's bins, and its best split by the Newton gain (none
  // where no split gains or a side would hold fewer than kMinLeafRows rows). The first of equal gains is
  // taken, in the order of features and bins; each leaf's step is a Newton step of the softmax log-loss.
  // The root's histograms are class c's of root_histograms(). Below the root only the child with fewer
  // rows (every rank's) is summed from its rows, the other is its parent's histograms less its sibling's: a
  // third of the row passes saved (docs/benchmarks.md, "... the trees' histograms by subtraction").
  Tree grow(const std::vector<std::size_t>& rows, std::size_t c, RoundScratch& scratch) const {
    const double* gradient = &scratch.gradient[c * rows.size()];  // class c's, by row
    const double* hessian = &scratch.hessian[c * rows.size()];
    std::vector<Sums>& histogram = scratch.histogram;
    std::vector<Sums>& parent_histogram = scratch.parent_histogram;
    // Each node's rows (indices into `rows`): order[from[node], to[node]), in increasing order, so that each
    // histogram adds its rows in the order of a pass over all of them.
    std::vector<std::uint32_t>& order = scratch.order;
    order.resize(rows.size());
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    std::array<std::size_t, kNodes> from{}, to{};
    to[0] = rows.size();
    Tree tree;
    std::array<Sums, kNodes> total{};
    for (std::size_t r = 0; r < rows.size(); ++r) total[0].add({gradient[r], hessian[r], 1});
    sum_over_ranks(ranks_, std::span(total).first(1));
    const std::size_t node_bins = K_ * kBins;
    for (std::size_t level = 0; level < kDepth; ++level) {
      const std::size_t first = (std::size_t{1} << level) - 1, width = std::size_t{1} << level;
      std::swap(parent_histogram, histogram);  // the level above's
      histogram.assign(width * node_bins, Sums{});
      if (level == 0) {  // class c's share of root_histograms(), already every rank's
        for (std::size_t cell = 0; cell < node_bins; ++cell)
          histogram[cell] = {scratch.root_gradient[cell * K_ + c], scratch.root_hessian[cell * K_ + c],
                             scratch.root_rows[cell]};
      } else {
        std::array<bool, kNodes> summed{};  // this level's nodes summed from their rows
        for (std::size_t node = first; node < first + width; ++node) {
          if (!tree.split[(node - 1) / 2]) continue;  // not a node of this tree
          const bool left = node % 2 == 1;
          const std::size_t sibling = left ? node + 1 : node - 1;
          summed[node] = left ? total[node].rows <= total[sibling].rows : total[node].rows < total[sibling].rows;
        }
        for (std::size_t node = first; node < first + width; ++node) {
          if (!summed[node]) continue;  // not a node of this tree, or its sibling's difference
          Sums* h = &histogram[(node - first) * node_bins];
          for (std::size_t i = from[node]; i < to[node]; ++i) {
            const std::size_t r = order[i];
            const std::uint8_t* b = &bins_[rows[r] * K_];
            const Sums s{gradient[r], hessian[r], 1};
            for (std::size_t f = 0; f < K_; ++f) h[f * kBins + b[f]].add(s);
          }
        }
        sum_over_ranks(ranks_, histogram);
        for (std::size_t node = first; node < first + width; ++node) {
          if (summed[node] || !tree.split[(node - 1) / 2]) continue;
          const std::size_t sibling = node % 2 == 1 ? node + 1 : node - 1;
          const Sums* above = &parent_histogram[((node - 1) / 2 - (first - 1) / 2) * node_bins];
          const Sums* beside = &histogram[(sibling - first) * node_bins];
          Sums* h = &histogram[(node - first) * node_bins];
          for (std::size_t i = 0; i < node_bins; ++i) h[i] = above[i].minus(beside[i]);
        }
      }
      bool any = false;
      for (std::size_t w = 0; w < width; ++w) {
        const std::size_t node = first + w;
        if (node > 0 && !tree.split[(node - 1) / 2]) continue;  // not a node of this tree
        double best = 0;
        for (std::size_t f = 0; f < K_; ++f) {
          const Sums* h = &histogram[(w * K_ + f) * kBins];
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
      if (!any || level + 1 == kDepth) break;  // the last level's children are leaves: no rows to part
      for (std::size_t node = first; node < first + width; ++node) {
        if (!tree.split[node]) continue;
        // Without branches: each row written to both sides, each side's count moved on by where it goes.
        std::vector<std::uint32_t>& right = scratch.right;
        right.resize(to[node] - from[node]);
        std::size_t left = from[node], rights = 0;
        for (std::size_t i = from[node]; i < to[node]; ++i) {
          const std::uint32_t r = order[i];
          const bool goes_left = bins_[rows[r] * K_ + tree.feature[node]] <= tree.cut[node];
          order[left] = r;
          right[rights] = r;
          left += goes_left;
          rights += !goes_left;
        }
        std::copy_n(right.begin(), rights, order.begin() + static_cast<std::ptrdiff_t>(left));
        from[2 * node + 1] = from[node], to[2 * node + 1] = left;
        from[2 * node + 2] = left, to[2 * node + 2] = to[node];
      }
    }
    tree.settle([&total](std::size_t node) { return -kLearningRate * total[node].g / (total[node].h + kLeafRidge); });
    return tree;
  }

 private:
  const std::vector<std::uint8_t>& bins_;
  const std::vector<int>& labels_;
  std::size_t K_;
  std::span<double> logits_;
  Communicator* ranks_;
};

// One fold's part in a round: its booster, the rows its trees learn from and those they are added to.
struct FoldRound {
  Booster* booster;
  const std::vector<std::size_t>* learn;
  const std::vector<std::size_t>* apply;
};

// One round of every fold in `folds`, the folds on the threads (one scratch each), each serial (so the
// trees do not depend on the thread count); on a ring (one thread) one after another, in the same order on
// every rank.
void boost_round(const std::vector<FoldRound>& folds, std::vector<RoundScratch>& scratch, const RunControl* control) {
  parallel_for(folds.size(), static_cast<int>(scratch.size()), [&](std::size_t f, int worker) {
    folds[f].booster->round(*folds[f].learn, *folds[f].apply, scratch[static_cast<std::size_t>(worker)]);
  }, control);
}

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
  // Every fold's parametric pilot at every row, whose logarithms the trees start from (start(), in place).
  std::vector<double> table(folds * n * K);
  base.folds.predict(0, folds, table, K, threads);
  const FoldRows split = fold_rows(lp, fold_of_input, folds, trains);
  std::vector<std::uint32_t> fold_of(n);
  for (std::size_t j = 0; j < n; ++j) fold_of[j] = static_cast<std::uint32_t>(fold_of_input[lp.original[j]]);
  std::vector<std::size_t> every(n);
  std::iota(every.begin(), every.end(), std::size_t{0});
  // Every fold's booster, from the logarithms of its parametric pilot, each in its block of the table: the
  // table holds the folds' logits while they boost and their probabilities after (finish()), no second copy
  // (on a ring every step is on the calling thread, whose sums every rank takes part in, in the same order).
  const int workers = ring ? 1 : threads;
  std::vector<std::optional<Booster>> booster(folds);
  std::vector<RoundScratch> scratch(static_cast<std::size_t>(workers));
  auto start = [&] {
    parallel_for(folds, workers, [&](std::size_t m, int) {
      const std::span<double> logits(&table[m * n * K], n * K);
      for (double& v : logits) v = std::log(std::max(v, 1e-300));
      booster[m].emplace(bins, base.labels, K, logits, ranks);
    }, control);
  };
  // The count of rounds, one for every fold (unless the plan fixes it): in fold m, the log-loss of its
  // training rows in fold m + 1 with the trees learnt from its others, after each round; summed over the
  // folds, and the count of the lowest sum (0 where a fold has no rows to learn from or to check on). The
  // folds go round by round together until the first is kPatience rounds past its own lowest: the sums
  // stop there, so rounds the others would go on to are not run (on the few-values kind at n = 50,000,
  // K = 10 the folds' own stops were 41 to 78 rounds). Each fold's own lowest alone went from 0 to 14
  // rounds on one data set (a ripple, K = 6, n = 10,000).
  std::size_t rounds = plan.tree_rounds;
  if (rounds == 0) {
    std::vector<std::vector<std::size_t>> learn(folds), check(folds);
    bool every_fold = true;  // each has rows to learn from and to check on
    for (std::size_t m = 0; m < folds; ++m) {
      for (std::size_t i : split.train[m]) (fold_of[i] == (m + 1) % folds ? check : learn)[m].push_back(i);
      std::vector<double> sizes{static_cast<double>(learn[m].size()), static_cast<double>(check[m].size())};
      combine_shares(ranks, sizes);
      every_fold = every_fold && sizes[0] > 0 && sizes[1] > 0;
    }
    if (every_fold) {
      start();
      std::vector<FoldRound> round;
      for (std::size_t m = 0; m < folds; ++m) round.push_back({&*booster[m], &learn[m], &split.train[m]});
      std::vector<double> loss(folds), sum{0.0};  // sum[r]: over the folds after round r
      auto losses = [&](std::size_t r) {
        parallel_for(folds, workers, [&](std::size_t m, int) { loss[m] = booster[m]->loss(check[m]); }, control);
        sum.resize(r + 1);
        sum[r] = 0;
        for (double l : loss) sum[r] += l;
      };
      losses(0);
      std::vector<double> lowest = loss;
      std::vector<std::size_t> best(folds, 0);
      for (std::size_t r = 1; r <= kMaxRounds; ++r) {
        boost_round(round, scratch, control);
        losses(r);
        bool stop = false;
        for (std::size_t m = 0; m < folds; ++m) {
          if (loss[m] < lowest[m]) lowest[m] = loss[m], best[m] = r;
          stop = stop || r + 1 > best[m] + kPatience;
        }
        if (stop) break;
      }
      for (std::size_t r = 1; r < sum.size(); ++r)
        if (sum[r] < sum[rounds]) rounds = r;
      base.folds.predict(0, folds, table, K, threads);  // the parametric pilots again, for the trees below
    }
  }
  // Each fold's trees learnt from all its training rows, its model read at every row.
  if (rounds > 0) {
    start();
    std::vector<FoldRound> round;
    for (std::size_t m = 0; m < folds; ++m) round.push_back({&*booster[m], &split.train[m], &every});
    for (std::size_t r = 0; r < rounds; ++r) boost_round(round, scratch, control);
    parallel_for(folds, workers, [&](std::size_t m, int) { booster[m]->finish(); }, control);
  }
  Problem out = make_problem(lp);
  out.saturated = base.saturated;
  out.pilot.resize(n * K);
  for (std::size_t j = 0; j < n; ++j) std::copy_n(&table[(fold_of[j] * n + j) * K], K, &out.pilot[j * K]);
  out.folds = fold_models_of_table(out, std::move(table), folds, fold_of_input);
  return out;
}

}  // namespace ecekde::detail
