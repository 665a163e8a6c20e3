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

}  // namespace ecekde::options
