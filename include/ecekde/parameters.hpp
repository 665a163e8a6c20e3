// The parameters of the commands not yet described by an option table (include/ecekde/options.hpp holds
// those of ECE^KDE, the bootstrap and the calibration test): binned ECE, MMCE, temperature scaling, the
// report and synthetic data. The CLI's flags (--name, with '-' for '_') and the Python keywords take their
// names and help texts from here; defaults come from default-constructed option structs.
#pragma once

#include <string>
#include <string_view>

namespace ecekde::parameters {

struct Parameter {
  std::string_view name;  ///< snake_case: the Python keyword; the CLI flag is --name with '-' for '_'
  std::string_view help;  ///< what it means, without the default or a front end's syntax
};

/// The command-line flag of a parameter: "--" + name with '-' for '_' (block_size -> --block-size).
inline std::string cli_flag(const Parameter& parameter, std::string_view prefix = "--") {
  std::string flag(prefix);
  for (char c : parameter.name) flag += c == '_' ? '-' : c;
  return flag;
}

// ---- Shared by the report and the metrics ---------------------------------------------------------------
inline constexpr Parameter p{"p", "Order of the L_p norm, any real p >= 1"};
inline constexpr Parameter renormalize{
    "renormalize", "Divide each probability row by its sum instead of rejecting rows that do not sum to 1"};
inline constexpr Parameter threads{"threads", "Worker threads; 0 = every hardware thread"};

// ---- Bootstrap intervals and the calibration test ------------------------------------------------------
inline constexpr Parameter bootstrap_replicates{"replicates", "Bootstrap replicates B"};
inline constexpr Parameter level{"level", "Probability of the central percentile interval"};
inline constexpr Parameter bootstrap_seed{"seed", "Seed of the resampling: replicate b uses stream (seed, b)"};

// ---- Binned ECE, MMCE, temperature scaling --------------------------------------------------------------
inline constexpr Parameter binned_type{
    "type",
    "What calibration to measure: top-label, marginal (summed over classes), binary, or canonical (a grid of "
    "per-class bins over the simplex)"};
inline constexpr Parameter maximum{"maximum", "The maximum calibration error (MCE) instead of the L_p average"};
inline constexpr Parameter binning{"binning", "Bin edges: equal-width or equal-mass"};
inline constexpr Parameter bins{"bins", "Bins per coordinate (>= 1), or Doane's formula per coordinate"};
inline constexpr Parameter form{
    "form",
    "per-bin (classic ECE), per-sample (the paper's plug-in form) or debiased (Kumar et al. 2019, p = 2); "
    "default: per-sample for canonical, per-bin otherwise"};
inline constexpr Parameter weighted{
    "weighted", "The weighted MMCE_w, which normalises correct and wrong predictions by their own counts"};
inline constexpr Parameter kernel_width{"kernel_width", "Width w of MMCE's Laplacian kernel exp(-|r - r'| / w)"};
inline constexpr Parameter gradient{"gradient", "Also compute the gradients with respect to the probabilities"};
inline constexpr Parameter min_temperature{"min_temperature", "Lower end of the search interval for T"};
inline constexpr Parameter max_temperature{"max_temperature", "Upper end of the search interval for T"};

// ---- Synthetic data with known calibration error --------------------------------------------------------
inline constexpr Parameter classes{"classes", "Number of classes K >= 2"};
inline constexpr Parameter t1{"t1", "Temperature of the calibrated model p1 = T_t1(u); < 1 pushes it to the faces"};
inline constexpr Parameter t2{
    "t2", "Temperature applied to p1 for the predictions; < 1 overconfident, > 1 underconfident, 1 calibrated"};
inline constexpr Parameter synthetic_seed{"seed", "Seed of the generator"};
inline constexpr Parameter canonical_samples{"canonical_samples", "Monte Carlo samples of the canonical truth"};
inline constexpr Parameter inner_samples{
    "inner_samples", "Samples of the other classes' shape in the marginal and top-label integrals"};
inline constexpr Parameter jackknife_groups{"jackknife_groups", "Jackknife groups for the standard errors (>= 2)"};

// ---- Debiasing ------------------------------------------------------------------------------------------
inline constexpr Parameter debiasing{
    "debiasing",
    "Bias correction of the ratio: none, paper (the paper's second-order scheme, Appendices C and D) or "
    "complete (every O(1/n) and O(1/n^2) term)"};

}  // namespace ecekde::parameters
