// The option tables of the metrics (include/ecekde/options.hpp): binned ECE, MMCE, temperature scaling.
#include "ecekde/options.hpp"

namespace ecekde::options {

const std::vector<Option<BinnedOptions>>& binned_options() {
  using O = BinnedOptions;
  static const std::vector<Option<O>> table{
      describe<&O::type>({.name = "type",
                          .help = "What calibration to measure: top-label, marginal (summed over classes), binary, "
                                  "or canonical (a grid of per-class bins over the simplex)",
                          .example = "marginal"}),
      describe<&O::p>({.name = "p", .help = "Order of the L_p norm, any real p >= 1", .example = "2"}),
      describe<&O::maximum>(
          {.name = "maximum", .help = "The maximum calibration error (MCE) instead of the L_p average", .example = "true"}),
      describe<&O::binning>({.name = "binning", .help = "Bin edges: equal-width or equal-mass", .example = "equal-mass"}),
      describe<&O::bins>({.name = "bins",
                          .help = "Bins per coordinate (>= 1), or Doane's formula per coordinate",
                          .example = "doane",
                          .none = "Doane's formula",
                          .none_word = "doane"}),
      describe<&O::form>({.name = "form",
                          .help = "per-bin (classic ECE), per-sample (the paper's plug-in form) or debiased (Kumar "
                                  "et al. 2019, p = 2)",
                          .example = "per-sample",
                          .none = "per-sample for canonical, per-bin otherwise",
                          .none_word = "auto"}),
      describe<&O::renormalize>(
          {.name = "renormalize",
           .help = "Divide each probability row by its sum instead of rejecting rows that do not sum to 1",
           .example = "true"}),
  };
  return table;
}

const std::vector<Option<MmceOptions>>& mmce_options() {
  using O = MmceOptions;
  static const std::vector<Option<O>> table{
      describe<&O::weighted>(
          {.name = "weighted",
           .help = "The weighted MMCE_w, which normalises correct and wrong predictions by their own counts",
           .example = "true"}),
      describe<&O::kernel_width>(
          {.name = "kernel_width", .help = "Width w of MMCE's Laplacian kernel exp(-|r - r'| / w)", .example = "0.2"}),
      describe<&O::gradient>(
          {.name = "gradient", .help = "Also compute the gradients with respect to the probabilities", .example = "false"}),
  };
  return table;
}

const std::vector<Option<TemperatureOptions>>& temperature_options() {
  using O = TemperatureOptions;
  static const std::vector<Option<O>> table{
      describe<&O::min_temperature>(
          {.name = "min_temperature", .help = "Lower end of the search interval for T", .example = "0.01"}),
      describe<&O::max_temperature>(
          {.name = "max_temperature", .help = "Upper end of the search interval for T", .example = "100"}),
  };
  return table;
}

const std::vector<Option<ReliabilityOptions>>& reliability_options() {
  using O = ReliabilityOptions;
  using X = ExecutionOptions;
  static const std::vector<Option<O>> table{
      describe<&O::type>({.name = "type",
                          .help = "Which diagrams: top-label (one), binary (one, of P(y = 1)) or marginal (one per "
                                  "class)",
                          .example = "marginal"}),
      describe<&O::p>({.name = "p", .help = "Order of the L_p error terms shown", .example = "2"}),
      describe<&O::binning>({.name = "binning", .help = "Bin edges: equal-width or equal-mass", .example = "equal-mass"}),
      describe<&O::bins>({.name = "bins",
                          .help = "Bins per diagram (>= 1), or Doane's formula per diagram",
                          .example = "doane",
                          .none = "Doane's formula",
                          .none_word = "doane"}),
      describe<&O::bandwidth>({.name = "bandwidth",
                               .help = "Bandwidth h > 0 of the curve (the paper's kernel estimate of E[y | score]) "
                                       "and of the ECE^KDE terms, or automatic (the paper's leave-one-out likelihood)",
                               .example = "0.05",
                               .none = "automatic",
                               .none_word = "auto"}),
      describe<&O::level>(
          {.name = "level", .help = "Probability of the per-bin Wilson intervals", .example = "0.9"}),
      describe<&O::curve_points>(
          {.name = "curve_points", .help = "Points of the curve over the observed scores (>= 2)", .example = "50"}),
      describe<&O::execution, &X::threads>(
          {.name = "threads", .help = "Worker threads; 0 = every hardware thread", .example = "1"}),
  };
  return table;
}

const std::vector<Option<SimplexOptions>>& simplex_options() {
  using O = SimplexOptions;
  using X = ExecutionOptions;
  static const std::vector<Option<O>> table{
      describe<&O::p>({.name = "p", .help = "Order of the L_p error terms shown", .example = "2"}),
      describe<&O::bins>(
          {.name = "bins", .help = "Equal-width bins per class of the binned simplex histogram (>= 1)", .example = "4"}),
      describe<&O::bandwidth>({.name = "bandwidth",
                               .help = "Bandwidth h > 0 of the Dirichlet kernel density and of the ECE^KDE term, or "
                                       "automatic (the paper's leave-one-out likelihood)",
                               .example = "0.05",
                               .none = "automatic",
                               .none_word = "auto"}),
      describe<&O::grid>({.name = "grid",
                          .help = "Segments per side of the triangular grid whose centroids the density is read "
                                  "at (>= 1)",
                          .example = "20"}),
      describe<&O::execution, &X::threads>(
          {.name = "threads", .help = "Worker threads; 0 = every hardware thread", .example = "1"}),
  };
  return table;
}

}  // namespace ecekde::options
