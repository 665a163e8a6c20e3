// Docstrings assembled from the shared parameter table (include/ecekde/parameters.hpp), so that the CLI's
// --help and Python's help() say the same thing about each parameter.
#pragma once

#include <vector>
#include <string>
#include <string_view>
#include <utility>

#include <pybind11/pybind11.h>

#include "ecekde/parameters.hpp"

namespace ecekde::python {

/// The keyword argument of a table entry.
inline pybind11::arg arg(const parameters::Parameter& p) { return pybind11::arg(p.name.data()); }

/// One documented argument: a table entry, with a note on its Python form appended when not empty.
struct ArgDoc {
  ArgDoc(const parameters::Parameter& p, std::string_view note = {}) : name(p.name), help(p.help), note(note) {}
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
