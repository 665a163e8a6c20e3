// The command-line flags of the library's option tables (include/ecekde/options.hpp): one flag per
// option, named --name with '-' for '_' (a flag that defaults to true is spelled --no-name), its help
// and default from the table. Values are kept as given and applied to an options struct after parsing.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ecekde/error.hpp"
#include "ecekde/options.hpp"
#include "ecekde/report.hpp"

namespace ecekde::cli {

/// "--" + name with '-' for '_' (block_size -> --block-size).
std::string flag_name(std::string_view name, std::string_view prefix = "--");

/// What CLI11 shows as the value's type: NAME, FLOAT, UINT, auto|H, H,H,...
std::string flag_type_name(options::Kind kind, std::string_view none_word);

class OptionFlags {
 public:
  /// Adds the flags of every option of `table` read by an entry point in `used_by`, except those named in
  /// `skip` (a command's own form of them); `more_help` appends text to an option's help.
  template <class Options>
  void add(CLI::App& command, const std::vector<options::Option<Options>>& table,
           unsigned used_by = options::uses::all, const std::map<std::string_view, std::string>& more_help = {},
           const std::vector<std::string_view>& skip = {}) {
    for (const options::Option<Options>& o : table) {
      if (!(o.used_by & used_by) || std::find(skip.begin(), skip.end(), o.name) != skip.end()) continue;
      std::string help(o.help);
      if (auto extra = more_help.find(o.name); extra != more_help.end()) help += extra->second;
      const options::Value default_value = o.default_value();
      if (o.kind == options::Kind::flag) {
        const bool on = std::get<bool>(default_value);
        command.add_flag_callback(
            flag_name(o.name, on ? "--no-" : "--"), [this, name = std::string(o.name), on] { given_[name] = on ? "false" : "true"; },
            on ? "Turn off (default on): " + help : help);
        continue;
      }
      if (!o.none.empty() && o.none_word.empty()) help += " (default: " + std::string(o.none) + ")";
      // Text that cannot be the option's kind of value is a usage error, reported as the flags are read.
      CLI::Option* flag = command.add_option_function<std::string>(
          flag_name(o.name),
          [this, &o](const std::string& text) {
            try {
              options::parse_text(o.kind, o.name, text, o.none_word);
            } catch (const Error& e) {
              throw CLI::ValidationError(e.what());
            }
            given_[std::string(o.name)] = text;
          },
          help);
      flag->type_name(flag_type_name(o.kind, o.none_word));
      if (const std::string shown = options::to_text(default_value, o.none_word); !shown.empty())
        flag->default_str(shown);
    }
  }

  /// The text given for option `name`, or nullptr.
  const std::string* given(std::string_view name) const {
    const auto it = given_.find(name);
    return it == given_.end() ? nullptr : &it->second;
  }

  /// Writes every given option of `table` into `options` (except those named in `skip`); throws Error on
  /// a value the option cannot hold.
  template <class Options>
  void apply(const std::vector<options::Option<Options>>& table, Options& options,
             const std::vector<std::string_view>& skip = {}) const {
    for (const options::Option<Options>& o : table) {
      const std::string* text = given(o.name);
      if (text && std::find(skip.begin(), skip.end(), o.name) == skip.end()) options::set_text(o, options, *text);
    }
  }

  /// The values of `options` for the options of `table` read by `used_by`, as a JSON object.
  template <class Options>
  static nlohmann::ordered_json values_json(const std::vector<options::Option<Options>>& table, const Options& options,
                                            unsigned used_by = options::uses::all) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const options::Option<Options>& o : table)
      if (o.used_by & used_by) out[std::string(o.name)] = report::value_json(o.get(options));
    return out;
  }

 private:
  std::map<std::string, std::string, std::less<>> given_;
};

}  // namespace ecekde::cli
