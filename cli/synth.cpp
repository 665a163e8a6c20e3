// ecekde synth: synthetic predictions whose calibration error is known (the paper's Section 4 model,
// ecekde::generate_synthetic), written as NPY or CSV, and the true CE_p^p of the model
// (ecekde::synthetic_ground_truth) with its errors.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app.hpp"
#include "commands.hpp"
#include "distributed.hpp"
#include "interrupt.hpp"
#include "ecekde/error.hpp"
#include "ecekde/io.hpp"
#include "ecekde/options.hpp"
#include "option_flags.hpp"
#include "ecekde/synthetic.hpp"

namespace ecekde::cli {

namespace {

bool ends_with_ci(const std::string& path, const std::string& ext) {
  if (path.size() < ext.size()) return false;
  for (std::size_t i = 0; i < ext.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(path[path.size() - ext.size() + i])) != ext[i]) return false;
  return true;
}

// Throws UsageError unless `path` (given to `flag`) ends in .npy or .csv.
void check_format(const std::string& flag, const std::string& path) {
  if (!ends_with_ci(path, ".npy") && !ends_with_ci(path, ".csv"))
    throw UsageError(flag + " " + path + ": unsupported extension (expected .npy or .csv)");
}

// n x k values as .npy (float64, shape (n, k)) or .csv (header prefix0, prefix1, ...).
void write_matrix(const std::string& path, const std::vector<double>& values, std::size_t n, std::size_t k,
                  const std::string& prefix) {
  if (ends_with_ci(path, ".npy")) {
    io::write_npy(path, values, {n, k});
    return;
  }
  std::vector<std::string> names;
  for (std::size_t c = 0; c < k; ++c) names.push_back(prefix + std::to_string(c));
  io::write_csv(path, names, values);
}

// n labels as .npy (int64, shape (n,)) or .csv (one column "label").
void write_labels(const std::string& path, const std::vector<std::int64_t>& labels) {
  if (ends_with_ci(path, ".npy")) {
    io::write_npy(path, labels, {labels.size()});
    return;
  }
  io::write_csv(path, {"label"}, std::vector<double>(labels.begin(), labels.end()));
}

std::string sci(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

nlohmann::ordered_json truth_json(const TruthValue& t) {
  return {{"value", t.value}, {"standard_error", t.standard_error}, {"quadrature_error", t.quadrature_error}};
}

struct SynthCommand {
  std::size_t n = 0;
  OptionFlags flags;  // the model's options and the ground truth's, but --p and --seed (below)
  std::uint64_t seed = 0;
  std::string probs, labels, calibrated;
  std::vector<double> ps{GroundTruthOptions{}.p};
  bool no_truth = false, json = false;

  void run() {
    require_one_process("synth");
    SyntheticModel model;
    flags.apply(options::synthetic_model_options(), model);
    GroundTruthOptions truth;
    flags.apply(options::ground_truth_options(), truth);
    check_format("--probs", probs);
    check_format("--labels", labels);
    if (!calibrated.empty()) check_format("--calibrated", calibrated);
    const SyntheticData data = generate_synthetic(model, n, seed, truth.threads);
    stop_if_interrupted();
    write_matrix(probs, data.probs, data.n, data.k, "p");
    write_labels(labels, data.labels);
    if (!calibrated.empty()) write_matrix(calibrated, data.calibrated, data.n, data.k, "calibrated_");

    std::vector<GroundTruth> truths;
    truth.seed = seed;
    if (!no_truth)
      for (double p : ps) {
        truth.p = p;
        truths.push_back(synthetic_ground_truth(model, truth));
      }
    stop_if_interrupted();

    if (json) {
      nlohmann::ordered_json doc = {{"ecekde_version", ECEKDE_VERSION}, {"command", "synth"}};
      doc["model"] = {{"classes", model.classes}, {"t1", model.t1}, {"t2", model.t2}};
      doc["n"] = n;
      doc["seed"] = seed;
      doc["files"] = {{"probs", probs}, {"labels", labels}};
      if (!calibrated.empty()) doc["files"]["calibrated"] = calibrated;
      doc["ground_truth"] = nlohmann::ordered_json::array();
      for (const GroundTruth& g : truths)
        doc["ground_truth"].push_back({{"p", g.p},
                                       {"canonical", truth_json(g.canonical)},
                                       {"marginal", truth_json(g.marginal)},
                                       {"top-label", truth_json(g.top_label)}});
      if (!truths.empty())
        doc["ground_truth_options"] = {{"canonical_samples", truth.canonical_samples},
                                       {"inner_samples", truth.inner_samples},
                                       {"jackknife_groups", truth.jackknife_groups},
                                       {"seed", truth.seed}};
      std::cout << doc.dump(2) << '\n';
      return;
    }
    std::cout << "model   K = " << model.classes << ", t1 = " << model.t1 << ", t2 = " << model.t2 << "; n = " << n
              << ", seed = " << seed << '\n';
    std::cout << "wrote   " << probs << " (f), " << labels << " (y)";
    if (!calibrated.empty()) std::cout << ", " << calibrated << " (E[y | f])";
    std::cout << '\n';
    if (truths.empty()) return;
    std::cout << "\ntrue CE_p^p of the model\n";
    std::cout << "type        p     truth        std. error   quadrature error\n";
    for (const GroundTruth& g : truths)
      for (auto [name, t] : {std::pair{"canonical", g.canonical}, {"marginal", g.marginal}, {"top-label", g.top_label}})
        std::cout << name << std::string(12 - std::string(name).size(), ' ') << sci(g.p, "%-6g")
                  << sci(t.value, "%-13.7f") << sci(t.standard_error, "%-13.2e")
                  << (std::string(name) == "canonical" ? "-" : sci(t.quadrature_error, "%.2e")) << '\n';
  }
};

}  // namespace

void register_synth(CLI::App& app) {
  auto cmd = std::make_shared<SynthCommand>();
  CLI::App* sub = app.add_subcommand(
      "synth",
      "Write synthetic predictions with a known calibration error (the paper's Section 4 model: u uniform on "
      "the simplex, p1 = T_t1(u), y ~ p1, f = T_t2(p1), so E[y | f] = p1) and print the model's true CE_p^p");
  const auto help_of = [](std::string_view name) {
    return std::string(options::find(options::ground_truth_options(), name)->help);
  };
  sub->add_option("--n", cmd->n, "Samples (>= 1)")->required();
  cmd->flags.add(*sub, options::synthetic_model_options());
  sub->add_option("--seed", cmd->seed, help_of("seed") + " (also seeds the truth's Monte Carlo)")
      ->capture_default_str();
  sub->add_option("--probs", cmd->probs, "Where to write the predictions f, shape (n, K): .npy (float64) or .csv")
      ->required()
      ->type_name("FILE");
  sub->add_option("--labels", cmd->labels, "Where to write the labels y, shape (n,): .npy (int64) or .csv")
      ->required()
      ->type_name("FILE");
  sub->add_option("--calibrated", cmd->calibrated,
                  "Also write p1 = E[y | f], shape (n, K): .npy (float64) or .csv")
      ->type_name("FILE");
  sub->add_option("--p", cmd->ps, help_of("p") + "; the truth is computed for each p given, comma-separated (default 1)")
      ->delimiter(',')
      ->type_name("P,P,...");
  cmd->flags.add(*sub, options::ground_truth_options(), options::uses::all, {}, {"p", "seed"});
  sub->add_flag("--no-truth", cmd->no_truth, "Only write the data; do not compute the ground truth");
  sub->add_flag("--json", cmd->json, "Print one JSON document (full double precision) instead of the table");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace ecekde::cli
