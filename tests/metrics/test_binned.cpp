// The binned estimators against hand-computed cases, the plain oracle, and their documented conventions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/error.hpp"
#include "ecekde/random.hpp"
#include "expect_error.hpp"
#include "generate.hpp"
#include "metrics_oracle.hpp"
#include "metrics/histogram.hpp"

namespace {

using ecekde::BinnedForm;
using ecekde::BinnedOptions;
using ecekde::Binning;
using ecekde::CalibrationType;

ecekde::BinnedResult run(const oracle::Data& d, const BinnedOptions& o) {
  return ecekde::binned_calibration_error(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k),
                                          ecekde::LabelsView(d.y), o);
}

BinnedOptions options(CalibrationType type, std::size_t bins, BinnedForm form, double p = 1,
                      Binning binning = Binning::equal_width) {
  BinnedOptions o;
  o.type = type;
  o.bins = bins;
  o.form = form;
  o.p = p;
  o.binning = binning;
  return o;
}

// Top-label confidences 0.9 (right), 0.8 (wrong), 0.6 (right), 0.7 (right); 5 equal-width bins with edges
// 0, 0.2, 0.4, 0.6, 0.8, 1. 0.6 and 0.8 are edges: they open bins 3 and 4.
//   bin 3 = {0.6, 0.7}: mean confidence 0.65, accuracy 1   -> gap 0.35
//   bin 4 = {0.9, 0.8}: mean confidence 0.85, accuracy 0.5 -> gap 0.35
// per-bin L1 = 0.5 * 0.35 + 0.5 * 0.35 = 0.35; L2^2 = 0.1225; MCE = 0.35.
// per-sample L1 = (0.4 + 0.3 + 0.4 + 0.3) / 4 = 0.35; L2^2 = (0.16 + 0.09 + 0.16 + 0.09) / 4 = 0.125.
// debiased: bin 3: 0.1225 - 1 * 0 / 1 = 0.1225; bin 4: 0.1225 - 0.25 / 1 = -0.1275; mean -0.0025.
oracle::Data hand_top_label() {
  return oracle::Data::of(2, {0.9, 0.1, 0.2, 0.8, 0.6, 0.4, 0.3, 0.7}, {0, 0, 0, 1});
}

TEST(Binned, HandComputedTopLabel) {
  const auto d = hand_top_label();
  const auto l1 = run(d, options(CalibrationType::top_label, 5, BinnedForm::per_bin));
  EXPECT_NEAR(l1.ce_pow_p, 0.35, 1e-15);
  EXPECT_NEAR(l1.ce, 0.35, 1e-15);
  ASSERT_EQ(l1.diagrams.size(), 1u);
  ASSERT_EQ(l1.diagrams[0].size(), 2u);
  const auto& b3 = l1.diagrams[0][0];
  EXPECT_EQ(b3.index, 3u);
  EXPECT_EQ(b3.lower, 0.6);
  EXPECT_EQ(b3.upper, 0.8);
  EXPECT_EQ(b3.count, 2u);
  EXPECT_NEAR(b3.mean_confidence, 0.65, 1e-15);
  EXPECT_EQ(b3.mean_label, 1.0);
  const auto& b4 = l1.diagrams[0][1];
  EXPECT_EQ(b4.index, 4u);
  EXPECT_EQ(b4.upper, 1.0);
  EXPECT_NEAR(b4.mean_confidence, 0.85, 1e-15);
  EXPECT_EQ(b4.mean_label, 0.5);

  const auto l2 = run(d, options(CalibrationType::top_label, 5, BinnedForm::per_bin, 2));
  EXPECT_NEAR(l2.ce_pow_p, 0.1225, 1e-15);
  EXPECT_NEAR(l2.ce, 0.35, 1e-15);
  auto mce_options = options(CalibrationType::top_label, 5, BinnedForm::per_bin);
  mce_options.maximum = true;
  const auto mce = run(d, mce_options);
  EXPECT_NEAR(mce.ce, 0.35, 1e-15);
  EXPECT_EQ(mce.ce_pow_p, mce.ce);
  EXPECT_NEAR(run(d, options(CalibrationType::top_label, 5, BinnedForm::per_sample)).ce_pow_p, 0.35, 1e-15);
  EXPECT_NEAR(run(d, options(CalibrationType::top_label, 5, BinnedForm::per_sample, 2)).ce_pow_p, 0.125, 1e-15);
  const auto db = run(d, options(CalibrationType::top_label, 5, BinnedForm::debiased, 2));
  EXPECT_NEAR(db.ce_pow_p, -0.0025, 1e-15);
  EXPECT_EQ(db.ce, 0.0);
}

// Canonical, K = 3, 2 bins per class (edge 0.5). Cells (bins of f0, f1, f2):
//   (0.6, 0.3, 0.1) y0 and (0.7, 0.2, 0.1) y1 -> cell (1, 0, 0): H = (0.5, 0.5, 0)
//   (0.2, 0.5, 0.3) y1                        -> cell (0, 1, 0): H = (0, 1, 0)
// per-sample L1: |0.5-0.6| + |0.5-0.3| + 0.1 = 0.4; |0.5-0.7| + |0.5-0.2| + 0.1 = 0.6; 0.2 + 0.5 + 0.3 = 1.0
//   -> (0.4 + 0.6 + 1.0) / 3 = 2/3.
// per-bin L1: cell (1,0,0) means (0.65, 0.25, 0.1): |0.5-0.65| + |0.5-0.25| + 0.1 = 0.5, weight 2/3;
//   cell (0,1,0): 1.0, weight 1/3 -> 1/3 + 1/3 = 2/3 as well; MCE per-bin = max(0.25, 0.5) = 0.5.
TEST(Binned, HandComputedCanonicalCells) {
  const auto d = oracle::Data::of(3, {0.6, 0.3, 0.1, 0.2, 0.5, 0.3, 0.7, 0.2, 0.1}, {0, 1, 1});
  BinnedOptions o;
  o.type = CalibrationType::canonical;
  o.bins = 2;
  const auto r = run(d, o);
  EXPECT_EQ(r.form, BinnedForm::per_sample);  // the default for canonical
  EXPECT_NEAR(r.ce_pow_p, 2.0 / 3, 1e-15);
  ASSERT_EQ(r.cells.size(), 2u);
  EXPECT_EQ(r.cells[0].bins, (std::vector<std::uint32_t>{0, 1, 0}));  // lexicographic order
  EXPECT_EQ(r.cells[0].count, 1u);
  EXPECT_EQ(r.cells[0].mean_label, (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(r.cells[1].bins, (std::vector<std::uint32_t>{1, 0, 0}));
  EXPECT_EQ(r.cells[1].count, 2u);
  EXPECT_EQ(r.cells[1].mean_label, (std::vector<double>{0.5, 0.5, 0}));
  EXPECT_NEAR(r.cells[1].mean_prediction[0], 0.65, 1e-15);
  EXPECT_EQ(r.edges.size(), 3u);
  EXPECT_TRUE(r.diagrams.empty());

  o.form = BinnedForm::per_bin;
  EXPECT_NEAR(run(d, o).ce_pow_p, 2.0 / 3, 1e-15);
  o.maximum = true;
  EXPECT_NEAR(run(d, o).ce, 0.5, 1e-15);
}

// The cells put every sample in the bin that bin_of's binary search gives it: equal-width edges take
// their bins by arithmetic (s B, then a step across an edge the product rounded over), others and more bins
// than samples go by the search. Scores on every edge, one ulp either side, 0, 1 and random, in one and
// three coordinates.
TEST(Binned, CellsBinEverySampleAsTheBinarySearchDoes) {
  using namespace ecekde::detail;
  ecekde::Rng rng(5);
  for (std::size_t bins : {1, 2, 3, 7, 10, 15, 49, 100, 1000})
    for (Binning binning : {Binning::equal_width, Binning::equal_mass}) {
      std::vector<double> values = {0.0, 1.0};
      for (std::size_t b = 1; b < bins; ++b) {
        const double e = static_cast<double>(b) / static_cast<double>(bins);
        values.insert(values.end(), {e, std::nextafter(e, 0.0), std::nextafter(e, 1.0)});
      }
      for (int i = 0; i < 300; ++i) values.push_back(rng.uniform());
      for (std::size_t dim : {1, 3}) {
        SCOPED_TRACE(testing::Message() << "bins " << bins << " dim " << dim << " equal width "
                                        << (binning == Binning::equal_width));
        ScoredSamples s;
        s.n = values.size();
        s.dim = dim;
        for (std::size_t i = 0; i < s.n; ++i)
          for (std::size_t d = 0; d < dim; ++d) s.score.push_back(values[(i + 7 * d) % s.n]);
        s.hit.assign(s.n, -1);
        std::vector<std::vector<double>> edges;
        for (std::size_t d = 0; d < dim; ++d) {
          std::vector<double> column(s.n);
          for (std::size_t i = 0; i < s.n; ++i) column[i] = s.at(i, d);
          edges.push_back(bin_edges(column, binning, bins));
        }
        const Cells cells = make_cells(s, edges);
        for (std::size_t i = 0; i < s.n; ++i)
          for (std::size_t d = 0; d < dim; ++d)
            ASSERT_EQ(cells.bins[cells.cell_of[i] * dim + d], bin_of(edges[d], s.at(i, d))) << i << " " << s.at(i, d);
      }
    }
}

// The cells against a plain grouping of the dense bin vectors (std::map keyed by them, so in lexicographic
// order): the same cells in the same order, sizes, score sums and label counts, on samples where bin 0 is
// nearly every coordinate's (peaked, as at K = 1,000), about half and rare, with ties and repeated
// samples; and the parts a caller declines are left empty while the rest stay the same.
TEST(Binned, CellsAreTheDenseBinVectorsGroupedInLexicographicOrder) {
  using namespace ecekde::detail;
  ecekde::Rng rng(11);
  for (std::size_t dim : {2, 5, 40})
    for (double peak : {0.02, 0.5, 0.95})
      for (std::size_t bins : {2, 4, 9}) {
        SCOPED_TRACE(testing::Message() << "dim " << dim << " peak " << peak << " bins " << bins);
        ScoredSamples s;
        s.n = 400;
        s.dim = dim;
        for (std::size_t i = 0; i < s.n; ++i) {
          if (i >= 10 && rng.uniform() < 0.2) {  // a repeat of an earlier sample: a cell of several
            const std::size_t j = static_cast<std::size_t>(rng.uniform() * static_cast<double>(i));
            for (std::size_t d = 0; d < dim; ++d) s.score.push_back(s.at(j, d));
          } else {
            for (std::size_t d = 0; d < dim; ++d) s.score.push_back(rng.uniform() < peak ? 0.5 * rng.uniform() / bins : rng.uniform());
          }
          s.hit.push_back(rng.uniform() < 0.1 ? -1 : static_cast<std::int32_t>(rng.uniform() * static_cast<double>(dim)));
        }
        const std::vector<std::vector<double>> edges(dim, bin_edges({}, Binning::equal_width, bins));
        struct Plain {
          std::size_t size = 0;
          std::vector<double> score_sum, label_sum;
        };
        std::map<std::vector<std::uint32_t>, Plain> plain;
        std::vector<std::vector<std::uint32_t>> key(s.n);
        for (std::size_t i = 0; i < s.n; ++i) {
          for (std::size_t d = 0; d < dim; ++d) key[i].push_back(bin_of(edges[d], s.at(i, d)));
          Plain& cell = plain[key[i]];
          cell.score_sum.resize(dim, 0.0);
          cell.label_sum.resize(dim, 0.0);
          ++cell.size;
          for (std::size_t d = 0; d < dim; ++d) cell.score_sum[d] += s.at(i, d);
          if (s.hit[i] >= 0) cell.label_sum[static_cast<std::size_t>(s.hit[i])] += 1;
        }
        const Cells cells = make_cells(s, edges);
        ASSERT_EQ(cells.count, plain.size());
        std::size_t c = 0;
        for (const auto& [bins_of_cell, cell] : plain) {
          EXPECT_EQ(std::vector<std::uint32_t>(cells.bins.begin() + static_cast<std::ptrdiff_t>(c * dim),
                                               cells.bins.begin() + static_cast<std::ptrdiff_t>((c + 1) * dim)),
                    bins_of_cell);
          EXPECT_EQ(cells.size[c], cell.size);
          MeanLabels mean_label = cells.mean_labels(c);
          for (std::size_t d = 0; d < dim; ++d) {
            EXPECT_EQ(cells.score_sum[c * dim + d], cell.score_sum[d]);
            EXPECT_EQ(mean_label(d), cell.label_sum[d] / static_cast<double>(cell.size));
          }
          ++c;
        }
        for (std::size_t i = 0; i < s.n; ++i)
          ASSERT_EQ(std::distance(plain.begin(), plain.find(key[i])), static_cast<std::ptrdiff_t>(cells.cell_of[i]));
        const Cells lean = make_cells(s, edges, {.bins = false, .score_sums = false});
        EXPECT_TRUE(lean.bins.empty());
        EXPECT_TRUE(lean.score_sum.empty());
        EXPECT_EQ(lean.cell_of, cells.cell_of);
        EXPECT_EQ(lean.size, cells.size);
        EXPECT_EQ(lean.labels.coord, cells.labels.coord);
        EXPECT_EQ(lean.labels.count, cells.labels.count);
      }
}

// Doane's bin counts of several columns, taken row by row, are each column's own count.
TEST(Binned, DoaneBinsOfColumnsAreEachColumnsOwn) {
  ecekde::Rng rng(3);
  for (std::size_t n : {1, 2, 3, 50, 1000}) {
    const std::size_t dim = 6;
    std::vector<double> x(n * dim);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < dim; ++c)
        x[i * dim + c] = c == 0 ? 0.3 : c == 1 ? std::pow(rng.uniform(), 8) : rng.uniform();  // constant, skewed, flat
    const std::vector<std::size_t> bins = ecekde::detail::doane_bins_of_columns(x.data(), n, dim);
    for (std::size_t c = 0; c < dim; ++c) {
      std::vector<double> column(n);
      for (std::size_t i = 0; i < n; ++i) column[i] = x[i * dim + c];
      EXPECT_EQ(bins[c], ecekde::doane_bins(column)) << "n " << n << " column " << c;
    }
  }
}

TEST(Binned, EqualWidthEdgesAreClosedBelow) {
  // One column P(y = 1): 0 opens bin 0, 1.0 falls in the last bin, 0.6 = 3/5 opens bin 3 and the
  // double just below it stays in bin 2.
  const std::vector<double> p{0.0, 1.0, 0.6, std::nextafter(0.6, 0.0), 0.2};
  const auto d = oracle::Data::of(1, p, {0, 1, 1, 0, 0});
  const auto r = run(d, options(CalibrationType::binary, 5, BinnedForm::per_bin));
  ASSERT_EQ(r.edges.size(), 1u);
  EXPECT_EQ(r.edges[0], (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1}));
  std::vector<std::size_t> index;
  for (const auto& b : r.diagrams[0]) index.push_back(b.index);
  EXPECT_EQ(index, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  // Each occupied bin holds exactly one sample, bins 0 and 4 have mean 0 and 1 with matching labels,
  // so the L1 error is 2 x (|0 - 0.2| + |0 - 0.6^-| + |1 - 0.6|) / 5.
  for (const auto& b : r.diagrams[0]) EXPECT_EQ(b.count, 1u);
  EXPECT_NEAR(r.ce_pow_p, 2 * (0.2 + 0.6 + 0.4) / 5, 1e-15);

  // A top-label confidence of exactly 1.0 lands in the last bin, whatever B.
  const auto sure = oracle::Data::of(3, {1.0, 0.0, 0.0, 0.4, 0.35, 0.25}, {0, 2});
  for (std::size_t bins : {2u, 7u, 15u}) {
    const auto t = run(sure, options(CalibrationType::top_label, bins, BinnedForm::per_bin));
    EXPECT_EQ(t.diagrams[0].back().index, bins - 1);
    EXPECT_EQ(t.diagrams[0].back().mean_confidence, 1.0);
  }
}

TEST(Binned, EmptyBinsAreSkipped) {
  // Every confidence in [0.9, 1]: with 10 equal-width bins only bin 9 is occupied, and the estimate is
  // that bin's gap alone.
  const auto d = oracle::Data::of(2, {0.95, 0.05, 0.9, 0.1, 0.1, 0.9, 0.02, 0.98}, {0, 1, 1, 1});
  const auto r = run(d, options(CalibrationType::top_label, 10, BinnedForm::per_bin));
  ASSERT_EQ(r.diagrams[0].size(), 1u);
  EXPECT_EQ(r.diagrams[0][0].index, 9u);
  EXPECT_EQ(r.diagrams[0][0].count, 4u);
  EXPECT_NEAR(r.ce_pow_p, std::fabs(0.75 - (0.95 + 0.9 + 0.9 + 0.98) / 4), 1e-15);
}

TEST(Binned, EqualMassTiesGoToTheUpperBin) {
  // Scores 0.2, 0.5, 0.5, 0.9 and B = 2: the nominal boundary after rank 2 falls inside the run of 0.5s,
  // so edge 1 = sorted[2] = 0.5 and both 0.5s open bin 1.
  const auto d = oracle::Data::of(1, {0.5, 0.9, 0.2, 0.5}, {1, 1, 0, 0});
  const auto r = run(d, options(CalibrationType::binary, 2, BinnedForm::per_bin, 1, Binning::equal_mass));
  EXPECT_EQ(r.edges[0], (std::vector<double>{0, 0.5, 1}));
  ASSERT_EQ(r.diagrams[0].size(), 2u);
  EXPECT_EQ(r.diagrams[0][0].count, 1u);
  EXPECT_EQ(r.diagrams[0][1].count, 3u);
  // bin 0: {0.2, y0} gap 0.2; bin 1: {0.5, 0.9, 0.5}, labels {1, 1, 0}: gap |2/3 - 19/30| = 1/30.
  EXPECT_NEAR(r.ce_pow_p, 2 * (0.25 * 0.2 + 0.75 / 30), 1e-15);

  // Eight distinct scores, four bins: two per bin, edges at the sorted scores of ranks 2, 4, 6.
  const auto e = oracle::Data::of(1, {0.8, 0.1, 0.7, 0.3, 0.2, 0.6, 0.4, 0.9}, {1, 0, 1, 0, 0, 1, 0, 1});
  const auto q = run(e, options(CalibrationType::binary, 4, BinnedForm::per_bin, 1, Binning::equal_mass));
  EXPECT_EQ(q.edges[0], (std::vector<double>{0, 0.3, 0.6, 0.8, 1}));
  for (const auto& b : q.diagrams[0]) EXPECT_EQ(b.count, 2u);
}

TEST(Binned, EqualMassWithAllConfidencesEqual) {
  // Every edge is the common value, so every sample opens the last bin: one bin holding all of them.
  const auto d = oracle::Data::of(2, {0.7, 0.3, 0.3, 0.7, 0.7, 0.3, 0.3, 0.7, 0.7, 0.3}, {0, 1, 1, 1, 0});
  for (std::size_t bins : {1u, 3u, 15u}) {
    const auto r = run(d, options(CalibrationType::top_label, bins, BinnedForm::per_bin, 1, Binning::equal_mass));
    ASSERT_EQ(r.diagrams[0].size(), 1u);
    EXPECT_EQ(r.diagrams[0][0].index, bins - 1);
    EXPECT_EQ(r.diagrams[0][0].count, 5u);
    EXPECT_NEAR(r.ce_pow_p, std::fabs(0.8 - 0.7), 1e-15);  // accuracy 4/5
    for (std::size_t b = 1; b < bins; ++b) EXPECT_EQ(r.edges[0][b], 0.7);
  }
}

TEST(Binned, DoaneFormula) {
  // {0, 0, 0, 1}: mean 1/4, m2 = 3/16, m3 = 3/32, g1 = m3 / m2^1.5 = 1.1547, s_g1 = sqrt(12/35) = 0.5855;
  // 1 + log2 4 + log2(1 + 1.9720) = 4.571 -> 5 bins (numpy's 'doane' also gives 5).
  EXPECT_EQ(ecekde::doane_bins(std::vector<double>{0, 0, 0, 1}), 5u);
  // All equal: no skewness term, ceil(1 + log2 n).
  EXPECT_EQ(ecekde::doane_bins(std::vector<double>(100, 0.3)), 8u);
  EXPECT_EQ(ecekde::doane_bins(std::vector<double>(64, 0.3)), 7u);
  EXPECT_EQ(ecekde::doane_bins(std::vector<double>{0.1, 0.9}), 2u);
  EXPECT_EQ(ecekde::doane_bins(std::vector<double>{0.4}), 1u);

  // Without bins, every coordinate gets its own Doane count.
  const auto d = testdata::softmax_predictions(300, 4, 5, 2.0, 1.5);
  BinnedOptions o;
  o.type = CalibrationType::marginal;
  o.bins.reset();
  const auto r = run(d, o);
  ASSERT_EQ(r.edges.size(), 4u);
  for (std::size_t c = 0; c < 4; ++c) {
    std::vector<double> column;
    for (std::size_t i = 0; i < d.n; ++i) column.push_back(d.at(i, c));
    EXPECT_EQ(r.edges[c].size(), ecekde::doane_bins(column) + 1);
  }
}

std::vector<std::size_t> bin_counts(const oracle::Data& d, CalibrationType type, std::optional<std::size_t> bins) {
  const auto problems = metrics_oracle::problems(d, type);
  std::vector<std::size_t> out;
  for (const auto& pr : problems)
    for (std::size_t c = 0; c < pr.score[0].size(); ++c) {
      std::vector<double> column;
      for (const auto& row : pr.score) column.push_back(row[c]);
      out.push_back(bins ? *bins : ecekde::doane_bins(column));
    }
  return out;
}

TEST(Binned, AgreesWithOracle) {
  struct Case {
    CalibrationType type;
    std::size_t n, k;
  };
  const std::vector<Case> cases{
      {CalibrationType::top_label, 2, 2},  {CalibrationType::top_label, 60, 5}, {CalibrationType::top_label, 200, 10},
      {CalibrationType::marginal, 7, 3},   {CalibrationType::marginal, 120, 4}, {CalibrationType::binary, 50, 1},
      {CalibrationType::binary, 90, 2},    {CalibrationType::canonical, 5, 3},  {CalibrationType::canonical, 150, 3},
      {CalibrationType::canonical, 80, 6}};
  const std::vector<std::optional<std::size_t>> bin_choices{1, 3, 15, std::nullopt};
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    const auto d = c.k == 1 ? testdata::binary_predictions(c.n, seed++, 1.7)
                            : testdata::softmax_predictions(c.n, c.k, seed++, 2.0, 1.5);
    for (auto binning : {Binning::equal_width, Binning::equal_mass})
      for (const auto& bins : bin_choices)
        for (auto form : {BinnedForm::per_bin, BinnedForm::per_sample, BinnedForm::debiased})
          for (double p : {1.0, 1.5, 2.0, 3.0})
            for (bool maximum : {false, true}) {
              if (form == BinnedForm::debiased && (p != 2 || maximum)) continue;
              BinnedOptions o;
              o.type = c.type;
              o.binning = binning;
              o.bins = bins;
              o.form = form;
              o.p = p;
              o.maximum = maximum;
              const double want =
                  metrics_oracle::binned(d, c.type, binning, bin_counts(d, c.type, bins), form, p, maximum);
              const auto r = run(d, o);
              EXPECT_NEAR(r.ce_pow_p, want, 1e-13 * std::max(std::fabs(want), 1e-3))
                  << to_string(c.type) << " n=" << c.n << " k=" << c.k << " " << to_string(binning)
                  << " bins=" << (bins ? *bins : 0) << " " << to_string(form) << " p=" << p << " max=" << maximum;
            }
  }
}

TEST(Binned, ReliabilityStatisticsAreConsistent) {
  const auto d = testdata::softmax_predictions(400, 5, 21, 2.0, 1.5);
  for (auto type : {CalibrationType::top_label, CalibrationType::marginal}) {
    BinnedOptions o;
    o.type = type;
    const auto r = run(d, o);
    ASSERT_EQ(r.diagrams.size(), type == CalibrationType::marginal ? 5u : 1u);
    double from_diagrams = 0;
    for (std::size_t q = 0; q < r.diagrams.size(); ++q) {
      std::size_t total = 0, previous = 0;
      for (std::size_t j = 0; j < r.diagrams[q].size(); ++j) {
        const auto& b = r.diagrams[q][j];
        EXPECT_GT(b.count, 0u);
        if (j > 0) {
          EXPECT_GT(b.index, previous);
        }
        previous = b.index;
        EXPECT_LE(b.lower, b.mean_confidence);
        EXPECT_LE(b.mean_confidence, b.upper);
        EXPECT_EQ(b.lower, r.edges[q][b.index]);
        total += b.count;
        from_diagrams += double(b.count) / double(d.n) * std::fabs(b.mean_label - b.mean_confidence);
      }
      EXPECT_EQ(total, d.n);
    }
    EXPECT_NEAR(r.ce_pow_p, from_diagrams, 1e-14);
    if (type == CalibrationType::marginal) {
      EXPECT_NEAR(r.ce_pow_p, std::accumulate(r.class_ce_pow_p.begin(), r.class_ce_pow_p.end(), 0.0), 1e-15);
    }
  }
  // Canonical cells: counts add up to n, label means sum to 1, strictly increasing bin vectors.
  BinnedOptions o;
  o.type = CalibrationType::canonical;
  o.bins = 4;
  const auto r = run(d, o);
  std::size_t total = 0;
  for (std::size_t c = 0; c < r.cells.size(); ++c) {
    total += r.cells[c].count;
    EXPECT_NEAR(std::accumulate(r.cells[c].mean_label.begin(), r.cells[c].mean_label.end(), 0.0), 1.0, 1e-15);
    if (c > 0) {
      EXPECT_LT(r.cells[c - 1].bins, r.cells[c].bins);
    }
  }
  EXPECT_EQ(total, d.n);
}

TEST(Binned, InvariantToSampleOrderAndInputType) {
  const auto d = testdata::softmax_predictions(300, 4, 31, 2.0, 1.5);
  oracle::Data reversed = d;
  for (std::size_t i = 0; i < d.n; ++i) {
    std::copy_n(&d.f[(d.n - 1 - i) * d.k], d.k, &reversed.f[i * d.k]);
    reversed.y[i] = d.y[d.n - 1 - i];
  }
  std::vector<float> f32(d.f.begin(), d.f.end());
  oracle::Data from_float = d;
  for (std::size_t i = 0; i < d.f.size(); ++i) from_float.f[i] = f32[i];
  std::vector<std::int32_t> y32(d.y.begin(), d.y.end());
  for (auto type : {CalibrationType::top_label, CalibrationType::marginal, CalibrationType::canonical})
    for (auto binning : {Binning::equal_width, Binning::equal_mass}) {
      BinnedOptions o;
      o.type = type;
      o.binning = binning;
      o.bins = 6;
      EXPECT_NEAR(run(reversed, o).ce_pow_p, run(d, o).ce_pow_p, 1e-15);
      const auto f = ecekde::binned_calibration_error(ecekde::ProbsView::row_major(f32.data(), d.n, d.k),
                                                      ecekde::LabelsView(y32), o);
      EXPECT_EQ(f.ce_pow_p, run(from_float, o).ce_pow_p);
    }
}

TEST(Binned, BinaryCountsBothClasses) {
  // One column P(y = 1) and two columns (1 - p, p) give the same value: twice the positive class's error.
  const auto one = testdata::binary_predictions(200, 41, 1.5);
  oracle::Data two = one;
  two.k = 2;
  two.f.clear();
  for (double p : one.f) {
    two.f.push_back(1 - p);
    two.f.push_back(p);
  }
  BinnedOptions o;
  o.type = CalibrationType::binary;
  o.p = 2;
  const auto a = run(one, o), b = run(two, o);
  EXPECT_EQ(a.ce_pow_p, b.ce_pow_p);
  double half = 0;
  for (const auto& bin : a.diagrams[0]) half += double(bin.count) / 200 * std::pow(bin.mean_label - bin.mean_confidence, 2);
  EXPECT_NEAR(a.ce_pow_p, 2 * half, 1e-15);
  o.maximum = true;
  double largest = 0;
  for (const auto& bin : a.diagrams[0]) largest = std::max(largest, std::fabs(bin.mean_label - bin.mean_confidence));
  EXPECT_EQ(run(one, o).ce, largest);
}

TEST(Binned, DebiasedIsUnbiasedWhereThePlugInIsNot) {
  // Scores at the 10 bin centres, labels ~ Bernoulli(score): calibrated, so the true binned CE_2^2 is 0.
  // Within a bin the labels are i.i.d., which makes the debiased estimate exactly unbiased; the plug-in
  // estimate is biased upward by about sum_b s_b (1 - s_b) / n.
  const std::size_t n = 300, replicates = 400;
  ecekde::Rng rng(7);
  double sum_db = 0, sum_db2 = 0, sum_plugin = 0;
  oracle::Data d;
  d.n = n;
  d.k = 1;
  d.f.resize(n);
  d.y.resize(n);
  BinnedOptions o;
  o.type = CalibrationType::binary;
  o.bins = 10;
  o.p = 2;
  for (std::size_t r = 0; r < replicates; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      d.f[i] = 0.05 + 0.1 * double(rng.below(10));
      d.y[i] = rng.uniform() < d.f[i] ? 1 : 0;
    }
    o.form = BinnedForm::debiased;
    const double db = run(d, o).ce_pow_p;
    o.form = BinnedForm::per_bin;
    sum_plugin += run(d, o).ce_pow_p;
    sum_db += db;
    sum_db2 += db * db;
  }
  const double mean_db = sum_db / replicates, sd = std::sqrt(sum_db2 / replicates - mean_db * mean_db);
  const double se = sd / std::sqrt(double(replicates));
  EXPECT_LT(std::fabs(mean_db), 4 * se) << "mean " << mean_db << " se " << se;
  EXPECT_GT(sum_plugin / replicates, mean_db + 20 * se);
}

// BinnedStatistic (the report's resampling) against the estimate on materialised copies: a bootstrap
// resample's rows copied out, and the data with a relabelled copy's labels. Bitwise, for every type, form,
// binning, the maximum, Doane's bins, renormalised and float32 input.
TEST(Binned, PreparedStatisticEqualsTheEstimateOnCopies) {
  struct Case {
    CalibrationType type;
    std::size_t k;
    std::optional<std::size_t> bins;
    BinnedForm form;
    bool maximum;
    Binning binning;
  };
  const std::vector<Case> cases{
      {CalibrationType::top_label, 5, 7, BinnedForm::per_bin, false, Binning::equal_width},
      {CalibrationType::top_label, 5, 7, BinnedForm::per_bin, true, Binning::equal_mass},
      {CalibrationType::top_label, 5, 6, BinnedForm::debiased, false, Binning::equal_mass},
      {CalibrationType::top_label, 3, 4, BinnedForm::per_sample, false, Binning::equal_width},
      {CalibrationType::marginal, 4, std::nullopt, BinnedForm::per_bin, false, Binning::equal_width},
      {CalibrationType::marginal, 4, 5, BinnedForm::per_bin, true, Binning::equal_mass},
      {CalibrationType::canonical, 3, std::nullopt, BinnedForm::per_sample, false, Binning::equal_width},
      {CalibrationType::canonical, 4, 3, BinnedForm::per_bin, false, Binning::equal_mass},
      {CalibrationType::binary, 1, 8, BinnedForm::per_bin, false, Binning::equal_width},
      {CalibrationType::binary, 2, 8, BinnedForm::per_bin, true, Binning::equal_mass},
  };
  for (const Case& c : cases)
    for (bool single : {false, true}) {
      const auto d = c.k == 1 ? testdata::binary_predictions(150, 3, 1.5) : testdata::softmax_predictions(150, c.k, 9, 2.0, 1.5);
      std::vector<float> f32(d.f.begin(), d.f.end());
      const auto probs = single ? ecekde::ProbsView::row_major(f32.data(), d.n, d.k)
                                : ecekde::ProbsView::row_major(d.f.data(), d.n, d.k);
      BinnedOptions o = options(c.type, 0, c.form, c.form == BinnedForm::debiased ? 2.0 : 1.5, c.binning);
      o.bins = c.bins;
      o.maximum = c.maximum;
      o.renormalize = single;  // float32 rows miss 1 by rounding: renormalised, as the report may
      const std::string what = std::string(to_string(c.type)) + (single ? " float32" : " float64");
      const ecekde::BinnedStatistic statistic(probs, ecekde::LabelsView(d.y), o);
      EXPECT_EQ(statistic.result().ce_pow_p, ecekde::binned_calibration_error(probs, ecekde::LabelsView(d.y), o).ce_pow_p)
          << what;
      for (std::size_t replicate = 0; replicate < 4; ++replicate) {
        const auto rows = ecekde::bootstrap_indices(d.n, 5, replicate);
        std::vector<double> f;
        std::vector<std::int64_t> y;
        for (std::size_t r : rows) {
          for (std::size_t col = 0; col < d.k; ++col) f.push_back(probs(r, col));
          y.push_back(d.y[r]);
        }
        const auto picked = ecekde::binned_calibration_error(ecekde::ProbsView::row_major(f.data(), rows.size(), d.k),
                                                             ecekde::LabelsView(y), o);
        EXPECT_EQ(statistic.resampled(rows), picked.ce_pow_p) << what << " resample " << replicate;
        const auto relabelled = ecekde::consistency_labels(probs, 5, replicate);
        const auto copy = ecekde::binned_calibration_error(probs, ecekde::LabelsView(relabelled), o);
        EXPECT_EQ(statistic.relabelled(ecekde::LabelsView(relabelled)), copy.ce_pow_p) << what << " copy " << replicate;
      }
    }
}

TEST(Binned, PreparedStatisticRejectsBadRowsAndLabels) {
  const auto d = testdata::softmax_predictions(20, 3, 1);
  const ecekde::BinnedStatistic statistic(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y));
  const std::vector<std::size_t> outside{0, 3, 20}, one{4};
  EXPECT_THROW_MSG(statistic.resampled(outside), "resampled row 2: index 20 is outside [0, 20)");
  EXPECT_THROW_MSG(statistic.resampled(one), "need at least 2 samples, got 1");
  std::vector<std::int64_t> y(d.y.begin(), d.y.end());
  y[7] = 3;
  EXPECT_THROW_MSG(statistic.relabelled(ecekde::LabelsView(y)), "labels row 7: value 3 is outside [0, 3)");
  y.pop_back();
  EXPECT_THROW_MSG(statistic.relabelled(ecekde::LabelsView(y)), "labels has 19 entries but probs has 20 rows");
}

void expect_error(const oracle::Data& d, const BinnedOptions& o, const std::string& message) {
  try {
    run(d, o);
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const ecekde::Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(Binned, ErrorMessages) {
  const auto d = hand_top_label();
  BinnedOptions o;
  o.bins = 0;
  expect_error(d, o, "bins must be between 1 and 65536, got 0");
  o.bins = 65537;
  expect_error(d, o, "bins must be between 1 and 65536, got 65537");
  o = {};
  o.p = 0.5;
  expect_error(d, o, "p must be a finite number >= 1, got 0.5");
  o.maximum = true;  // p is not used by the maximum
  EXPECT_NO_THROW(run(d, o));
  o = {};
  o.form = BinnedForm::debiased;
  expect_error(d, o, "the debiased form estimates CE_2^2 and needs p = 2, got 1");
  o.p = 2;
  o.maximum = true;
  expect_error(d, o, "the debiased form has no maximum (MCE) version");
  o = {};
  o.type = CalibrationType::canonical;
  expect_error(oracle::Data::of(1, {0.2, 0.7}, {0, 1}), o, "type canonical needs at least 2 classes, probs has 1 column");
  o.type = CalibrationType::binary;
  expect_error(oracle::Data::of(3, {0.2, 0.7, 0.1, 0.2, 0.7, 0.1}, {0, 1}), o,
               "type binary needs 1 column (P(y = 1)) or 2 columns, probs has 3 columns");
  o = {};
  expect_error(oracle::Data::of(2, {0.2, 0.8, 0.5, 0.5}, {0, 2}), o, "labels row 1: value 2 is outside [0, 2)");
  expect_error(oracle::Data::of(2, {0.2, 0.7, 0.5, 0.5}, {0, 1}), o,
               "probs row 0 sums to 0.8999999999999999, not 1 (tolerance 1e-06); use renormalize to rescale rows");

  auto message = [](auto f) {
    try {
      f();
    } catch (const ecekde::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { ecekde::parse_name<ecekde::Binning>("quantile"); }),
            "unknown binning 'quantile' (expected equal-width or equal-mass)");
  EXPECT_EQ(message([] { ecekde::parse_name<ecekde::BinnedForm>("kde"); }),
            "unknown binned form 'kde' (expected per-bin, per-sample or debiased)");
  EXPECT_EQ(ecekde::parse_name<ecekde::Binning>("equal_mass"), Binning::equal_mass);
  EXPECT_EQ(ecekde::parse_name<ecekde::BinnedForm>(to_string(BinnedForm::per_sample)), BinnedForm::per_sample);
}

}  // namespace
