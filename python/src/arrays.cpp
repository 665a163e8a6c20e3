#include "arrays.hpp"

#include <string>

#include "ecekde/error.hpp"

namespace ecekde::python {

namespace {

std::string dtype_name(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

// Whether the core can read `a` in place: aligned, native byte order, strides whole elements.
bool readable_in_place(const py::array& a) {
  if (!(a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) return false;
  const char order = a.dtype().byteorder();  // NumPy writes the native order as '='
  if (order != '=' && order != '|') return false;
  for (py::ssize_t d = 0; d < a.ndim(); ++d)
    if (a.strides(d) % a.itemsize() != 0) return false;
  return true;
}

// A C-ordered, aligned, native-order copy of `a` with the same element type.
py::array native_copy(const py::array& a) {
  py::module_ np = py::module_::import("numpy");
  return np.attr("ascontiguousarray")(a, py::arg("dtype") = a.dtype().attr("newbyteorder")("="));
}

std::ptrdiff_t element_stride(const py::array& a, py::ssize_t dim) { return a.strides(dim) / a.itemsize(); }

}  // namespace

ProbsInput probs_input(py::handle obj, const char* name) {
  py::module_ np = py::module_::import("numpy");
  ProbsInput in;
  if (py::isinstance<py::array>(obj)) {
    in.array = py::reinterpret_borrow<py::array>(obj);
  } else {
    in.array = np.attr("asarray")(obj);
    const char kind = in.array.dtype().kind();
    if (kind != 'f' || (in.array.itemsize() != 4 && in.array.itemsize() != 8))
      in.array = np.attr("asarray")(in.array, py::arg("dtype") = "float64");
  }
  py::array& a = in.array;
  if (a.dtype().kind() != 'f' || (a.itemsize() != 4 && a.itemsize() != 8))
    fail(std::string(name) + " must hold float32 or float64 values, got " + dtype_name(a));
  if (a.ndim() != 1 && a.ndim() != 2)
    fail(std::string(name) + " must be a 1-D array (P(y = 1)) or a 2-D array (n x K), got " +
         std::to_string(a.ndim()) + " dimensions");
  if (!readable_in_place(a)) {
    a = native_copy(a);
    in.copied = true;
  }
  const auto rows = static_cast<std::size_t>(a.shape(0));
  const auto cols = static_cast<std::size_t>(a.ndim() == 2 ? a.shape(1) : 1);
  const std::ptrdiff_t row_stride = element_stride(a, 0), col_stride = a.ndim() == 2 ? element_stride(a, 1) : 1;
  if (a.itemsize() == 8)
    in.view = ProbsView(static_cast<const double*>(a.data()), rows, cols, row_stride, col_stride);
  else
    in.view = ProbsView(static_cast<const float*>(a.data()), rows, cols, row_stride, col_stride);
  return in;
}

LabelsInput labels_input(py::handle obj, const char* name) {
  py::module_ np = py::module_::import("numpy");
  LabelsInput in;
  in.array = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj)
                                            : py::array(np.attr("asarray")(obj));
  py::array& a = in.array;
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'b')
    fail(std::string(name) + " must hold integer class labels (int32 or int64), got " + dtype_name(a));
  if (a.ndim() != 1 && !(a.ndim() == 2 && a.shape(1) == 1))
    fail(std::string(name) + " must be a 1-D array of n labels, got shape " +
         py::str(a.attr("shape")).cast<std::string>());
  const bool exact = kind == 'i' && (a.itemsize() == 4 || a.itemsize() == 8);
  if (!exact) {
    if (!np.attr("can_cast")(a.dtype(), "int64", py::arg("casting") = "safe").cast<bool>())
      fail(std::string(name) + " of type " + dtype_name(a) + " do not fit int64");
    a = np.attr("ascontiguousarray")(a, py::arg("dtype") = "int64");
    in.copied = true;
  } else if (!readable_in_place(a)) {
    a = native_copy(a);
    in.copied = true;
  }
  const auto n = static_cast<std::size_t>(a.shape(0));
  const std::ptrdiff_t stride = element_stride(a, 0);
  if (a.itemsize() == 8)
    in.view = LabelsView(static_cast<const std::int64_t*>(a.data()), n, stride);
  else
    in.view = LabelsView(static_cast<const std::int32_t*>(a.data()), n, stride);
  return in;
}

void register_array_hooks(py::module_& m) {
  m.def(
      "_probs_view",
      [](py::object probs) {
        const ProbsInput in = probs_input(probs);
        return py::dict(
            py::arg("data") = reinterpret_cast<std::uintptr_t>(in.view.data()), py::arg("rows") = in.view.rows(),
            py::arg("cols") = in.view.cols(), py::arg("row_stride") = in.view.row_stride(),
            py::arg("col_stride") = in.view.col_stride(),
            py::arg("dtype") = in.view.dtype() == ProbsView::DType::float64 ? "float64" : "float32",
            py::arg("copied") = in.copied);
      },
      "Test hook: how the estimators read `probs` (the address, shape and element strides of the view "
      "the core gets, and whether a copy was made).",
      py::arg("probs"));
  m.def(
      "_labels_view",
      [](py::object labels) {
        const LabelsInput in = labels_input(labels);
        return py::dict(py::arg("data") = reinterpret_cast<std::uintptr_t>(in.view.data()),
                        py::arg("size") = in.view.size(), py::arg("stride") = in.view.stride(),
                        py::arg("dtype") = in.view.dtype() == LabelsView::DType::int64 ? "int64" : "int32",
                        py::arg("copied") = in.copied);
      },
      "Test hook: how the estimators read `labels` (as _probs_view).", py::arg("labels"));
}

}  // namespace ecekde::python
