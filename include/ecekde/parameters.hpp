// The user-facing parameters, in one table shared by the front ends: the CLI's flags (--name, with '-'
// for '_') and the Python module's keyword arguments (name) take their names and help texts from here.
// Defaults are not repeated here: every front end reads them from a default-constructed option struct
// (EstimateOptions{}, BootstrapOptions{}, ...), so a default changes in one place.
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

// ---- ECE^KDE (estimate, select_bandwidth, estimate_with_gradient, bootstrap, calibration test) ----------
inline constexpr Parameter estimator{
    "estimator",
    "Which estimator: crossfit (accurate at practical n, with a standard error and interval: a cross-fitted "
    "recalibration map, kernel-smoothed residuals, label noise not counted; see docs/validation.md) or paper "
    "(the paper's ECE^KDE, Eq. 9, exactly as published)"};
inline constexpr Parameter estimate_level{
    "level", "Probability of the crossfit estimator's interval (normal, from its standard error)"};
inline constexpr Parameter type{
    "type",
    "What calibration to measure: canonical (whole probability vector, Dirichlet kernel), marginal (sum over "
    "classes of each class's binary problem), top-label (the top class's confidence and correctness), binary "
    "(one column P(y = 1), or the last of two columns)"};
inline constexpr Parameter p{"p", "Order of the L_p norm, any real p >= 1"};
inline constexpr Parameter bandwidth{
    "bandwidth",
    "Kernel bandwidth h > 0, or automatic: chosen per type by leave-one-out likelihood (paper) or by the "
    "leave-one-out Brier score of the corrected regression (crossfit)"};
inline constexpr Parameter criterion{
    "criterion",
    "Automatic bandwidth criterion: loo-likelihood (the paper's LOO maximum likelihood), reference (as the "
    "authors' code: minus log h per point, favours smaller h) or loo-regression (not the paper's: minus the "
    "leave-one-out Brier score of the kernel regression; needs the labels)"};
inline constexpr Parameter grid{
    "grid",
    "Candidate bandwidths of the automatic choice (default: the paper's 10^linspace(-5,-1,15) and 0.2, 0.4, "
    "0.6, 0.8, 1)"};
inline constexpr Parameter refine{
    "refine", "Refine the best grid point of the automatic choice by a search in log h around it"};
inline constexpr Parameter max_rows{
    "max_rows",
    "Average the automatic choice's criterion over at most this many rows, a random subset with a fixed seed "
    "(each row still scored against all samples); 0 = all rows"};
inline constexpr Parameter kde_form{
    "form",
    "How each row's error is formed: plug-in (the paper's Eq. 9) or debiased (not the paper's; p = 2 only: "
    "the label noise's pairs left out, can be negative; only the estimate itself offers it)"};
inline constexpr Parameter renormalize{
    "renormalize", "Divide each probability row by its sum instead of rejecting rows that do not sum to 1"};
inline constexpr Parameter threads{"threads", "Worker threads; 0 = every hardware thread"};
inline constexpr Parameter block_size{
    "block_size",
    "Rows and centres per block of the pairwise sweep; 0 = automatic (results do not depend on it)"};
inline constexpr Parameter isa{
    "isa", "Force a kernel variant: avx512, avx2 or baseline (default: the best this CPU supports)"};

// ---- Bootstrap intervals and the calibration test ------------------------------------------------------
inline constexpr Parameter bootstrap_replicates{"replicates", "Bootstrap replicates B"};
inline constexpr Parameter level{"level", "Probability of the central percentile interval"};
inline constexpr Parameter bootstrap_seed{"seed", "Seed of the resampling: replicate b uses stream (seed, b)"};
inline constexpr Parameter copies{
    "copies",
    "How the leave-one-out sums treat copies of a sample within one resample: leave-copies-out (copies act as "
    "one weighted sample) or plain (equal to resample, then estimate)"};
inline constexpr Parameter test_replicates{"replicates",
                                           "Relabelled copies B of the consistency-resampling test"};
inline constexpr Parameter test_seed{"seed", "Seed of the relabelling: copy b uses stream (seed, b)"};

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
