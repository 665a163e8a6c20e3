// Helpers shared by the convergence, real-data and coverage studies (docs/validation.md, sections 3-6):
// a minimal "--key value" command line, and the set of estimators every study compares.
#pragma once

#include <array>
#include <cstddef>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ecekde/binned.hpp"
#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/synthetic.hpp"

namespace study {

/// The first four comma-separated fields of every data line of a CSV file (header skipped; nothing if
/// the file is absent): the keys of the rows a resumable study has already written.
inline std::vector<std::array<std::string, 4>> written_keys(const std::string& path) {
  std::vector<std::array<std::string, 4>> keys;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::array<std::string, 4> key;
    for (auto& field : key) std::getline(s, field, ',');
    if (!key[3].empty()) keys.push_back(key);
  }
  return keys;
}

/// The model's true CE_p^p for the estimators' calibration type (binary is not part of the studies).
inline double truth_of(const ecekde::GroundTruth& g, ecekde::CalibrationType type) {
  switch (type) {
    case ecekde::CalibrationType::canonical: return g.canonical.value;
    case ecekde::CalibrationType::marginal: return g.marginal.value;
    default: return g.top_label.value;
  }
}

/// "--key value" pairs; every key must be one of `known` (a typo fails instead of being ignored).
class Arguments {
 public:
  Arguments(int argc, char** argv, const std::vector<std::string>& known) {
    for (int i = 1; i < argc; ++i) {
      const std::string key = argv[i];
      bool ok = false;
      for (const auto& k : known) ok = ok || key == "--" + k;
      if (!ok) ecekde::fail("unknown option " + key);
      if (i + 1 >= argc) ecekde::fail("missing value after " + key);
      values_[key.substr(2)] = argv[++i];
    }
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  double number(const std::string& key, double fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : std::stod(it->second);
  }
  template <class T>
  std::vector<T> list(const std::string& key, const std::string& fallback) const {
    std::vector<T> out;
    std::stringstream in(text(key, fallback));
    for (std::string item; std::getline(in, item, ',');) out.push_back(static_cast<T>(std::stod(item)));
    return out;
  }
  std::vector<std::string> words(const std::string& key, const std::string& fallback) const {
    std::vector<std::string> out;
    std::stringstream in(text(key, fallback));
    for (std::string item; std::getline(in, item, ',');) out.push_back(item);
    return out;
  }

 private:
  std::map<std::string, std::string> values_;
};

/// One estimator's value on one data set.
struct Estimate {
  std::string estimator;  ///< e.g. "kde-mle", "kde-reg-debiased", "bin-15", "bin-doane"
  double p = 1;
  double value = 0;       ///< the estimate of CE_p^p
  double bandwidth = 0;   ///< KDE: the chosen h (0 for binned)
  std::size_t excluded_rows = 0;  ///< debiased form: rows left out
};

/// The estimators compared throughout, on one data set and one calibration type:
///   kde-mle           the paper's ECE^KDE: plug-in form, h by LOO likelihood (ecekde's default)
///   kde-reg           plug-in form, h by LOO cross-validation of the regression (loo-regression)
///   kde-mle-debiased  debiased form (p = 2 only) at the LOO-likelihood h
///   kde-reg-debiased  debiased form (p = 2 only) at the loo-regression h
///   bin-B, bin-doane  ECE^bin, B equal-width bins per class or Doane's rule, in the library's default
///                     form for the type (canonical: the paper's per-sample form; otherwise per bin)
/// Each KDE bandwidth is chosen once and shared by the p values, as estimate() would choose it, with the
/// criterion averaged over at most selection_rows rows (BandwidthOptions::max_rows).
inline std::vector<Estimate> estimate_all(ecekde::ProbsView probs, ecekde::LabelsView labels,
                                          ecekde::CalibrationType type, const std::vector<double>& ps,
                                          const std::vector<std::size_t>& bins, std::size_t selection_rows,
                                          int threads) {
  std::vector<Estimate> out;
  ecekde::ExecutionOptions execution;
  execution.threads = threads;
  const std::pair<const char*, ecekde::BandwidthCriterion> criteria[] = {
      {"kde-mle", ecekde::BandwidthCriterion::loo_likelihood},
      {"kde-reg", ecekde::BandwidthCriterion::loo_regression}};
  for (const auto& [name, criterion] : criteria) {
    ecekde::BandwidthOptions selection;
    selection.criterion = criterion;
    selection.max_rows = selection_rows;
    const double h = ecekde::select_bandwidth(probs, labels, type, selection, execution).bandwidth;
    for (double p : ps) {
      ecekde::EstimateOptions o;
      o.type = type;
      o.p = p;
      o.bandwidth = h;
      o.execution = execution;
      out.push_back({name, p, ecekde::estimate(probs, labels, o).ce_pow_p, h, 0});
      if (p != 2) continue;
      o.form = ecekde::KdeForm::debiased;
      const auto r = ecekde::estimate(probs, labels, o);
      out.push_back({std::string(name) + "-debiased", p, r.ce_pow_p, h, r.excluded_rows});
    }
  }
  std::vector<std::optional<std::size_t>> bin_choices(bins.begin(), bins.end());
  bin_choices.push_back(std::nullopt);  // Doane's rule
  for (const auto& b : bin_choices)
    for (double p : ps) {
      ecekde::BinnedOptions o;
      o.type = type;
      o.p = p;
      o.bins = b;
      out.push_back({b ? "bin-" + std::to_string(*b) : "bin-doane", p,
                     ecekde::binned_calibration_error(probs, labels, o).ce_pow_p, 0, 0});
    }
  return out;
}

}  // namespace study
