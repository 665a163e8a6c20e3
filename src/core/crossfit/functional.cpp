#include "core/crossfit/functional.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "core/crossfit.hpp"
#include "core/distributed.hpp"
#include "core/messages.hpp"
#include "core/numeric.hpp"
#include "core/ring.hpp"

namespace ecekde::detail {

namespace {

constexpr double kFewNeighbours = 5;        // median effective neighbours below this: a warning
constexpr double kThinShare = 0.05;         // or this share of rows below it: a line on the thin regions

// phi_p(t) = sign(t) |t|^(p - 1), with phi_1(0) = 0.
double phi(double t, double p) { return pow_abs_derivative(t, p) / p; }

// Per input row: the estimate's term sum_l (target - f) phi_p(g - f) and its influence term
// term + max(p - 1, 1) sum_l (target - g) phi_p(g - f), added into term/influence (weighted). The second
// part is the row's effect on its neighbours' estimates (weight p - 1 from the influence function). For
// p < 2 it is weighted as at p = 2, an upper bound: where g - f is within noise of 0 a neighbour's label
// can flip its sign, a dependence between rows that the linear influence term misses (at p = 1 it would
// vanish); docs/history.md, 7.5, measured p = 1 coverage of 87-91% without this and 96-99% with it.
void add_row_terms(const Problem& pr, const Corrected& c, double p, double weight, std::span<double> term,
                   std::span<double> influence) {
  const LabelledPoints& lp = *pr.lp;
  for (std::size_t q = 0; q < c.self.size(); ++q) {
    const std::size_t j = c.self[q];
    double t = 0, extra = 0;
    for (std::size_t l = 0; l < pr.depth; ++l) {
      const double f = pr.value(j, l), g = c.g[q * pr.depth + l], y = pr.target(j, l);
      const double ph = phi(g - f, p);
      t += (y - f) * ph;
      extra += (y - g) * ph;
    }
    term[lp.original[j]] += weight * t;
    influence[lp.original[j]] += weight * (t + std::max(p - 1, 1.0) * extra);
  }
}

// The median (the upper one of an even count) of every rank's values, n of them in all.
double median(std::vector<double> v, Communicator* ranks, std::size_t n) {
  const std::size_t middle = n / 2;
  return order_statistics(ranks, v, std::span<const std::size_t>(&middle, 1))[0];
}

// The sample variance (denominator count - 1) of every rank's values, `count` of them in all.
double sample_variance(std::vector<double> v, Communicator* ranks, std::size_t count) {
  const double mean = total_over_ranks(ranks, v) / static_cast<double>(count);
  for (double& x : v) x = (x - mean) * (x - mean);
  return total_over_ranks(ranks, v) / static_cast<double>(count - 1);
}

// The variance of a row mean over m of n rows (every rank's) from its row terms and influence terms:
// Var(full row mean) + E[(1 - m / n) s_t^2 / m], the influence terms' variance over n rows, then the
// subsampling of the row terms t (conditionally on the data, a mean of m of the n row terms drawn without
// replacement); at m = n the second part is 0.
double row_mean_variance(const std::vector<double>& term, const std::vector<double>& influence, Communicator* ranks,
                         std::size_t m, std::size_t n) {
  const double term_variance = m < n ? sample_variance(term, ranks, m) : 0.0;
  return sample_variance(influence, ranks, m) / static_cast<double>(n) +
         (1 - static_cast<double>(m) / static_cast<double>(n)) * term_variance / static_cast<double>(m);
}

// Keeps the terms of the rows marked in `averaged`, in their order.
void compact_averaged(const std::vector<char>& averaged, std::vector<double>& term, std::vector<double>& influence) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < averaged.size(); ++i)
    if (averaged[i]) {
      term[kept] = term[i];
      influence[kept++] = influence[i];
    }
  term.resize(kept);
  influence.resize(kept);
}

std::string count_text(std::size_t count, const char* what) {
  return std::to_string(count) + " " + what + (count == 1 ? "" : "s");
}

std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// A chosen correction bandwidth on the grid's edge, in words (empty when inside it, or not chosen). At the
// widest the correction is flat and the figure is the pilot's: the data showed no regional departure from
// it that the criterion could tell from label noise, which at this n may also mean a real one too small or
// too thinly populated to support (docs/estimator.md, "the correction's bandwidth"). At the narrowest each
// row's correction rests on its nearest few rows.
std::string edge_warning(const std::optional<BandwidthSelection>& selection) {
  if (!selection || selection->grid.size() < 2) return {};
  const double h = selection->bandwidth;
  if (h == selection->grid.back())
    return "the kernel correction's bandwidth is the grid's widest (h = " + short_number(h) +
           "), where it is flat: the figure is the pilot recalibration's alone, blind to a miscalibration confined "
           "to a region with too few rows to tell it from label noise";
  if (h == selection->grid.front())
    return "the kernel correction's bandwidth is the grid's narrowest (h = " + short_number(h) +
           "): each row's correction rests on its nearest few rows, and a narrower one might have been chosen";
  return {};
}

// The problems whose terms this rank adds: its share where the ranks own problems (SweepPlan::owned_problems),
// else all.
Share held_problems(std::size_t count, const SweepPlan& plan) {
  return plan.owned_problems ? share_of(count, plan.communicator) : Share{0, count};
}

}  // namespace

double normal_quantile(double level) {
  // Bisection on P(|Z| <= z) = erf(z / sqrt 2): 200 halvings of [0, 40] reach the rounding limit.
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erf(mid / std::sqrt(2.0)) < level ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

RowTerms add_functional(Result& r, const std::vector<Problem>& problems, const Fit& fit, const Prepared& in,
                        const EstimateOptions& options, const RingLayout* ring) {
  Communicator* ranks = ring ? ring->comm : nullptr;  // own_rows: the sums over rows are combined over these
  const std::size_t n = r.n, own = in.pred.n;
  const double weight = problem_weight(options.type);
  // Owned problems (own rows' marginal): each rank holds its share of the classes over every row, and
  // the per-row terms go from rank to rank, each adding its classes in turn: the order of one process.
  const bool owned = in.plan.owned_problems;
  const Share mine = held_problems(problems.size(), in.plan);
  std::vector<double> term(own, 0.0), influence(own, 0.0), class_ce(problems.size(), 0.0);
  auto add_own_classes = [&](std::span<double> terms) {
    std::span<double> t = terms.first(own), i = terms.subspan(own);
    for (std::size_t q = mine.begin; q < mine.end; ++q) {
      if (options.type == CalibrationType::marginal) {
        std::vector<double> class_term(own, 0.0), unused(own, 0.0);
        add_row_terms(problems[q], fit.corrected[q], options.p, weight, class_term, unused);
        class_ce[q] = total_over_ranks(ranks, class_term) / static_cast<double>(n);
      }
      add_row_terms(problems[q], fit.corrected[q], options.p, weight, t, i);
    }
  };
  if (!owned) {
    std::vector<double> both(2 * own, 0.0);
    add_own_classes(both);
    std::copy_n(both.begin(), own, term.begin());
    std::copy_n(both.begin() + static_cast<std::ptrdiff_t>(own), own, influence.begin());
  } else {
    const std::vector<double> both = in_rank_order(in.plan.communicator, 2 * own, add_own_classes);
    std::copy_n(both.begin(), own, term.begin());
    std::copy_n(both.begin() + static_cast<std::ptrdiff_t>(own), own, influence.begin());
    combine_shares(in.plan.communicator, class_ce);
  }
  const std::size_t m = fit.averaged_rows;  // n but for canonical at large n (mean_row_limit)
  if (m < n) {  // the rows left out of the mean: none of their terms, and none of the sums below
    std::vector<char> averaged(own, 0);
    for (std::size_t q = mine.begin; q < mine.end; ++q)
      for (std::size_t j : fit.corrected[q].self) averaged[problems[q].lp->original[j]] = 1;
    compact_averaged(averaged, term, influence);
  }
  if (options.type == CalibrationType::marginal) r.class_ce_pow_p = class_ce;
  r.averaged_rows = m;
  const double raw = total_over_ranks(ranks, term) / static_cast<double>(m);
  r.standard_error = std::sqrt(row_mean_variance(term, influence, ranks, m, n));
  r.ce_pow_p = std::max(raw, 0.0);
  r.ce = root_of(r.ce_pow_p, options.p);
  const double z = normal_quantile(options.level);
  r.ce_pow_p_interval = Bounds{options.level, std::max(raw - z * r.standard_error, 0.0), std::max(raw + z * r.standard_error, 0.0)};
  r.ce_interval = Bounds{options.level, root_of(r.ce_pow_p_interval->lower, options.p),
                         root_of(r.ce_pow_p_interval->upper, options.p)};
  return {raw, std::move(term), std::move(influence)};
}

bool reads_more(const RowTerms& a, const RowTerms& b, std::size_t averaged_rows, std::size_t n, const RingLayout* ring) {
  Communicator* ranks = ring ? ring->comm : nullptr;
  std::vector<double> term(a.term.size()), influence(a.influence.size());
  for (std::size_t j = 0; j < term.size(); ++j) {
    term[j] = b.term[j] - a.term[j];
    influence[j] = b.influence[j] - a.influence[j];
  }
  return b.raw - a.raw > kNarrowingZ * std::sqrt(row_mean_variance(term, influence, ranks, averaged_rows, n));
}

void add_warnings(Result& r, const std::vector<Problem>& problems, const Fit& fit, const Prepared& in,
                  const EstimateOptions& options, const RingLayout* ring) {
  Communicator* ranks = ring ? ring->comm : nullptr;
  const std::size_t n = r.n;
  const bool owned = in.plan.owned_problems;
  const Share mine = held_problems(problems.size(), in.plan);
  if (options.type == CalibrationType::canonical && n < 20 * (r.k + 2))
    r.warnings.push_back("only " + count_text(n, "sample") + " for " + std::to_string(r.k) +
                         " classes: the recalibration map behind the canonical estimate is poorly determined");
  // Per problem: its positives, negatives, median neighbours and share of rows with fewer than
  // kFewNeighbours (owned: from each problem's owner).
  constexpr std::size_t kFacts = 4;
  std::vector<double> facts(kFacts * problems.size(), 0.0);
  for (std::size_t q = mine.begin; q < mine.end; ++q) {
    const LabelledPoints& lp = *problems[q].lp;
    if (lp.one_dimensional) {
      ECEKDE_ASSERT(!ring);  // the ring runs canonical problems only
      facts[kFacts * q] = static_cast<double>(lp.class_begin[2] - lp.class_begin[1]);
      facts[kFacts * q + 1] = static_cast<double>(lp.class_begin[1]);
    }
    const std::vector<double>& neighbours = fit.corrected[q].neighbours;
    facts[kFacts * q + 2] = median(neighbours, ranks, fit.averaged_rows);
    std::vector<double> thin(neighbours.size());
    for (std::size_t j = 0; j < thin.size(); ++j) thin[j] = neighbours[j] < kFewNeighbours;
    facts[kFacts * q + 3] = total_over_ranks(ranks, thin) / static_cast<double>(fit.averaged_rows);
  }
  if (owned) combine_shares(in.plan.communicator, facts);
  std::vector<std::pair<std::size_t, std::string>> rare;  // (class, "3 positives"): one line for them all
  bool few_neighbours = false;
  double thinnest = 0;  // the largest share of a problem's rows with fewer than kFewNeighbours
  for (std::size_t q = 0; q < problems.size(); ++q) {
    const LabelledPoints& lp = *problems[q].lp;
    if (lp.one_dimensional) {
      const auto positives = static_cast<std::size_t>(facts[kFacts * q]);
      const auto negatives = static_cast<std::size_t>(facts[kFacts * q + 1]);
      const std::size_t fewest = std::min(positives, negatives);
      if (fewest < 10) {
        const std::string count = count_text(fewest, positives < negatives ? "positive" : "negative");
        if (options.type == CalibrationType::marginal)
          rare.emplace_back(q, count);
        else
          r.warnings.push_back("the labels have only " + count + ": its calibration error is poorly determined");
      }
    }
    const double neighbours = facts[kFacts * q + 2];
    thinnest = std::max(thinnest, facts[kFacts * q + 3]);
    if (neighbours < kFewNeighbours && !few_neighbours) {  // said once, for the first problem it concerns
      few_neighbours = true;
      r.warnings.push_back("the kernel estimate rests on few neighbours (median " +
                           std::to_string(static_cast<int>(std::round(neighbours))) + " at h = " +
                           std::to_string(r.bandwidth) + "): the figure is not reliable");
    }
  }
  // Most rows well surrounded, a region thin: there the correction is thresholded away, and the figure
  // cannot follow a miscalibration local to it.
  if (!few_neighbours && thinnest >= kThinShare)
    r.warnings.push_back("the kernel correction has fewer than " + short_number(kFewNeighbours) +
                         " effective neighbours on " + short_number(std::round(100 * thinnest)) +
                         "% of the rows (h = " + short_number(r.bandwidth) +
                         "): where the rows are that thin the figure is the pilot's, blind to a miscalibration local to them");
  if (std::string edge = edge_warning(r.selection); !edge.empty()) r.warnings.push_back(std::move(edge));
  if (rare.size() == 1) {
    r.warnings.push_back("class " + std::to_string(rare[0].first) + " has only " + rare[0].second +
                         ": its calibration error is poorly determined");
  } else if (!rare.empty()) {  // one line, however many classes (K = 1,000 gave a thousand lines)
    constexpr std::size_t kListed = 5;
    std::string line = std::to_string(rare.size()) + " classes have fewer than 10 positives or negatives (";
    for (std::size_t i = 0; i < std::min(rare.size(), kListed); ++i)
      line += (i ? ", class " : "class ") + std::to_string(rare[i].first) + ": " + rare[i].second;
    if (rare.size() > kListed) line += ", and " + std::to_string(rare.size() - kListed) + " more";
    r.warnings.push_back(line + "): their calibration errors are poorly determined");
  }
}

}  // namespace ecekde::detail
