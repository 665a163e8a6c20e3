// Reading and writing predictions: NumPy .npy files and CSV tables. Standard library only.
//
// Readers give zero-copy views (ecekde::ProbsView / ecekde::LabelsView) over the buffers they own, in
// the file's own memory order and element type (float32 stays float32). An .npy file is memory-mapped
// and its data used in place where its layout allows (NpyArray::mapped()), so a large evaluation set is
// never copied on the way in. Every problem with a file is an
// ecekde::Error whose one-line message names the file and, for CSV, the line and column:
//
//     probs.npy: unsupported NPY format version 4.0 (expected 1.0, 2.0 or 3.0)
//     labels.csv line 5: '2.5' is not an integer label
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ecekde/data.hpp"

namespace ecekde::io {

// ---------------------------------------------------------------------------------------------------
// NPY

/// The element types an .npy file may hold here: little-endian (or single-byte) numbers and booleans.
enum class NpyType { float32, float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64, boolean };

namespace detail {
struct NpyReader;
}

/// Bytes per element of `type`.
std::size_t item_size(NpyType type);

/// An array read from an .npy file (format 1.0, 2.0 or 3.0). Shares ownership of its data, which is
/// aligned for its element type: the file's own pages when mapped(), else a copy. Moving or copying the
/// array keeps data() where it is.
class NpyArray {
 public:
  NpyArray() = default;

  const std::string& path() const { return path_; }
  NpyType type() const { return type_; }
  const std::string& descr() const { return descr_; }  ///< as written in the file, e.g. "<f8"
  const std::vector<std::size_t>& shape() const { return shape_; }
  bool fortran_order() const { return fortran_order_; }
  std::size_t size() const { return size_; }  ///< number of elements
  const void* data() const { return data_; }
  bool mapped() const { return mapped_; }  ///< data() points into the memory-mapped file itself

 private:
  friend struct detail::NpyReader;

  std::string path_, descr_;
  NpyType type_ = NpyType::float64;
  std::vector<std::size_t> shape_;
  bool fortran_order_ = false, mapped_ = false;
  std::size_t size_ = 0;
  const void* data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

/// Reads an .npy file, mapping it into memory (read-only) where the system allows and using the data in
/// place when it is aligned for its type; pipes and other unmappable files are read. Throws Error for a
/// missing or unreadable file, a bad magic string, an unsupported format version, a malformed header, a
/// big-endian, object or otherwise unsupported dtype, and data shorter than the shape says.
NpyArray read_npy(const std::string& path);

/// The same from the bytes of an .npy file held in memory (copied); `name` stands for the file in
/// messages.
NpyArray parse_npy(const std::string& name, std::string_view bytes);

/// Writes a C-order array of the given shape (format 1.0, or 2.0 when the header needs it).
/// The product of `shape` must equal data.size().
void write_npy(const std::string& path, std::span<const double> data, const std::vector<std::size_t>& shape);
void write_npy(const std::string& path, std::span<const float> data, const std::vector<std::size_t>& shape);
void write_npy(const std::string& path, std::span<const std::int64_t> data,
               const std::vector<std::size_t>& shape);
void write_npy(const std::string& path, std::span<const std::int32_t> data,
               const std::vector<std::size_t>& shape);

// ---------------------------------------------------------------------------------------------------
// CSV

/// One cell of a CSV file, as written there (for messages).
struct CsvCell {
  std::size_t line = 0;  ///< 1-based line in the file
  std::string text;      ///< the cell's text, trimmed
};

/// A numeric table read from a CSV file.
struct CsvTable {
  std::string path;
  std::vector<std::string> names;  ///< the header row's cells; empty when the file has no header
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;      ///< rows x cols, row-major
  std::vector<std::size_t> lines;  ///< the 1-based file line of each row
  /// Per column: its first cell that is not an integer (fractional, non-finite or beyond int64), if any.
  std::vector<std::optional<CsvCell>> first_non_integer;

  double operator()(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
  bool has_header() const { return !names.empty(); }
  /// "column 2 ('p_2')" or "column 2": how messages name column c (0-based).
  std::string column_label(std::size_t c) const;
};

/// Reads a comma-separated file of numbers. The first non-blank row is a header when any of its cells is
/// not a number. Cells are trimmed of surrounding spaces and tabs and may be double-quoted; blank lines
/// are skipped; a UTF-8 byte order mark and CRLF line ends are accepted. Throws Error for a missing or
/// unreadable file, rows of different lengths, empty or non-numeric cells, and a file without data rows.
CsvTable read_csv(const std::string& path);

/// The same from a file's text held in memory; `name` stands for the file in messages.
CsvTable parse_csv(const std::string& name, std::string_view text);

/// Writes `values` (row-major, names.size() columns, or `cols` when names is empty) with a header row
/// when names is not empty. Numbers are written in their shortest round-trip form.
void write_csv(const std::string& path, const std::vector<std::string>& names, std::span<const double> values,
               std::size_t cols = 0);

// ---------------------------------------------------------------------------------------------------
// Any file

/// Writes `bytes` as the whole of `path`: into a temporary file beside it, renamed over `path` once
/// complete, so that a failed or interrupted write never leaves a partial file under that name. Every
/// writer here (NPY, CSV) and the CLI's figures write this way. Throws "PATH: cannot write: <reason>".
void write_file(const std::string& path, std::string_view bytes);

// ---------------------------------------------------------------------------------------------------
// Predictions

/// Probabilities read from a file: a view over memory this object shares ownership of.
class Probabilities {
 public:
  Probabilities() = default;
  Probabilities(ProbsView view, std::shared_ptr<const void> owner) : view_(view), owner_(std::move(owner)) {}
  ProbsView view() const { return view_; }

 private:
  ProbsView view_;
  std::shared_ptr<const void> owner_;
};

/// Labels read from a file: a view over memory this object shares ownership of.
class Labels {
 public:
  Labels() = default;
  Labels(LabelsView view, std::shared_ptr<const void> owner) : view_(view), owner_(std::move(owner)) {}
  LabelsView view() const { return view_; }

 private:
  LabelsView view_;
  std::shared_ptr<const void> owner_;
};

/// Probabilities from a float32/float64 array of shape (n,) (one column P(y = 1)) or (n, K), C or Fortran
/// order, without copying.
Probabilities probabilities_from(NpyArray array);
/// Labels from an integer or boolean array of shape (n,) or (n, 1). int32 and int64 are viewed without
/// copying; other integer types are widened to int64; floating-point arrays are accepted when every
/// value is an integer.
Labels labels_from(NpyArray array);
/// Probabilities from every column of a CSV table (one column = P(y = 1)).
Probabilities probabilities_from(CsvTable table);
/// Labels from column `column` of a CSV table (default: its only column); every cell an integer.
Labels labels_from(const CsvTable& table, std::optional<std::size_t> column = std::nullopt);

/// Probabilities from a .npy or .csv file (chosen by the extension, case-insensitive).
Probabilities read_probabilities(const std::string& path);
/// Labels from a .npy or .csv file (chosen by the extension, case-insensitive).
Labels read_labels(const std::string& path);

/// Predictions loaded from files. Lengths and values are checked by ecekde::estimate, not here.
struct Predictions {
  Probabilities probs;
  Labels labels;
};

/// Probabilities and labels from two files, each .npy or .csv.
Predictions read_predictions(const std::string& probs_path, const std::string& labels_path);

/// Predictions from one CSV file: the label column is given by header name or by 0-based index (a name
/// matching a header cell wins); every other column is a probability.
Predictions read_predictions_csv(const std::string& path, std::string_view label_column);

/// The same from a table already read.
Predictions predictions_from(const CsvTable& table, std::string_view label_column);

}  // namespace ecekde::io
