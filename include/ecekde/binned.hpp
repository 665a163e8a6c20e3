// The binned calibration error ECE^bin: equal-width or equal-mass bins, L_p or maximum (MCE), for the
// top-label, marginal, binary and canonical (binned simplex, Section 4 of the paper) notions of
// calibration, with the per-bin statistics behind reliability diagrams. See docs/metrics.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde {

/// Where the bin edges of one coordinate (a class's probability, or the top-label confidence) lie.
enum class Binning {
  equal_width,  ///< edges b / B: bin b holds [b/B, (b+1)/B), the last bin also holds 1
  equal_mass,   ///< edges at the sorted scores of ranks floor(b n / B): about n / B scores per bin
};

/// How the binned estimate is formed from the bins (cells for canonical) of the samples.
enum class BinnedForm {
  /// Classic ECE (Naeini et al. 2015, Guo et al. 2017): sum over bins of (n_b / n) ||ybar_b - fbar_b||_p^p,
  /// with ybar_b, fbar_b the mean label (vector) and mean prediction (vector) of bin b.
  per_bin,
  /// The paper's plug-in form: (1/n) sum_i ||H(f_i) - f_i||_p^p, with H(f_i) = ybar of sample i's bin.
  per_sample,
  /// Kumar, Liang & Ma (2019): sum over bins of (n_b / n) sum_d [(ybar_bd - fbar_bd)^2 -
  /// ybar_bd (1 - ybar_bd) / (n_b - 1)], bins with n_b < 2 adding 0; an estimate of CE_2^2 whose
  /// label-noise bias is removed. Only p = 2 and not the maximum.
  debiased,
};

template <>
struct EnumNames<Binning> {
  static constexpr std::string_view what = "binning";
  static constexpr std::pair<Binning, std::string_view> names[] = {{Binning::equal_width, "equal-width"},
                                                                   {Binning::equal_mass, "equal-mass"}};
};

template <>
struct EnumNames<BinnedForm> {
  static constexpr std::string_view what = "binned form";
  static constexpr std::pair<BinnedForm, std::string_view> names[] = {{BinnedForm::per_bin, "per-bin"},
                                                                      {BinnedForm::per_sample, "per-sample"},
                                                                      {BinnedForm::debiased, "debiased"}};
};

/// Options of binned_calibration_error().
struct BinnedOptions {
  CalibrationType type = CalibrationType::top_label;
  double p = 1.0;          ///< order of the norm, any real p >= 1 (not used when maximum is set)
  bool maximum = false;    ///< maximum calibration error (MCE): the p -> infinity limit of the form
  Binning binning = Binning::equal_width;
  /// Bins per coordinate (>= 1); empty = Doane's formula, separately for every coordinate.
  std::optional<std::size_t> bins = 15;
  /// empty = per_sample for canonical (the paper's Figure 2), per_bin for the other types (classic ECE).
  std::optional<BinnedForm> form;
  bool renormalize = false;  ///< divide each row by its sum instead of rejecting it
};

/// One occupied bin of one coordinate: what a reliability diagram draws.
struct ReliabilityBin {
  std::size_t index = 0;       ///< bin number b in [0, B)
  double lower = 0, upper = 0; ///< the bin holds scores in [lower, upper) (the last bin also holds upper)
  std::size_t count = 0;       ///< samples in the bin (> 0)
  double mean_confidence = 0;  ///< mean score of those samples
  double mean_label = 0;       ///< fraction of them whose label is positive (accuracy, for top-label)
};

/// One occupied cell of the canonical grid: the bins of every class, and the cell's means.
struct SimplexCell {
  std::vector<std::uint32_t> bins;     ///< bin number per class
  std::size_t count = 0;               ///< samples in the cell (> 0)
  std::vector<double> mean_prediction; ///< mean probability vector of those samples (K entries)
  std::vector<double> mean_label;      ///< their label frequencies, H(f) of the cell (K entries)
};

/// One binned estimate and the bins behind it.
struct BinnedResult {
  CalibrationType type = CalibrationType::top_label;
  Binning binning = Binning::equal_width;
  BinnedForm form = BinnedForm::per_bin;
  double p = 1;
  bool maximum = false;
  /// L_p: the estimate of CE_p^p. maximum: the MCE (equal to ce). debiased: the estimate of CE_2^2,
  /// which can be negative.
  double ce_pow_p = 0;
  /// L_p: (ce_pow_p)^(1/p). maximum: the MCE. debiased: sqrt(max(ce_pow_p, 0)).
  double ce = 0;
  std::size_t n = 0;  ///< samples
  std::size_t k = 0;  ///< columns of the input
  /// Bin edges per binned coordinate (B + 1 non-decreasing values from 0 to 1): one coordinate for
  /// top-label and binary (its score), one per class for marginal and canonical.
  std::vector<std::vector<double>> edges;
  /// Reliability diagram per one-dimensional problem (top-label, binary: one; marginal: one per class),
  /// occupied bins only, in increasing order. Empty for canonical.
  std::vector<std::vector<ReliabilityBin>> diagrams;
  /// Canonical only: the occupied cells, in lexicographic order of their bins. Empty for a canonical estimate
  /// from each rank's own rows (the report's under own rows): the cells' means are O(n K).
  std::vector<SimplexCell> cells;
  /// Occupied bins over every problem's diagram, or occupied cells (canonical).
  std::size_t occupied = 0;
  /// Marginal only: each class's contribution (L_p, debiased: summed into ce_pow_p; maximum: the
  /// class's MCE, whose largest is ce).
  std::vector<double> class_ce_pow_p;
};

/// The binned calibration error of `probs` (n x K, or one column P(y = 1) for binary) against `labels`.
/// Throws Error with a one-line message on bad input.
BinnedResult binned_calibration_error(ProbsView probs, LabelsView labels, const BinnedOptions& options = {});

/// A binned estimate prepared for resampling. The input is read, checked and reduced to its scores once, so
/// that the statistic of a bootstrap resample costs O(n d) (d binned coordinates per sample: 1 for
/// top-label and binary, K for marginal and canonical) and that of a relabelled copy O(n) per problem,
/// because a copy keeps the data's bins and cells (they depend on the scores alone). Each value is bitwise
/// binned_calibration_error(...).ce_pow_p of the resampled rows or of the data with the other labels: the
/// statistic that bootstrap() and calibration_test() evaluate on copies of the input, at the cost of one
/// n x K copy and check per replicate. Thread-safe, for replicates in parallel.
class BinnedStatistic {
 public:
  /// Throws Error with a one-line message on bad input, as binned_calibration_error().
  BinnedStatistic(ProbsView probs, LabelsView labels, const BinnedOptions& options = {});
  /// A one-dimensional estimate (top-label, binary, or one class of marginal: options.type) prepared from
  /// each sample's score on that coordinate and hits[i] = 1 where its label is the coordinate's positive
  /// class, as the ranks of a distributed run gather or own them. Its values are bitwise those of the
  /// predictions' own problem; k is the input's column count (result().k). The scores are taken as checked.
  BinnedStatistic(std::span<const double> scores, std::span<const std::uint8_t> hits, std::size_t k,
                  const BinnedOptions& options);
  ~BinnedStatistic();
  BinnedStatistic(BinnedStatistic&&) noexcept;
  BinnedStatistic& operator=(BinnedStatistic&&) noexcept;

  /// The estimate on the data as given.
  const BinnedResult& result() const;
  /// ce_pow_p (the MCE for maximum) on these rows of the data, repeats allowed (a bootstrap resample).
  double resampled(std::span<const std::size_t> rows) const;
  /// ce_pow_p of the data with these labels instead of its own (a relabelled copy).
  double relabelled(LabelsView labels) const;
  /// ce_pow_p of a one-dimensional estimate whose samples' labels hit their positive class where hits[i] = 1.
  double relabelled_hits(std::span<const std::uint8_t> hits) const;

 private:
  struct State;
  void finish();
  std::unique_ptr<State> state_;
};

/// Doane's number of bins for the scores x (n >= 1): ceil(1 + log2 n + log2(1 + |g1| / s_g1)) with g1
/// the sample skewness m3 / m2^(3/2) and s_g1 = sqrt(6 (n - 2) / ((n + 1) (n + 3))); the skewness term
/// is 0 when n <= 2 or all scores are equal.
std::size_t doane_bins(std::span<const double> x);

}  // namespace ecekde
