// How results are shown: a readable table, or JSON with every number at full double precision.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecekde/estimate.hpp"

namespace ecekde::cli {

/// One result as JSON: type, p, bandwidth, ce, ce_pow_p, n, k, bandwidth_rule, and bandwidth_selection
/// (automatic bandwidth) and class_ce_pow_p (marginal) where they apply.
nlohmann::ordered_json result_json(const Result& r);

/// The automatic bandwidth selection as JSON: criterion, grid, score, refined_grid, refined_score, chosen,
/// chosen_score.
nlohmann::ordered_json selection_json(const BandwidthSelection& s);

/// How the bandwidth was chosen, in words: "fixed" or "auto: loo-likelihood, 20-point grid, refined".
std::string bandwidth_rule(const Result& r);

/// The results as an aligned table: type, p, h, CE_p, CE_p^p, n, K, bandwidth rule.
void print_table(std::ostream& out, const std::vector<Result>& results);

}  // namespace ecekde::cli
