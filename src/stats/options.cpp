// The option tables of the synthetic-data generator (include/ecekde/options.hpp).
#include "ecekde/options.hpp"

namespace ecekde::options {

const std::vector<Option<SyntheticModel>>& synthetic_model_options() {
  using O = SyntheticModel;
  static const std::vector<Option<O>> table{
      describe<&O::classes>({.name = "classes", .help = "Number of classes K >= 2", .example = "3"}),
      describe<&O::t1>({.name = "t1",
                        .help = "Temperature of the calibrated model p1 = T_t1(u); < 1 pushes it to the faces",
                        .example = "0.8"}),
      describe<&O::t2>({.name = "t2",
                        .help = "Temperature applied to p1 for the predictions; < 1 overconfident, > 1 "
                                "underconfident, 1 calibrated",
                        .example = "1.5"}),
  };
  return table;
}

const std::vector<Option<GroundTruthOptions>>& ground_truth_options() {
  using O = GroundTruthOptions;
  static const std::vector<Option<O>> table{
      describe<&O::p>({.name = "p", .help = "Order of the L_p norm, any real p >= 1", .example = "2"}),
      describe<&O::canonical_samples>(
          {.name = "canonical_samples", .help = "Monte Carlo samples of the canonical truth", .example = "4096"}),
      describe<&O::inner_samples>(
          {.name = "inner_samples",
           .help = "Samples of the other classes' shape in the marginal and top-label integrals",
           .example = "256"}),
      describe<&O::jackknife_groups>(
          {.name = "jackknife_groups", .help = "Jackknife groups for the standard errors (>= 2)", .example = "8"}),
      describe<&O::seed>({.name = "seed", .help = "Seed of the generator", .example = "7"}),
      describe<&O::threads>({.name = "threads", .help = "Worker threads; 0 = every hardware thread", .example = "1"}),
  };
  return table;
}

}  // namespace ecekde::options
