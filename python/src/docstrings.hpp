// Docstrings in one format: a summary, the arguments (their help from the option tables, see
// option_kwargs.hpp, so that the CLI's --help and Python's help() say the same thing) and what is returned.
#pragma once

#include <vector>
#include <string>
#include <string_view>
#include <utility>

#include <pybind11/pybind11.h>


namespace ecekde::python {

/// One documented argument, with a note (its default, its Python form) appended when not empty.
struct ArgDoc {
  ArgDoc(std::string_view name, std::string_view help, std::string note = {})
      : name(name), help(help), note(std::move(note)) {}
  std::string_view name, help;
  std::string note;
};

/// "summary\n\nArgs:\n    name: help. note\n...\nReturns:\n    returns"
inline std::string docstring(std::string_view summary, const std::vector<ArgDoc>& args, std::string_view returns) {
  std::string doc(summary);
  doc += "\n\nArgs:\n";
  for (const ArgDoc& a : args) {
    doc += "    " + std::string(a.name) + ": " + std::string(a.help);
    if (!a.note.empty()) doc += "; " + a.note;
    doc += ".\n";
  }
  doc += "\nReturns:\n    " + std::string(returns) + "\n";
  return doc;
}

}  // namespace ecekde::python
