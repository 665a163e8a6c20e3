// The core's NPY / CSV readers: NumPy arrays over the memory they read into (no copy), in the file's
// element type and memory order, so that Python reads a file exactly as the CLI does.
#include <string>
#include <utility>

#include "arrays.hpp"
#include "ecekde/io.hpp"
#include "module.hpp"

namespace ecekde::python {

namespace {

template <class T>
py::capsule owner_of(T value) {
  return py::capsule(new T(std::move(value)), [](void* p) { delete static_cast<T*>(p); });
}

py::array probs_array(io::Probabilities probs) {
  const ProbsView v = probs.view();
  const bool f64 = v.dtype() == ProbsView::DType::float64;
  const py::ssize_t item = f64 ? 8 : 4;
  const std::vector<py::ssize_t> shape{py::ssize_t(v.rows()), py::ssize_t(v.cols())};
  const std::vector<py::ssize_t> strides{v.row_stride() * item, v.col_stride() * item};
  py::capsule owner = owner_of(std::move(probs));
  if (f64) return py::array_t<double>(shape, strides, static_cast<const double*>(v.data()), owner);
  return py::array_t<float>(shape, strides, static_cast<const float*>(v.data()), owner);
}

py::array labels_array(io::Labels labels) {
  const LabelsView v = labels.view();
  const bool i64 = v.dtype() == LabelsView::DType::int64;
  const py::ssize_t item = i64 ? 8 : 4;
  const std::vector<py::ssize_t> shape{py::ssize_t(v.size())}, strides{v.stride() * item};
  py::capsule owner = owner_of(std::move(labels));
  if (i64) return py::array_t<std::int64_t>(shape, strides, static_cast<const std::int64_t*>(v.data()), owner);
  return py::array_t<std::int32_t>(shape, strides, static_cast<const std::int32_t*>(v.data()), owner);
}

py::tuple predictions_tuple(io::Predictions in) {
  return py::make_tuple(probs_array(std::move(in.probs)), labels_array(std::move(in.labels)));
}

}  // namespace

void register_io(py::module_& m) {
  m.def(
      "read_probabilities",
      [](const std::string& path) { return probs_array(io::read_probabilities(path)); },
      "Probabilities from a .npy file (float32/float64, shape (n,) or (n, K), C or Fortran order) or a .csv "
      "file, read as the CLI reads --probs: an (n, K) array in the file's element type and memory order.",
      py::arg("path"));
  m.def(
      "read_labels", [](const std::string& path) { return labels_array(io::read_labels(path)); },
      "Labels from a .npy file (integer, or boolean, or integral floats) or a one-column .csv file, read as the "
      "CLI reads --labels: an (n,) int32 or int64 array.",
      py::arg("path"));
  m.def(
      "read_predictions",
      [](const std::string& probs_path, const std::string& labels_path) {
        return predictions_tuple(io::read_predictions(probs_path, labels_path));
      },
      "(probs, labels) from two files, as read_probabilities and read_labels.", py::arg("probs_path"),
      py::arg("labels_path"));
  m.def(
      "read_predictions_csv",
      [](const std::string& path, const std::string& label_column) {
        return predictions_tuple(io::read_predictions_csv(path, label_column));
      },
      "(probs, labels) from one CSV file: the labels in `label_column` (a header name or a 0-based index), "
      "the probabilities in every other column (the CLI's --data / --label-column).",
      py::arg("path"), py::arg("label_column"));
}

}  // namespace ecekde::python
