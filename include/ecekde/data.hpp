// Non-owning views of the caller's predictions and labels. Any memory order (C, Fortran, strided) and
// float32/float64 probabilities, int32/int64 labels; nothing is copied until an estimator needs its own
// working arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ecekde {

/// An n x K matrix of predicted probabilities: row = sample, column = class. Strides in elements.
class ProbsView {
 public:
  enum class DType { float32, float64 };

  ProbsView() = default;
  ProbsView(const double* data, std::size_t rows, std::size_t cols, std::ptrdiff_t row_stride,
            std::ptrdiff_t col_stride)
      : data_(data), dtype_(DType::float64), rows_(rows), cols_(cols), row_stride_(row_stride),
        col_stride_(col_stride) {}
  ProbsView(const float* data, std::size_t rows, std::size_t cols, std::ptrdiff_t row_stride,
            std::ptrdiff_t col_stride)
      : data_(data), dtype_(DType::float32), rows_(rows), cols_(cols), row_stride_(row_stride),
        col_stride_(col_stride) {}

  /// Contiguous row-major (C order) matrix.
  template <class T>
  static ProbsView row_major(const T* data, std::size_t rows, std::size_t cols) {
    return ProbsView(data, rows, cols, static_cast<std::ptrdiff_t>(cols), 1);
  }
  /// Contiguous column-major (Fortran order) matrix.
  template <class T>
  static ProbsView col_major(const T* data, std::size_t rows, std::size_t cols) {
    return ProbsView(data, rows, cols, 1, static_cast<std::ptrdiff_t>(rows));
  }
  /// One column of n probabilities P(y = 1) (the binary type).
  template <class T>
  static ProbsView column(std::span<const T> p) {
    return ProbsView(p.data(), p.size(), 1, 1, 1);
  }

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  DType dtype() const { return dtype_; }
  const void* data() const { return data_; }
  std::ptrdiff_t row_stride() const { return row_stride_; }
  std::ptrdiff_t col_stride() const { return col_stride_; }

  /// Element (r, c) converted to double.
  double operator()(std::size_t r, std::size_t c) const {
    const std::ptrdiff_t off = static_cast<std::ptrdiff_t>(r) * row_stride_ +
                               static_cast<std::ptrdiff_t>(c) * col_stride_;
    return dtype_ == DType::float64 ? static_cast<const double*>(data_)[off]
                                    : static_cast<double>(static_cast<const float*>(data_)[off]);
  }

 private:
  const void* data_ = nullptr;
  DType dtype_ = DType::float64;
  std::size_t rows_ = 0, cols_ = 0;
  std::ptrdiff_t row_stride_ = 0, col_stride_ = 0;
};

/// n integer class labels in [0, K). Stride in elements.
class LabelsView {
 public:
  enum class DType { int32, int64 };

  LabelsView() = default;
  LabelsView(const std::int64_t* data, std::size_t size, std::ptrdiff_t stride = 1)
      : data_(data), dtype_(DType::int64), size_(size), stride_(stride) {}
  LabelsView(const std::int32_t* data, std::size_t size, std::ptrdiff_t stride = 1)
      : data_(data), dtype_(DType::int32), size_(size), stride_(stride) {}
  LabelsView(std::span<const std::int64_t> s) : LabelsView(s.data(), s.size()) {}
  LabelsView(std::span<const std::int32_t> s) : LabelsView(s.data(), s.size()) {}
  LabelsView(const std::vector<std::int64_t>& v) : LabelsView(v.data(), v.size()) {}
  LabelsView(const std::vector<std::int32_t>& v) : LabelsView(v.data(), v.size()) {}

  std::size_t size() const { return size_; }
  DType dtype() const { return dtype_; }
  const void* data() const { return data_; }
  std::ptrdiff_t stride() const { return stride_; }

  std::int64_t operator[](std::size_t i) const {
    const std::ptrdiff_t off = static_cast<std::ptrdiff_t>(i) * stride_;
    return dtype_ == DType::int64 ? static_cast<const std::int64_t*>(data_)[off]
                                  : static_cast<std::int64_t>(static_cast<const std::int32_t*>(data_)[off]);
  }

 private:
  const void* data_ = nullptr;
  DType dtype_ = DType::int64;
  std::size_t size_ = 0;
  std::ptrdiff_t stride_ = 1;
};

}  // namespace ecekde
