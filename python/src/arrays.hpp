// NumPy arrays in and out of the core. In: views of the caller's arrays (float32/float64 probabilities in
// any memory order and int32/int64 labels are read in place, without a copy). Out: NumPy arrays over
// memory owned by a result object, which they keep alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "ecekde/data.hpp"

namespace ecekde::python {

namespace py = pybind11;

/// Probabilities as the core reads them. `array` holds the memory `view` points into: the caller's own
/// array, or the copy that had to be made (`copied`); keep it alive while the view is used.
struct ProbsInput {
  ProbsView view;
  py::array array;
  bool copied = false;
};

/// Labels as the core reads them; as ProbsInput.
struct LabelsInput {
  LabelsView view;
  py::array array;
  bool copied = false;
};

/// A view of `probs` (shape (n,) for one column P(y = 1), or (n, K)). A NumPy array of float32 or
/// float64 is read in place whatever its strides; only an unaligned or byte-swapped one is copied.
/// Anything else that is not a NumPy array (a list, a tensor) goes through numpy.asarray, and to float64
/// when that gives another type; a NumPy array of another type is an error (no silent copies).
ProbsInput probs_input(py::handle probs, const char* name = "probs");

/// A view of `labels` (shape (n,) or (n, 1)): int32 and int64 arrays in place; other integer and boolean
/// arrays are widened to int64 (a copy of n values); non-integer arrays are an error.
LabelsInput labels_input(py::handle labels, const char* name = "labels");

/// A C-ordered NumPy array over `data` (shape `shape`, whose product is data.size()), kept alive by
/// `owner`: no copy. An empty vector gives an empty array of that shape.
template <class T>
py::array_t<T> array_over(const std::vector<T>& data, std::vector<py::ssize_t> shape, py::handle owner) {
  if (data.empty()) return py::array_t<T>(shape);
  return py::array_t<T>(shape, data.data(), owner);
}

/// A 1-D array over `data`, kept alive by `owner`.
template <class T>
py::array_t<T> array_over(const std::vector<T>& data, py::handle owner) {
  return array_over(data, {static_cast<py::ssize_t>(data.size())}, owner);
}

/// A NumPy array that takes over `data` (moved, not copied), with the given shape.
template <class T>
py::array_t<T> array_from(std::vector<T>&& data, std::vector<py::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(data));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return array_over(*owned, std::move(shape), owner);
}

/// Registers the test hooks _probs_view and _labels_view, which report how an argument is read.
void register_array_hooks(py::module_& m);

}  // namespace ecekde::python
