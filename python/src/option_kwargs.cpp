#include "option_kwargs.hpp"

#include <cstdint>

#include <pybind11/stl.h>

namespace ecekde::python {

namespace {

[[noreturn]] void wrong_type(std::string_view name, std::string_view expected, py::handle value) {
  throw py::type_error(std::string(name) + " must be " + std::string(expected) + ", got " +
                       py::repr(value).cast<std::string>());
}

double real_of(std::string_view name, py::handle value) {
  if (py::isinstance<py::bool_>(value) || !(py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value) ||
                                             py::hasattr(value, "__float__")))
    wrong_type(name, "a number", value);
  return value.cast<double>();
}

}  // namespace

options::Value option_value(options::Kind kind, bool nullable, std::string_view name, py::handle value) {
  using options::Kind;
  if (nullable && value.is_none()) return std::monostate{};
  switch (kind) {
    case Kind::flag: {
      py::detail::make_caster<bool> flag;  // without conversion: True, False and numpy.bool_
      if (!flag.load(value, false)) wrong_type(name, "True or False", value);
      return static_cast<bool>(flag);
    }
    case Kind::integer:
    case Kind::count: {
      if (py::isinstance<py::bool_>(value) || !py::hasattr(value, "__index__")) wrong_type(name, "an integer", value);
      const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
      if (!i) throw py::error_already_set();
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
      if (overflow == 0) return static_cast<std::int64_t>(v);
      if (overflow > 0) {
        const unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
        if (!PyErr_Occurred()) return static_cast<std::uint64_t>(u);
        PyErr_Clear();
      }
      throw py::value_error(std::string(name) + " is out of range: " + py::repr(value).cast<std::string>());
    }
    case Kind::real: return real_of(name, value);
    case Kind::real_list: {
      if (value.is_none()) return std::monostate{};
      if (py::isinstance<py::str>(value) || !py::hasattr(value, "__iter__"))
        wrong_type(name, "None or a sequence of numbers", value);
      std::vector<double> list;
      for (py::handle x : value) list.push_back(real_of(name, x));
      return list;
    }
    case Kind::index_list: {
      if (value.is_none()) return std::monostate{};
      if (py::isinstance<py::str>(value) || !py::hasattr(value, "__iter__"))
        wrong_type(name, "None or a sequence of integers", value);
      std::vector<std::int64_t> list;
      for (py::handle x : value) {
        if (py::isinstance<py::bool_>(x) || !py::hasattr(x, "__index__")) wrong_type(name, "a sequence of integers", value);
        list.push_back(x.cast<std::int64_t>());
      }
      return list;
    }
    case Kind::choice:
    case Kind::text:
      if (!py::isinstance<py::str>(value)) wrong_type(name, "a string", value);
      return value.cast<std::string>();
  }
  wrong_type(name, "valid", value);
}

py::object python_value(const options::Value& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return py::none();
        else return py::cast(v);
      },
      value);
}

namespace {

struct KeywordFunction {
  std::string name;
  std::vector<std::string> positional;
  std::function<void(py::list&)> table;
  bool watched;
};

std::vector<KeywordFunction>& keyword_functions() {
  static std::vector<KeywordFunction> functions;
  return functions;
}

const KeywordFunction& keyword_function_named(std::string_view name) {
  for (const KeywordFunction& f : keyword_functions())
    if (f.name == name) return f;
  throw py::value_error("no option table for '" + std::string(name) + "'");
}

}  // namespace

void keyword_function(std::string name, std::vector<std::string> positional, std::function<void(py::list&)> table,
                      bool watched) {
  keyword_functions().push_back({std::move(name), std::move(positional), std::move(table), watched});
}

py::object take_progress(py::dict& kwargs) { return kwargs.attr("pop")("progress", py::none()); }

void register_option_registry(py::module_& m) {
  m.def(
      "_options",
      [](std::string_view function) {
        py::list out;
        keyword_function_named(function).table(out);
        return out;
      },
      "The options a function takes, from the library's option tables: name, default, help, choices and "
      "an example value (for the signatures and the consistency tests).");
  m.def(
      "_positional", [](std::string_view function) { return keyword_function_named(function).positional; },
      "The positional arguments of a function that takes its options as keywords.");
  py::list names, watched;
  for (const KeywordFunction& f : keyword_functions()) {
    names.append(f.name);
    if (f.watched) watched.append(f.name);
  }
  m.attr("_option_functions") = names;
  m.attr("_watched_functions") = watched;  // they also take progress= (watch.hpp)
}

void refuse_unknown(std::string_view function, const py::dict& kwargs) {
  for (const auto item : kwargs)
    throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" +
                         item.first.cast<std::string>() + "'");
}

}  // namespace ecekde::python
