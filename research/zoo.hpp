// A zoo of synthetic classifiers whose calibration map E[y | f] is known in closed form, and their true
// calibration errors computed without any estimator of the library: used by the accuracy tests and by
// the validation experiment (docs/validation.md). Research code: not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ecekde/data.hpp"
#include "ecekde/random.hpp"

namespace ecekde::research {

/// How the predictions f are distributed.
enum class Base {
  dirichlet,         ///< Dirichlet(param, ..., param): flat at 1, peaked towards the vertices below 1
  logits,            ///< softmax of K independent N(0, param^2) logits
  peaked,            ///< softmax of N(0, 1) logits with param added to one class drawn uniformly (NN-like)
  imbalanced,        ///< Dirichlet(param * (K - c) / K + 0.1) for class c: classes of decreasing weight
  tempered_uniform,  ///< T_param(u) with u uniform on the simplex (the paper's Section 4 predictions)
  gaussian_classes,  ///< labels first: y uniform, logits 2 N(0, 1) plus param + 2 N(0, 1) on class y, f their
                     ///< softmax at temperature 0.6 (bench/imagenet_like.py's generator; param = 9 there)
  truncated_logits,  ///< softmax of K N(0, param^2) logits over the largest ceil(K / 3) (at least 2) only, the
                     ///< other classes exactly 0: top-k outputs, probabilities rounded or underflowed to 0
};

/// The calibration map q = E[y | f].
enum class Map {
  identity,     ///< calibrated
  temperature,  ///< softmax(log f / param): param > 1 means f is overconfident
  class_bias,   ///< softmax(log f + b), b_c ~ N(0, param^2) drawn with the model's seed
  top_power,    ///< only the top class moves, q_top = f_top^param, the others rescaled in proportion
  mix_uniform,  ///< (1 - param) f + param / K: f overconfident towards every vertex
  wiggle,       ///< f_c (1 + param sin(2 pi f_c)), renormalised: not monotone, not a temperature map
  confusion,    ///< softmax(W log f) with W = I + param N(0, 1) (seeded): classes confused with each other
  posterior,    ///< P(y | f) of Base::gaussian_classes, in closed form (that base only)
  // Local maps (research::local_maps): no parametric recalibration follows them. Each first tempers f by
  // ZooModel::pre_temperature (1: not at all), then moves it locally; places and classes come from the seed.
  bump,    ///< `count` bumps: q = (1 - s) f + s e_t, s = param exp(-||f - c||^2 / (2 scale^2)), c a draw of the
           ///< base, t a drawn class (several bumps: applied in turn)
  step,    ///< where f_j > scale for a drawn class j: q = (1 - param) f + param e_{j+1}, else q = f
  ripple,  ///< f_c (1 + param sin(2 pi scale f_c + phase_c)), renormalised: a non-monotone wiggle of frequency scale
};

struct ZooModel {
  std::string name;
  std::size_t k = 3;
  Base base = Base::dirichlet;
  double base_param = 1;
  Map map = Map::identity;
  double map_param = 0;
  std::uint64_t seed = 0;  ///< draws of the map's random parts (class biases, W, local maps' places)
  double scale = 0;            ///< local maps: a bump's width, a step's threshold, a ripple's frequency
  std::size_t count = 1;       ///< Map::bump: how many bumps
  double pre_temperature = 1;  ///< local maps: f tempered first, softmax(log f / pre_temperature)
};

/// n samples: f from the base, q = E[y | f] from the map, y ~ Categorical(q).
struct ZooData {
  std::size_t n = 0, k = 0;
  std::vector<double> probs;         ///< n x K, row-major
  std::vector<double> calibrated;    ///< n x K: q
  std::vector<std::int64_t> labels;  ///< n

  ProbsView probs_view() const { return ProbsView::row_major(probs.data(), n, k); }
  LabelsView labels_view() const { return LabelsView(labels); }
};

ZooData sample(const ZooModel& model, std::size_t n, std::uint64_t seed);

/// q = E[y | f] of one prediction f (K values) under the model's map.
std::vector<double> calibration_map(const ZooModel& model, const double* f);

/// The true CE_p^p of every type, in ecekde::estimate()'s conventions.
struct ZooTruth {
  double p = 1;
  double canonical = 0;  ///< E ||q(f) - f||_p^p: a plain Monte Carlo mean
  double marginal = 0;   ///< sum_c E |E[q_c | f_c] - f_c|^p
  double top_label = 0;  ///< E |E[q_top | f_top] - f_top|^p
  double canonical_standard_error = 0;
};

/// Monte Carlo over `samples` draws of f (no labels are drawn: q is known). The one-dimensional
/// conditional expectations E[q_c | f_c] are local-linear fits over windows of about 2 sqrt(samples)
/// neighbours in sorted order; a value shared by more draws than a window, such as f_c = 0, takes their
/// mean (docs/history.md, Section 7.1, checks them against the exact values of the paper's model). For Base::gaussian_classes the classes are exchangeable and each is a row's label
/// 1 time in K, so its marginal fit pools the (f_c, q_c) pairs of all classes (one map for every class)
/// rather than thinning a window over each class's few labelled rows. One truth per entry of ps.
std::vector<ZooTruth> truth(const ZooModel& model, const std::vector<double>& ps, std::size_t samples = 1 << 20,
                            std::uint64_t seed = 12345);

/// The named family of the validation: calibrated models and a wide range of miscalibrations, at K.
std::vector<ZooModel> family(std::size_t k);

/// An ImageNet-shaped classifier with its calibration map in closed form: Base::gaussian_classes with class
/// separation 9 and Map::posterior. At K = 1,000: top-1 accuracy about 0.81, 3 to 4 points above the mean
/// confidence, and small probabilities too large (f_c = 0.0017 has q_c = 0.0013).
ZooModel imagenet_like(std::size_t k);

/// Models with exact zeros among their predictions (Base::truncated_logits), calibrated and not: the zeros
/// keep their labels' share (q_c = param / K where f_c = 0, mixing with the uniform) or stay zeros
/// (temperature, class biases). docs/history.md, 7.12.
std::vector<ZooModel> saturated(std::size_t k);

/// A model of the family by name (throws std::invalid_argument if unknown).
ZooModel model_named(const std::string& name, std::size_t k);

/// Held-out models: the zoo's bases and maps in combinations and parameters that family() does not use,
/// for K that the accuracy tests do not use (2, 4, 7). Never used to design or tune the estimator; they
/// check that an unseen model holds no surprise (docs/history.md, 7.4).
std::vector<ZooModel> held_out(std::size_t k);

/// Local maps (Map::bump, step, ripple, alone and after a temperature) on Dirichlet predictions, plus a
/// calibrated model, for the consistency study (experiments/consistency). Their parameters (amplitudes,
/// widths, places, thresholds, frequencies) are drawn from `draw`: draw 0 is the design set, the one looked
/// at while changing the estimator; the study reports other draws, never used for design.
std::vector<ZooModel> local_maps(std::size_t k, std::uint64_t draw);

/// A classifier with a few distinct predictions (a lookup table, a tree, a quantised model): cell v
/// predicts f_v with probability pi_v, and its labels follow q_v = f_v^gamma renormalised (gamma = 1:
/// calibrated), so every truth is a finite sum over the cells (docs/history.md, Section 7.8).
struct CellModel {
  std::size_t k = 0;
  std::vector<double> f, q, pi;  ///< cells x K, cells x K, cells
};

/// `cells` cells of K classes, f and pi drawn from `seed` (entries 0.05 + U(0, 1), normalised).
CellModel cell_model(std::size_t cells, std::size_t k, double gamma, std::uint64_t seed);

/// n samples of the cell model (labels y ~ Categorical(q_v)).
ZooData sample(const CellModel& model, std::size_t n, std::uint64_t seed);

/// The exact truths of the cell model, in ecekde::estimate()'s conventions (canonical and marginal
/// coincide: sum_v pi_v sum_c |q_vc - f_vc|^p; top-label: the top class's term).
ZooTruth truth(const CellModel& model, double p);

}  // namespace ecekde::research
