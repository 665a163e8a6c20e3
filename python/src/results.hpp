// The result classes of the module: read-only typed objects whose fields are those of the CLI's JSON,
// with to_dict() giving that JSON's structure (lists for arrays, nested dicts, fields that do not apply
// left out).
#pragma once

#include <vector>

#include <pybind11/pybind11.h>

#include "ecekde/gradient.hpp"

namespace ecekde::python {

namespace py = pybind11;

/// estimate_with_gradient's result and the shape of the probabilities it differentiates, which its
/// gradient arrays take.
struct Gradient {
  GradientResult value;
  std::vector<py::ssize_t> shape;
};

void register_results(py::module_& m);

}  // namespace ecekde::python
