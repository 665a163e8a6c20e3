// Python keyword arguments from the library's option tables (include/ecekde/options.hpp): values
// converted by the option's kind, unknown keywords refused, docstring lines and defaults generated.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <pybind11/pybind11.h>

#include "docstrings.hpp"
#include "ecekde/options.hpp"
#include "watch.hpp"

namespace ecekde::python {

namespace py = pybind11;

/// A Python value for an option of `kind` (TypeError when it has the wrong type).
options::Value option_value(options::Kind kind, bool nullable, std::string_view name, py::handle value);
/// An option value as Python (none: None).
py::object python_value(const options::Value& value);

/// Writes the keywords of `kwargs` that name options of `table` read by `used_by` (and, when `only` is not
/// empty, named in it) into `options`, and removes them from `kwargs`.
template <class Options>
void take_options(const std::vector<options::Option<Options>>& table, unsigned used_by, Options& options,
                  py::dict& kwargs, const std::vector<std::string_view>& only = {}) {
  for (const options::Option<Options>& o : table) {
    if (!(o.used_by & used_by)) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), o.name) == only.end()) continue;
    const py::str key(std::string(o.name));
    if (!kwargs.contains(key)) continue;
    o.assign(options, option_value(o.kind, o.nullable, o.name, kwargs[key]));
    PyDict_DelItem(kwargs.ptr(), key.ptr());
  }
}

/// TypeError naming the first keyword left in `kwargs`, if any.
void refuse_unknown(std::string_view function, const py::dict& kwargs);

/// The docstring lines of the options of `table` read by `used_by` (and named in `only`, if given), with
/// their defaults.
template <class Options>
void add_option_docs(std::vector<ArgDoc>& docs, const std::vector<options::Option<Options>>& table,
                     unsigned used_by, const std::vector<std::string_view>& only = {}) {
  for (const options::Option<Options>& o : table) {
    if (!(o.used_by & used_by)) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), o.name) == only.end()) continue;
    const options::Value d = o.default_value();
    std::string note = "default " + py::repr(python_value(d)).cast<std::string>();
    if (!o.none.empty()) note += " (None: " + std::string(o.none) + ")";
    docs.push_back(ArgDoc(o.name, o.help, std::move(note)));
  }
}

/// The options of `table` read by `used_by` (and named in `only`, if given) as Python dicts: name, kind,
/// default, help, choices, example.
template <class Options>
void append_option_table(py::list& out, const std::vector<options::Option<Options>>& table, unsigned used_by,
                         const std::vector<std::string_view>& only = {}) {
  for (const options::Option<Options>& o : table) {
    if (!(o.used_by & used_by)) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), o.name) == only.end()) continue;
    py::list choices;
    for (std::string_view c : o.choices) choices.append(std::string(c));
    out.append(py::dict(py::arg("name") = std::string(o.name), py::arg("default") = python_value(o.default_value()),
                        py::arg("help") = std::string(o.help), py::arg("choices") = choices,
                        py::arg("example") = python_value(options::parse_text(o.kind, o.name, o.example, o.none_word)),
                        py::arg("example_text") = std::string(o.example),
                        py::arg("flag") = o.kind == options::Kind::flag));
  }
}

/// Records that function `name` (positional arguments `positional`, then keywords) reads the options that
/// `table` lists (append_option_table calls), for _options() and the package's signatures; `watched`: it
/// also takes the `progress` keyword and can be interrupted (watch.hpp), listed in _watched_functions.
void keyword_function(std::string name, std::vector<std::string> positional, std::function<void(py::list&)> table,
                      bool watched = false);

/// Removes the `progress` keyword from `kwargs` and returns it (None when absent).
py::object take_progress(py::dict& kwargs);

/// Defines _options(name), _option_functions and _positional(name) from what keyword_function recorded.
void register_option_registry(py::module_& m);

/// The standard body of a keyword function: options from `kwargs` into `options` (unknown ones refused).
template <class Options>
Options options_from(const std::vector<options::Option<Options>>& table, std::string_view function,
                     const py::dict& kwargs) {
  py::dict left(kwargs);
  Options options;
  take_options(table, options::uses::all, options, left);
  refuse_unknown(function, left);
  return options;
}

/// Defines `name`(first, second, **options) for the options of one table: registered for _options(),
/// documented from the table, the options taken from the keywords; run(first, second, options) computes.
/// A long computation's run takes a fourth argument, the `progress` keyword (watch.hpp), and the function
/// is registered as watched.
template <class Options, class Run>
void def_with_options(py::module_& m, const char* name, const ArgDoc& first, const ArgDoc& second,
                      const std::vector<options::Option<Options>>& table, std::string_view summary,
                      std::string_view returns, Run run) {
  constexpr bool watched = std::is_invocable_v<Run, py::object, py::object, Options, py::object>;
  keyword_function(
      name, {std::string(first.name), std::string(second.name)},
      [&table](py::list& out) { append_option_table(out, table, options::uses::all); }, watched);
  std::vector<ArgDoc> docs{first, second};
  add_option_docs(docs, table, options::uses::all);
  if (watched) docs.push_back(ArgDoc("progress", kProgressDoc));
  m.def(
      name,
      [name, &table, run](py::object a, py::object b, py::kwargs kwargs) {
        py::dict left(kwargs);
        if constexpr (watched) {
          py::object progress = take_progress(left);
          return run(a, b, options_from(table, name, left), progress);
        } else {
          return run(a, b, options_from(table, name, left));
        }
      },
      docstring(summary, docs, returns).c_str(), py::arg(first.name.data()), py::arg(second.name.data()));
}

}  // namespace ecekde::python
