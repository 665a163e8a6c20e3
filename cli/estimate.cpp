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
#include "ecekde/parameters.hpp"
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
  std::string form = std::string(to_string(EstimateOptions{}.form));
  std::string estimator = std::string(to_string(EstimateOptions{}.estimator));
  bool json = false;

  void run() const {
    const std::optional<CalibrationType> named = parse_type(type);
    EstimateOptions o = options;
    o.bandwidth = parse_bandwidth(bandwidth);
    o.bandwidth_selection.criterion = parse_bandwidth_criterion(criterion);
    o.form = parse_kde_form(form);
    o.estimator = parse_estimator(estimator);
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
  namespace param = parameters;
  sub->add_option(param::cli_flag(param::estimator), cmd->estimator, std::string(param::estimator.help))
      ->type_name("NAME")
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::estimate_level), cmd->options.level, std::string(param::estimate_level.help))
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::type), cmd->type,
                  std::string(param::type.help) + ", or all (every type that applies to the input's K)")
      ->type_name("NAME")
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::p), cmd->options.p, std::string(param::p.help))
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::bandwidth), cmd->bandwidth,
                  std::string(param::bandwidth.help) + " ('auto')")
      ->type_name("auto|H")
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::criterion), cmd->criterion, std::string(param::criterion.help))
      ->type_name("NAME")
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::grid), cmd->options.bandwidth_selection.grid,
                  std::string(param::grid.help) + ", comma-separated")
      ->delimiter(',')
      ->type_name("H,H,...");
  sub->add_flag_callback(
      param::cli_flag(param::refine, "--no-"), [cmd] { cmd->options.bandwidth_selection.refine = false; },
      "Take the best grid point as it is. Without this flag: " + std::string(param::refine.help));
  sub->add_option(param::cli_flag(param::max_rows), cmd->options.bandwidth_selection.max_rows,
                  std::string(param::max_rows.help))
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::kde_form), cmd->form, std::string(param::kde_form.help))
      ->type_name("NAME")
      ->capture_default_str();
  sub->add_flag(param::cli_flag(param::renormalize), cmd->options.renormalize,
                std::string(param::renormalize.help));
  sub->add_option(param::cli_flag(param::threads), cmd->options.execution.threads,
                  std::string(param::threads.help))
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::block_size), cmd->options.execution.block_size,
                  std::string(param::block_size.help))
      ->capture_default_str();
  sub->add_option(param::cli_flag(param::isa), cmd->options.execution.isa, std::string(param::isa.help));
  sub->add_flag("--json", cmd->json,
                "Print one JSON document (full double precision) instead of the table");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace ecekde::cli
