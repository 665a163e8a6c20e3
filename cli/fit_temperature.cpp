// ecekde fit-temperature: temperature scaling (Guo et al. 2017) from files: fit T by the mean NLL on
// validation logits, and optionally write softmax(logits / T).
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app.hpp"
#include "commands.hpp"
#include "distributed.hpp"
#include "interrupt.hpp"
#include "ecekde/error.hpp"
#include "ecekde/io.hpp"
#include "ecekde/options.hpp"
#include "ecekde/temperature.hpp"
#include "option_flags.hpp"

namespace ecekde::cli {

namespace {

std::string lower_extension(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  std::string ext = dot == std::string::npos || path.find('/', dot) != std::string::npos ? "" : path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// Writes n x k probabilities as .npy (float64, shape (n, k)) or .csv (header p0, p1, ...).
void write_probabilities(const std::string& path, const std::vector<double>& probs, std::size_t n, std::size_t k) {
  const std::string ext = lower_extension(path);
  if (ext == ".npy") {
    io::write_npy(path, probs, {n, k});
  } else if (ext == ".csv") {
    std::vector<std::string> names;
    for (std::size_t c = 0; c < k; ++c) names.push_back("p" + std::to_string(c));
    io::write_csv(path, names, probs);
  } else {
    fail("--apply: " + path + ": unsupported extension (expected .npy or .csv)");
  }
}

std::string g6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct FitTemperatureCommand {
  std::string logits, labels, apply;
  std::optional<double> temperature;
  OptionFlags flags;

  TemperatureOptions fit_options() const {
    TemperatureOptions o;
    flags.apply(options::temperature_options(), o);
    return o;
  }
  bool json = false;

  void run() const {
    require_one_process("fit-temperature");
    if (logits.empty()) throw UsageError("no input: give --logits (and --labels to fit T)");
    if (temperature && !labels.empty()) throw UsageError("give either --labels (to fit T) or --temperature, not both");
    if (!temperature && labels.empty()) throw UsageError("--logits needs --labels (or --temperature with --apply)");
    if (temperature && apply.empty()) throw UsageError("--temperature needs --apply");
    if (!apply.empty() && lower_extension(apply) != ".npy" && lower_extension(apply) != ".csv")
      throw UsageError("--apply " + apply + ": unsupported extension (expected .npy or .csv)");

    const io::Probabilities z = io::read_probabilities(logits);
    const ProbsView view = z.view();
    std::optional<TemperatureFit> fit;
    if (!temperature) {
      const io::Labels y = io::read_labels(labels);
      fit = fit_temperature(view, y.view(), fit_options());
    }
    const double t = temperature ? *temperature : fit->temperature;
    stop_if_interrupted();
    if (!apply.empty()) write_probabilities(apply, apply_temperature(view, t), view.rows(), view.cols());
    if (fit && fit->at_bound)
      std::cerr << "ecekde: warning: the NLL is smallest at the end of the search interval (T = " << g6(t)
                << "); the best T may lie beyond it (see --min-temperature, --max-temperature)\n";

    if (json) {
      nlohmann::ordered_json doc = {{"ecekde_version", ECEKDE_VERSION}, {"command", "fit-temperature"}};
      doc["input"] = {{"logits", logits}};
      if (!labels.empty()) doc["input"]["labels"] = labels;
      doc["input"]["n"] = view.rows();
      doc["input"]["k"] = view.cols();
      doc["input"]["logits_dtype"] = view.dtype() == ProbsView::DType::float32 ? "float32" : "float64";
      doc["temperature"] = t;
      if (fit) {
        doc["fitted"] = true;
        doc["nll"] = fit->nll;
        doc["nll_at_one"] = fit->nll_at_one;
        doc["iterations"] = fit->iterations;
        doc["at_bound"] = fit->at_bound;
        doc["search_interval"] = {fit_options().min_temperature, fit_options().max_temperature};
      } else {
        doc["fitted"] = false;
      }
      if (!apply.empty()) doc["applied"] = apply;
      std::cout << doc.dump(2) << '\n';
      return;
    }
    std::cout << "temperature  " << g6(t) << (fit ? "" : " (given)") << '\n';
    if (fit) {
      std::cout << "NLL          " << g6(fit->nll) << " (at T = 1: " << g6(fit->nll_at_one) << ")\n";
      std::cout << "samples      " << view.rows() << ", classes " << view.cols() << '\n';
    }
    if (!apply.empty()) std::cout << "wrote        softmax(logits / T) to " << apply << '\n';
  }
};

}  // namespace

void register_fit_temperature(CLI::App& app) {
  auto cmd = std::make_shared<FitTemperatureCommand>();
  CLI::App* sub = app.add_subcommand(
      "fit-temperature",
      "Temperature scaling: fit T > 0 minimising the mean NLL of softmax(logits / T) on labelled (validation) "
      "logits; optionally write the scaled probabilities");
  sub->add_option("--logits", cmd->logits,
                  "Logits or log-probabilities, shape (n, K), K >= 2: .npy (float32/float64) or .csv (one row per "
                  "sample, optional header)")
      ->type_name("FILE");
  sub->add_option("--labels", cmd->labels, "Labels in [0, K): .npy (integer) or .csv (one column)")->type_name("FILE");
  sub->add_option("--apply", cmd->apply,
                  "Write softmax(logits / T) to this file: .npy (float64, shape (n, K)) or .csv (header p0, p1, ...)")
      ->type_name("OUT");
  sub->add_option("--temperature", cmd->temperature,
                  "Apply this T instead of fitting one (with --apply; e.g. T fitted on validation, applied to test "
                  "logits)")
      ->type_name("T");
  cmd->flags.add(*sub, options::temperature_options());
  sub->add_flag("--json", cmd->json, "Print one JSON document (full double precision) instead of the text");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace ecekde::cli
