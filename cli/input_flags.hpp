// The prediction-file flags shared by every subcommand that reads predictions:
//   --probs P --labels L            (each .npy or .csv)
//   --data FILE.csv --label-column NAME_OR_INDEX
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ecekde/io.hpp"

namespace ecekde::cli {

struct InputFlags {
  std::string probs, labels, data, label_column;
};

/// Adds the flags above to `command`, bound to `flags` (which must outlive parsing).
void add_input_flags(CLI::App& command, InputFlags& flags);

/// Loads the predictions the flags name; throws UsageError for a missing or mixed-up combination of
/// flags and ecekde::Error for a bad file.
io::Predictions load_inputs(const InputFlags& flags);

/// The flags as a JSON object: {"probs": ..., "labels": ...} or {"data": ..., "label_column": ...}.
nlohmann::ordered_json inputs_json(const InputFlags& flags);

}  // namespace ecekde::cli
