// The subcommands of ecekde. To add one: write cli/<name>.cpp defining register_<name>(CLI::App&), which
// adds a subcommand whose callback does the work (throwing ecekde::Error or UsageError on failure), declare
// it here, list it in kCommands and add the file to cli/CMakeLists.txt.
#pragma once

#include <CLI/CLI.hpp>

namespace ecekde::cli {

void register_estimate(CLI::App& app);
void register_report(CLI::App& app);
void register_fit_temperature(CLI::App& app);
void register_synth(CLI::App& app);
void register_options(CLI::App& app);

inline constexpr void (*kCommands[])(CLI::App&) = {
    register_estimate,
    register_report,
    register_fit_temperature,
    register_synth,
    register_options,
};

}  // namespace ecekde::cli
