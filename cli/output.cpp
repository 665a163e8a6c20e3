#include "output.hpp"

#include <algorithm>
#include <cstdio>

#include "ecekde/error.hpp"
#include "ecekde/report.hpp"

namespace ecekde::cli {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

void print_table(std::ostream& out, const std::vector<Result>& results) {
  const std::vector<std::string> head{"estimator", "type", "p", "h", "CE_p", "CE_p interval", "CE_p^p", "n", "K",
                                      "bandwidth rule"};
  const std::vector<bool> right{false, false, true, true, true, false, true, true, true, false};
  std::vector<std::vector<std::string>> rows{head};
  for (const Result& r : results) {
    const std::string interval =
        r.ce_interval ? concat("[", number(r.ce_interval->lower), ", ", number(r.ce_interval->upper), "]") : "-";
    rows.push_back({std::string(to_string(r.estimator)), std::string(to_string(r.type)), number(r.p),
                    number(r.bandwidth), number(r.ce), interval, number(r.ce_pow_p), std::to_string(r.n),
                    std::to_string(r.k), report::bandwidth_rule(r)});
  }
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c) line += "  ";
      line += right[c] ? pad + row[c] : (c + 1 == row.size() ? row[c] : row[c] + pad);
    }
    out << line << '\n';
  }
  for (const Result& r : results) {
    if (r.averaged_rows > 0 && r.averaged_rows < r.n)
      out << "note: " << to_string(r.type) << " (p = " << number(r.p) << "): the row mean averages " << r.averaged_rows
          << " of " << r.n << " rows, a random subset (its standard error includes the subsampling; --mean-rows "
          << "sets how many)\n";
    for (const std::string& w : r.warnings)
      out << "warning: " << to_string(r.type) << " (p = " << number(r.p) << "): " << w << '\n';
  }
}

}  // namespace ecekde::cli
