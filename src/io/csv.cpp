// Comma-separated numeric tables with an optional header row.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/messages.hpp"
#include "ecekde/io.hpp"
#include "io/common.hpp"

namespace ecekde::io {

using ecekde::detail::concat;
using ecekde::detail::fail_with;

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Splits one line into trimmed cells; a cell may be double-quoted ("a, ""b""" -> a, "b").
std::vector<std::string> split_line(std::string_view line, const std::string& path, std::size_t line_no) {
  std::vector<std::string> cells;
  std::size_t pos = 0;
  for (;;) {
    while (pos < line.size() && is_blank(line[pos])) ++pos;
    std::string cell;
    if (pos < line.size() && line[pos] == '"') {
      ++pos;
      for (;;) {
        if (pos >= line.size()) fail_with(path, " line ", line_no, ": unterminated quoted cell");
        if (line[pos] == '"') {
          if (pos + 1 < line.size() && line[pos + 1] == '"') {
            cell += '"';
            pos += 2;
            continue;
          }
          ++pos;
          break;
        }
        cell += line[pos++];
      }
      while (pos < line.size() && is_blank(line[pos])) ++pos;
      if (pos < line.size() && line[pos] != ',')
        fail_with(path, " line ", line_no, ": unexpected text after a quoted cell");
    } else {
      const std::size_t end = std::min(line.find(',', pos), line.size());
      cell = std::string(trim(line.substr(pos, end - pos)));
      pos = end;
    }
    cells.push_back(std::move(cell));
    if (pos >= line.size()) return cells;
    ++pos;  // the comma
  }
}

// Parses a whole cell as a number ("+1.5", "2e-3", "nan", "inf" too); nullopt when it is not one.
std::optional<double> parse_number(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) return std::strtod(std::string(s).c_str(), nullptr);  // +-inf or ~0
  if (ec != std::errc()) return std::nullopt;
  return v;
}

bool is_integer(double v) {
  return std::isfinite(v) && v == std::trunc(v) && v >= -0x1p63 && v < 0x1p63;
}

bool needs_quotes(std::string_view s) {
  return s.find_first_of(",\"\n\r") != std::string_view::npos || trim(s).size() != s.size();
}

}  // namespace

std::string CsvTable::column_label(std::size_t c) const {
  if (c < names.size()) return concat("column ", c, " ('", names[c], "')");
  return concat("column ", c);
}

CsvTable read_csv(const std::string& path) { return parse_csv(path, detail::read_all(path)); }

CsvTable parse_csv(const std::string& path, std::string_view text) {
  std::string_view rest = text;
  if (rest.starts_with("\xEF\xBB\xBF")) rest.remove_prefix(3);

  CsvTable t;
  t.path = path;
  bool first = true;
  std::size_t first_line = 0;
  for (std::size_t line_no = 1; !rest.empty(); ++line_no) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;

    std::vector<std::string> cells = split_line(line, path, line_no);
    if (first) {
      first = false;
      first_line = line_no;
      t.cols = cells.size();
      t.first_non_integer.resize(t.cols);
      bool numeric = true;
      for (const auto& c : cells) numeric = numeric && parse_number(c).has_value();
      if (!numeric) {
        t.names = std::move(cells);
        continue;
      }
    }
    if (cells.size() != t.cols)
      fail_with(path, " line ", line_no, ": ", cells.size(), cells.size() == 1 ? " column" : " columns",
                ", expected ", t.cols, " (as in line ", first_line, ")");
    for (std::size_t c = 0; c < t.cols; ++c) {
      if (cells[c].empty()) fail_with(path, " line ", line_no, ", ", t.column_label(c), ": empty cell");
      const std::optional<double> v = parse_number(cells[c]);
      if (!v) fail_with(path, " line ", line_no, ", ", t.column_label(c), ": '", cells[c], "' is not a number");
      if (!t.first_non_integer[c] && !is_integer(*v)) t.first_non_integer[c] = CsvCell{line_no, cells[c]};
      t.values.push_back(*v);
    }
    t.lines.push_back(line_no);
    ++t.rows;
  }
  if (t.rows == 0) fail_with(path, ": no data rows");
  return t;
}

void write_csv(const std::string& path, const std::vector<std::string>& names, std::span<const double> values,
               std::size_t cols) {
  if (!names.empty()) cols = names.size();
  if (cols == 0 || values.size() % cols != 0)
    fail_with(path, ": cannot write: ", values.size(), " values do not fill rows of ", cols, " columns");
  std::string out;
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (c) out += ',';
    if (!needs_quotes(names[c])) {
      out += names[c];
      continue;
    }
    out += '"';
    for (char ch : names[c]) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    out += '"';
  }
  if (!names.empty()) out += '\n';
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += concat(values[i]);
    out += (i + 1) % cols == 0 ? '\n' : ',';
  }
  detail::write_all(path, out);
}

}  // namespace ecekde::io
