// Probabilities and labels from .npy and .csv files, as views over buffers the results own.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/messages.hpp"
#include "ecekde/io.hpp"
#include "io/common.hpp"

namespace ecekde::io {

using ecekde::detail::concat;
using ecekde::detail::fail_with;

namespace {

template <class T>
Probabilities probs_view(std::shared_ptr<const NpyArray> a) {
  const auto* data = static_cast<const T*>(a->data());
  const std::size_t n = a->shape()[0];
  if (a->shape().size() == 1) return {ProbsView::column(std::span<const T>(data, n)), std::move(a)};
  const std::size_t k = a->shape()[1];
  const ProbsView view = a->fortran_order() ? ProbsView::col_major(data, n, k) : ProbsView::row_major(data, n, k);
  return {view, std::move(a)};
}

// Widens labels of any other numeric type to int64, checking that each is an integer that fits.
template <class T>
Labels widened_labels(const NpyArray& a) {
  const auto* data = static_cast<const T*>(a.data());
  auto out = std::make_shared<std::vector<std::int64_t>>(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const T v = data[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (!(std::isfinite(v) && v == std::trunc(v) && v >= -0x1p63 && v < 0x1p63))
        fail_with(a.path(), " element ", i, ": '", v, "' is not an integer label");
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail_with(a.path(), " element ", i, ": label ", v, " is too large");
    }
    (*out)[i] = static_cast<std::int64_t>(v);
  }
  const LabelsView view(out->data(), out->size());
  return {view, std::move(out)};
}

}  // namespace

Probabilities probabilities_from(NpyArray array) {
  const std::size_t dims = array.shape().size();
  if (dims != 1 && dims != 2)
    fail_with(array.path(), ": probabilities must be a 1-D (n,) or 2-D (n, K) array, got shape ",
              detail::shape_text(array.shape()));
  const NpyType type = array.type();
  if (type != NpyType::float32 && type != NpyType::float64)
    fail_with(array.path(), ": probabilities must be float32 or float64 ('<f4' or '<f8'), got dtype '",
              array.descr(), "'");
  auto owned = std::make_shared<const NpyArray>(std::move(array));
  return type == NpyType::float32 ? probs_view<float>(std::move(owned)) : probs_view<double>(std::move(owned));
}

Labels labels_from(NpyArray array) {
  const auto& shape = array.shape();
  if (!(shape.size() == 1 || (shape.size() == 2 && shape[1] == 1)))
    fail_with(array.path(), ": labels must be a 1-D array (n,) or (n, 1), got shape ", detail::shape_text(shape));
  switch (array.type()) {
    case NpyType::int32: {
      auto owned = std::make_shared<const NpyArray>(std::move(array));
      const LabelsView view(static_cast<const std::int32_t*>(owned->data()), owned->size());
      return {view, std::move(owned)};
    }
    case NpyType::int64: {
      auto owned = std::make_shared<const NpyArray>(std::move(array));
      const LabelsView view(static_cast<const std::int64_t*>(owned->data()), owned->size());
      return {view, std::move(owned)};
    }
    case NpyType::int8: return widened_labels<std::int8_t>(array);
    case NpyType::uint8: return widened_labels<std::uint8_t>(array);
    case NpyType::boolean: return widened_labels<std::uint8_t>(array);
    case NpyType::int16: return widened_labels<std::int16_t>(array);
    case NpyType::uint16: return widened_labels<std::uint16_t>(array);
    case NpyType::uint32: return widened_labels<std::uint32_t>(array);
    case NpyType::uint64: return widened_labels<std::uint64_t>(array);
    case NpyType::float32: return widened_labels<float>(array);
    case NpyType::float64: return widened_labels<double>(array);
  }
  ECEKDE_ASSERT(false);
  return {};
}

Probabilities probabilities_from(CsvTable table) {
  auto values = std::make_shared<const std::vector<double>>(std::move(table.values));
  const ProbsView view = ProbsView::row_major(values->data(), table.rows, table.cols);
  return {view, std::move(values)};
}

Labels labels_from(const CsvTable& table, std::optional<std::size_t> column) {
  if (!column && table.cols != 1)
    fail_with(table.path, ": labels must be one column, the file has ", table.cols, " columns");
  const std::size_t c = column.value_or(0);
  if (c >= table.cols)
    fail_with(table.path, ": label column ", c, " is out of range (the file has ", table.cols, " columns)");
  if (const auto& bad = table.first_non_integer[c]) {
    const std::string where = table.cols == 1 ? "" : concat(", ", table.column_label(c));
    fail_with(table.path, " line ", bad->line, where, ": '", bad->text, "' is not an integer label");
  }
  auto out = std::make_shared<std::vector<std::int64_t>>(table.rows);
  for (std::size_t r = 0; r < table.rows; ++r) (*out)[r] = static_cast<std::int64_t>(table(r, c));
  const LabelsView view(out->data(), out->size());
  return {view, std::move(out)};
}

namespace {

enum class Format { npy, csv };

Format format_of(const std::string& path) {
  if (detail::has_extension(path, ".npy")) return Format::npy;
  if (detail::has_extension(path, ".csv")) return Format::csv;
  fail_with(path, ": unknown file type (expected a .npy or .csv file)");
}

}  // namespace

void write_file(const std::string& path, std::string_view bytes) { detail::write_all(path, bytes); }

Probabilities read_probabilities(const std::string& path) {
  return format_of(path) == Format::npy ? probabilities_from(read_npy(path)) : probabilities_from(read_csv(path));
}

Labels read_labels(const std::string& path) {
  return format_of(path) == Format::npy ? labels_from(read_npy(path)) : labels_from(read_csv(path));
}

Predictions read_predictions(const std::string& probs_path, const std::string& labels_path) {
  Predictions p;
  p.probs = read_probabilities(probs_path);
  p.labels = read_labels(labels_path);
  return p;
}

namespace {

std::size_t find_label_column(const CsvTable& t, std::string_view name) {
  const auto named = std::find(t.names.begin(), t.names.end(), name);
  if (named != t.names.end()) {
    if (std::find(named + 1, t.names.end(), name) != t.names.end())
      fail_with(t.path, ": column name '", name, "' appears more than once");
    return static_cast<std::size_t>(named - t.names.begin());
  }
  const bool digits = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) {  // an index; labels_from() checks its range
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), index);
    return ec == std::errc() ? index : std::numeric_limits<std::size_t>::max();
  }
  if (!t.has_header())
    fail_with(t.path, ": no column named '", name,
              "' (the file has no header row; give the label column's 0-based index)");
  std::string list;
  for (const auto& n : t.names) list += concat(list.empty() ? "" : ", ", n);
  fail_with(t.path, ": no column named '", name, "' (columns: ", list, ")");
}

}  // namespace

Predictions read_predictions_csv(const std::string& path, std::string_view label_column) {
  if (!detail::has_extension(path, ".csv")) fail_with(path, ": expected a .csv file");
  return predictions_from(read_csv(path), label_column);
}

Predictions predictions_from(const CsvTable& t, std::string_view label_column) {
  const std::size_t label = find_label_column(t, label_column);
  Predictions p;
  p.labels = labels_from(t, label);
  if (t.cols < 2)
    fail_with(t.path, ": needs a label column and at least one probability column, the file has 1 column");
  const std::size_t k = t.cols - 1;
  auto probs = std::make_shared<std::vector<double>>();
  probs->reserve(t.rows * k);
  for (std::size_t r = 0; r < t.rows; ++r)
    for (std::size_t c = 0; c < t.cols; ++c)
      if (c != label) probs->push_back(t(r, c));
  const ProbsView view = ProbsView::row_major(probs->data(), t.rows, k);
  p.probs = Probabilities(view, std::move(probs));
  return p;
}

}  // namespace ecekde::io
