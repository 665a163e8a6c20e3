#include "output.hpp"

#include <algorithm>
#include <cstdio>

namespace ecekde::cli {

nlohmann::ordered_json selection_json(const BandwidthSelection& s) {
  return {{"criterion", to_string(s.criterion)}, {"grid", s.grid},
          {"score", s.score},                    {"refined_grid", s.refined_grid},
          {"refined_score", s.refined_score},    {"chosen", s.bandwidth},
          {"chosen_score", s.best_score},        {"rows", s.rows}};
}

nlohmann::ordered_json bounds_json(const Bounds& b) {
  return {{"level", b.level}, {"lower", b.lower}, {"upper", b.upper}};
}

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
  if (r.estimator == Estimator::crossfit) j["warnings"] = r.warnings;
  if (r.excluded_rows > 0) j["excluded_rows"] = r.excluded_rows;
  return j;
}

std::string bandwidth_rule(const Result& r) {
  if (!r.selection) return "fixed";
  const BandwidthSelection& s = *r.selection;
  std::string rule = "auto: " + std::string(to_string(s.criterion)) + ", " + std::to_string(s.grid.size()) +
                     "-point grid";
  if (!s.refined_grid.empty()) rule += ", refined";
  if (s.rows > 0 && r.n > s.rows) rule += ", criterion on " + std::to_string(s.rows) + " of " + std::to_string(r.n) + " rows";
  return rule;
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

void print_table(std::ostream& out, const std::vector<Result>& results) {
  const std::vector<std::string> head{"estimator", "type", "p", "h", "CE_p", "CE_p interval", "CE_p^p", "n", "K",
                                      "bandwidth rule"};
  const std::vector<bool> right{false, false, true, true, true, false, true, true, true, false};
  std::vector<std::vector<std::string>> rows{head};
  for (const Result& r : results) {
    const std::string interval =
        r.ce_interval ? "[" + number(r.ce_interval->lower) + ", " + number(r.ce_interval->upper) + "]" : "-";
    rows.push_back({std::string(to_string(r.estimator)), std::string(to_string(r.type)), number(r.p),
                    number(r.bandwidth), number(r.ce), interval, number(r.ce_pow_p), std::to_string(r.n),
                    std::to_string(r.k), bandwidth_rule(r)});
  }
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c) line += "  ";
      line += right[c] ? pad + row[c] : (c + 1 == row.size() ? row[c] : row[c] + pad);
    }
    out << line << '\n';
  }
  for (const Result& r : results)
    for (const std::string& w : r.warnings)
      out << "warning: " << to_string(r.type) << " (p = " << number(r.p) << "): " << w << '\n';
}

}  // namespace ecekde::cli
