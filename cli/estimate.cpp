// ecekde estimate: the L_p calibration error of predictions read from files.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/options.hpp"
#include "input_flags.hpp"
#include "interrupt.hpp"
#include "distributed.hpp"
#include "progress.hpp"
#include "ecekde/report.hpp"
#include "option_flags.hpp"
#include "output.hpp"

namespace ecekde::cli {

namespace {

// The type --type names, or nothing for "all".
std::optional<CalibrationType> parse_type(const std::string& name) {
  if (name == "all") return std::nullopt;
  try {
    return parse_name<CalibrationType>(name);
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
  OptionFlags flags;
  bool json = false, progress = false;

  void run() const {
    const std::string* type = flags.given("type");
    const std::optional<CalibrationType> named =
        type ? parse_type(*type) : std::optional<CalibrationType>(EstimateOptions{}.type);
    EstimateOptions o;
    flags.apply(options::estimate_options(), o, {"type"});
    o.execution.control = &run_control();
    o.execution.communicator = communicator();
    const io::Predictions in = load_inputs(input);
    const ProbsView probs = in.probs.view();
    // With --own-rows each rank passes its share of the rows; an .npy file is mapped, so a rank reads only
    // the pages of its own rows.
    const RowShare share = own_share(probs, in.labels.view(), o.execution.own_rows);

    Progress shown(prints() && (progress || Progress::stderr_is_terminal()), run_control());
    std::vector<Result> results;
    for (CalibrationType t : chosen_types(named, probs.cols())) {
      o.type = t;
      shown.stage(concat(to_string(o.estimator), " ", to_string(t)),
                  [&] { results.push_back(estimate(share.probs, share.labels, o)); });
    }

    stop_if_interrupted();
    if (!prints()) return;
    if (!json) {
      print_table(std::cout, results);
      return;
    }
    nlohmann::ordered_json doc = {{"ecekde_version", ECEKDE_VERSION}, {"command", "estimate"}};
    doc["input"] = inputs_json(input);
    doc["input"]["n"] = probs.rows();
    doc["input"]["k"] = probs.cols();
    doc["input"]["probs_dtype"] = probs.dtype() == ProbsView::DType::float32 ? "float32" : "float64";
    doc["options"] = OptionFlags::values_json(options::estimate_options(), o, options::uses::estimate);
    doc["options"]["type"] = named ? std::string(to_string(*named)) : "all";
    doc["results"] = nlohmann::ordered_json::array();
    for (const Result& r : results) doc["results"].push_back(report::result_json(r));
    std::cout << doc.dump(2) << '\n';
  }
};

}  // namespace

void register_estimate(CLI::App& app) {
  auto cmd = std::make_shared<EstimateCommand>();
  CLI::App* sub = app.add_subcommand(
      "estimate", "Estimate the L_p calibration error (ECE^KDE) of predicted probabilities against labels");
  add_input_flags(*sub, cmd->input);
  cmd->flags.add(*sub, options::estimate_options(), options::uses::estimate,
                 {{"type", ", or all (every type that applies to the input's K)"}});
  sub->add_flag("--json", cmd->json,
                "Print one JSON document (full double precision) instead of the table");
  sub->add_flag("--progress", cmd->progress,
                "Show each type's estimate on stderr with the fraction done and the time left while it runs, then "
                "its time (the default when stderr is a terminal)");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace ecekde::cli
