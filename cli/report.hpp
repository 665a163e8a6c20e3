// ecekde report: every estimator of the library on one set of predictions: the default (crossfit) estimate
// with its interval, then the paper's ECE^KDE and the baselines with bootstrap intervals and
// consistency-resampling p-values. The computation (report.cpp), its text and JSON forms
// (report_output.cpp) and its figures (report_plots.cpp) share these types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/data.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/mmce.hpp"
#include "progress.hpp"

namespace ecekde::cli::report {

/// What the report computes; defaults from the library's option structs.
struct Settings {
  double p = EstimateOptions{}.p;                        ///< order of ECE^KDE and of the binned L_p ECE
  std::size_t replicates = BootstrapOptions{}.replicates;  ///< B of every interval and test; 0 = none
  double level = BootstrapOptions{}.level;
  std::uint64_t seed = BootstrapOptions{}.seed;
  std::size_t bins = *BinnedOptions{}.bins;  ///< bins of the top-label (and binary) binned estimates
  int threads = ExecutionOptions{}.threads;
};

/// Accuracy and proper scores of the predictions (one column P(y = 1) is read as [1 - p, p]).
struct Summary {
  std::size_t n = 0, k = 0;
  double accuracy = 0;         ///< fraction with argmax (ties: lowest class) equal to the label
  double mean_confidence = 0;  ///< mean of the largest probability
  double nll = 0;              ///< mean -log f_y, with f_y below DBL_MIN read as DBL_MIN
  double brier = 0;            ///< mean sum_c (f_c - 1[y = c])^2
};

/// A bootstrap interval and a calibration test of one statistic S, the "p-th power" form (CE_p^p, the
/// MCE itself, the debiased CE_2^2, MMCE^2); `root` maps it to the reported value.
struct Uncertainty {
  double lower_pow = 0, upper_pow = 0;  ///< percentile interval of S
  double lower = 0, upper = 0;          ///< the same mapped by the increasing root
  double statistic = 0;                 ///< S on the data (the test's statistic)
  double p_value = 1;
};

struct KdeEntry {
  Result result;
  std::optional<Uncertainty> uncertainty;
};

struct BinnedEntry {
  BinnedOptions options;
  BinnedResult result;
  std::optional<Uncertainty> uncertainty;
};

struct MmceEntry {
  MmceOptions options;
  MmceResult result;
  std::optional<Uncertainty> uncertainty;
};

struct Report {
  Settings settings;
  Summary summary;
  std::vector<Result> crossfit;     ///< the default estimator with its own interval, per KDE type
  std::vector<KdeEntry> kde;        ///< the paper's ECE^KDE: canonical, marginal, top-label, binary (as apply)
  std::vector<BinnedEntry> binned;  ///< see binned_plan()
  std::optional<MmceEntry> mmce;    ///< K >= 2
};

/// The KDE types the report runs for K columns: K = 1: binary; K = 2: all four; K > 2: all but binary.
std::vector<CalibrationType> kde_types(std::size_t k);

/// The binned estimates the report runs for K columns. K >= 2: top-label with `bins` equal-width bins
/// (L_p, MCE), equal-mass bins (L_p, MCE, debiased L2), marginal and canonical with Doane's bins per
/// class (equal width; canonical in the paper's per-sample form); K = 2 adds binary with `bins`
/// equal-width bins. K = 1: the top-label rows for the binary type instead.
std::vector<BinnedOptions> binned_plan(std::size_t k, const Settings& settings);

/// A binned estimate in words: "top-label, 15 equal-width bins, L1", "canonical, Doane bins, per-sample L1".
std::string describe(const BinnedOptions& options);

/// Runs every estimator (stages shown by `progress`). The predictions must be valid (they are checked
/// by the library, which throws Error).
Report compute(ProbsView probs, LabelsView labels, const Settings& settings, Progress& progress);

/// The summary of the predictions (valid labels required).
Summary summarize(ProbsView probs, LabelsView labels);

/// What the input was, for the heading and the JSON document.
struct InputDescription {
  nlohmann::ordered_json files;       ///< as inputs_json()
  std::string probs_dtype;            ///< float32 or float64
  std::vector<std::int64_t> classes;  ///< --classes, if given
  bool renormalized = false;
};

/// The report as aligned tables.
void print_text(std::ostream& out, const Report& report, const InputDescription& input,
                const std::vector<std::string>& plots);

/// The report as one JSON document (every number a full double).
nlohmann::ordered_json to_json(const Report& report, const InputDescription& input,
                               const std::vector<std::string>& plots);

/// Writes the figures into `directory` (created if missing) and returns their paths: the top-label
/// (binary for one column) reliability diagram, the per-class diagrams (K >= 2), and for K = 3 the
/// simplex view. class_names name the columns.
std::vector<std::string> write_plots(ProbsView probs, LabelsView labels, const Report& report,
                                     const std::vector<std::string>& class_names, const std::string& directory,
                                     std::size_t simplex_bins);

}  // namespace ecekde::cli::report
