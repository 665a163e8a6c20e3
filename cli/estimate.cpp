// ecekde estimate: the L_p calibration error of predictions read from files.
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "inputs.hpp"
#include "output.hpp"

namespace ecekde::cli {

namespace {

// "auto" for an automatic bandwidth, else h in shortest round-trip form.
std::string bandwidth_text(const std::optional<double>& h) {
  if (!h) return "auto";
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, *h).ptr);
}

std::optional<double> parse_bandwidth(const std::string& text) {
  if (text == "auto") return std::nullopt;
  double h = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), h);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    fail("--bandwidth must be 'auto' or a number, got '" + text + "'");
  return h;  // the library checks h > 0
}

// The type --type names, or nothing for "all".
std::optional<CalibrationType> parse_type(const std::string& name) {
  if (name == "all") return std::nullopt;
  try {
    return parse_calibration_type(name);
  } catch (const Error&) {
    fail("unknown --type '" + name + "' (expected canonical, marginal, top-label, binary or all)");
  }
}

// The types to run: the one named, or for "all" every type that applies to K columns (K = 1: binary;
// K = 2: all four; K > 2: all but binary).
std::vector<CalibrationType> chosen_types(std::optional<CalibrationType> named, std::size_t k) {
  if (named) return {*named};
  std::vector<CalibrationType> types;
  for (CalibrationType t : {CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label,
                            CalibrationType::binary}) {
    const bool applies = t == CalibrationType::binary ? k <= 2 : k >= 2;
    if (applies) types.push_back(t);
  }
  if (types.empty()) types.push_back(CalibrationType::canonical);  // K = 0: the library says why not
  return types;
}

struct EstimateCommand {
  InputFlags input;
  EstimateOptions options;  // p, renormalize, grid, execution: bound to flags directly
  std::string type = std::string(to_string(EstimateOptions{}.type));
  std::string bandwidth = bandwidth_text(EstimateOptions{}.bandwidth);
  std::string criterion = std::string(to_string(BandwidthOptions{}.criterion));
  bool json = false;

  void run() const {
    const std::optional<CalibrationType> named = parse_type(type);
    EstimateOptions o = options;
    o.bandwidth = parse_bandwidth(bandwidth);
    o.bandwidth_selection.criterion = parse_bandwidth_criterion(criterion);
    const io::Predictions in = load_inputs(input);
    const ProbsView probs = in.probs.view();

    std::vector<Result> results;
    for (CalibrationType t : chosen_types(named, probs.cols())) {
      o.type = t;
      results.push_back(estimate(probs, in.labels.view(), o));
    }

    if (!json) {
      print_table(std::cout, results);
      return;
    }
    nlohmann::ordered_json doc = {{"ecekde_version", ECEKDE_VERSION}, {"command", "estimate"}};
    doc["input"] = inputs_json(input);
    doc["input"]["n"] = probs.rows();
    doc["input"]["k"] = probs.cols();
    doc["input"]["probs_dtype"] = probs.dtype() == ProbsView::DType::float32 ? "float32" : "float64";
    doc["results"] = nlohmann::ordered_json::array();
    for (const Result& r : results) doc["results"].push_back(result_json(r));
    std::cout << doc.dump(2) << '\n';
  }
};

}  // namespace

void register_estimate(CLI::App& app) {
  auto cmd = std::make_shared<EstimateCommand>();
  CLI::App* sub = app.add_subcommand(
      "estimate", "Estimate the L_p calibration error (ECE^KDE) of predicted probabilities against labels");
  add_input_flags(*sub, cmd->input);
  sub->add_option("--type", cmd->type,
                  "What calibration to measure: canonical (whole probability vector, Dirichlet kernel), "
                  "marginal (sum over classes of each class's binary problem), top-label (the top class's "
                  "confidence and correctness), binary (one column P(y = 1), or the last of two columns), "
                  "or all (every type that applies to the input's K)")
      ->type_name("NAME")
      ->capture_default_str();
  sub->add_option("--p", cmd->options.p, "Order of the L_p norm, any real p >= 1")->capture_default_str();
  sub->add_option("--bandwidth", cmd->bandwidth,
                  "Kernel bandwidth h > 0, or 'auto' to choose it per type by leave-one-out likelihood")
      ->type_name("auto|H")
      ->capture_default_str();
  sub->add_option("--criterion", cmd->criterion,
                  "Automatic bandwidth criterion: loo-likelihood (the paper's LOO maximum likelihood) or "
                  "reference (as the authors' code: minus log h per point, favours smaller h)")
      ->type_name("NAME")
      ->capture_default_str();
  sub->add_option("--grid", cmd->options.bandwidth_selection.grid,
                  "Candidate bandwidths for 'auto', comma-separated (default: the paper's "
                  "10^linspace(-5,-1,15) and 0.2, 0.4, 0.6, 0.8, 1)")
      ->delimiter(',')
      ->type_name("H,H,...");
  sub->add_flag_callback(
      "--no-refine", [cmd] { cmd->options.bandwidth_selection.refine = false; },
      "Take the best grid point as it is, without the search in log h around it");
  sub->add_flag("--renormalize", cmd->options.renormalize,
                "Divide each probability row by its sum instead of rejecting rows that do not sum to 1");
  sub->add_option("--threads", cmd->options.execution.threads, "Worker threads; 0 = every hardware thread")
      ->capture_default_str();
  sub->add_option("--block-size", cmd->options.execution.block_size,
                  "Rows and centres per block of the pairwise sweep; 0 = automatic (results do not depend "
                  "on it)")
      ->capture_default_str();
  sub->add_option("--isa", cmd->options.execution.isa,
                  "Force a kernel variant: avx512, avx2 or baseline (default: the best this CPU supports)");
  sub->add_flag("--json", cmd->json,
                "Print one JSON document (full double precision) instead of the table");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace ecekde::cli
