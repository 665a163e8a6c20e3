#include "ecekde/train/options.hpp"

#include <array>
#include <string>
#include <utility>

#include "ecekde/error.hpp"

namespace ecekde::train {

namespace {

constexpr std::array<std::pair<Objective, std::string_view>, 8> kObjectives = {{
    {Objective::xe, "xe"},
    {Objective::kde_xe, "kde-xe"},
    {Objective::kde_xe_debiased, "kde-xe-debiased"},
    {Objective::mmce, "mmce"},
    {Objective::focal, "focal"},
    {Objective::focal53, "focal53"},
    {Objective::mse, "mse"},
    {Objective::mse_sharpness, "mse-sharpness"},
}};

std::string dashed(std::string_view name) {
  std::string s(name);
  for (char& c : s)
    if (c == '_') c = '-';
  return s;
}

}  // namespace

std::string_view to_string(Architecture architecture) {
  return architecture == Architecture::resnet ? "resnet" : "mlp";
}

Architecture parse_architecture(std::string_view name) {
  if (name == "resnet") return Architecture::resnet;
  if (name == "mlp") return Architecture::mlp;
  fail("unknown architecture '" + std::string(name) + "' (expected resnet or mlp)");
}

std::string_view to_string(Objective objective) {
  for (const auto& [o, name] : kObjectives)
    if (o == objective) return name;
  fail("internal error: unnamed objective");
}

Objective parse_objective(std::string_view name) {
  const std::string key = dashed(name);
  for (const auto& [o, n] : kObjectives)
    if (n == key) return o;
  fail("unknown objective '" + std::string(name) + "' (expected xe, kde-xe, kde-xe-debiased, mmce, focal, focal53, mse or mse-sharpness)");
}

bool is_binary(Objective objective) { return objective == Objective::mse || objective == Objective::mse_sharpness; }

bool has_lambda(Objective objective) {
  return objective == Objective::kde_xe || objective == Objective::kde_xe_debiased || objective == Objective::mmce;
}

}  // namespace ecekde::train
