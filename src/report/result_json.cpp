// One estimate and one option value as JSON, and an estimate's bandwidth rule in words.
#include <string>

#include "ecekde/error.hpp"
#include "ecekde/report.hpp"

namespace ecekde::report {

namespace {

nlohmann::ordered_json selection_json(const BandwidthSelection& s) {
  nlohmann::ordered_json j = {{"criterion", to_string(s.criterion)}, {"grid", s.grid},
                              {"score", s.score},                    {"refined_grid", s.refined_grid},
                              {"refined_score", s.refined_score},    {"chosen", s.bandwidth},
                              {"chosen_score", s.best_score},        {"rows", s.rows}};
  if (s.criterion_choice > 0) j["criterion_choice"] = s.criterion_choice;
  return j;
}

nlohmann::ordered_json bounds_json(const Bounds& b) {
  return {{"level", b.level}, {"lower", b.lower}, {"upper", b.upper}};
}

}  // namespace

nlohmann::ordered_json result_json(const Result& r) {
  nlohmann::ordered_json j = {{"estimator", to_string(r.estimator)}, {"type", to_string(r.type)}, {"p", r.p}, {"bandwidth", r.bandwidth},
                      {"ce", r.ce},                {"ce_pow_p", r.ce_pow_p}, {"n", r.n},
                      {"k", r.k},                  {"bandwidth_rule", r.selection ? "auto" : "fixed"}};
  if (r.selection) j["bandwidth_selection"] = selection_json(*r.selection);
  if (r.type == CalibrationType::marginal) j["class_ce_pow_p"] = r.class_ce_pow_p;
  if (r.ce_interval) {
    j["standard_error"] = r.standard_error;
    j["ce_pow_p_interval"] = bounds_json(*r.ce_pow_p_interval);
    j["ce_interval"] = bounds_json(*r.ce_interval);
  }
  if (!r.pilot.empty()) j["pilot"] = r.pilot;
  // crossfit always says (an empty list: nothing known to be wrong); the paper's estimator only when it has
  // one (precision float at a small bandwidth)
  if (r.estimator == Estimator::crossfit || !r.warnings.empty()) j["warnings"] = r.warnings;
  if (r.excluded_rows > 0) j["excluded_rows"] = r.excluded_rows;
  if (r.averaged_rows > 0 && r.averaged_rows < r.n) j["averaged_rows"] = r.averaged_rows;
  return j;
}

std::string bandwidth_rule(const Result& r) {
  if (!r.selection) return "fixed";
  const BandwidthSelection& s = *r.selection;
  std::string rule = concat("auto: ", to_string(s.criterion), ", ", s.grid.size(), "-point grid");
  if (!s.refined_grid.empty()) rule += ", refined";
  if (s.rows > 0 && r.n > s.rows) rule += concat(", criterion on ", s.rows, " of ", r.n, " rows");
  if (s.criterion_choice > 0) rule += concat(", narrowed for CE_2^2 from ", s.criterion_choice);
  return rule;
}

nlohmann::ordered_json value_json(const options::Value& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::ordered_json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return nullptr;
        else return v;
      },
      value);
}

}  // namespace ecekde::report
