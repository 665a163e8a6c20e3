// The report as text tables and as JSON.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "ecekde/error.hpp"
#include "ecekde/report.hpp"

namespace ecekde::report {

namespace {

std::string fmt(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string value(double v) { return fmt("%.4g", v); }
std::string p_value(double v) { return fmt("%.2g", v); }
// (Built by appending: GCC 12 warns falsely (-Wrestrict) about "literal" + std::string here.)
std::string norm(double p) {
  std::string s = "L";
  s += fmt("%g", p);
  return s;
}

// Bins per coordinate: "15", or for Doane's per-class choice "Doane 12" / "Doane 12-14".
std::string bins_text(const BinnedOptions& o, const BinnedResult& r) {
  std::size_t lo = SIZE_MAX, hi = 0;
  for (const auto& e : r.edges) {
    lo = std::min(lo, e.size() - 1);
    hi = std::max(hi, e.size() - 1);
  }
  const std::string range = lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
  return o.bins ? range : "Doane " + range;
}

std::string estimate_text(const BinnedOptions& o) {
  if (o.maximum) return "max (MCE)";
  if (o.form == BinnedForm::debiased) return "debiased L2";
  return norm(o.p) + (o.form == BinnedForm::per_sample ? " per-sample" : "");
}

std::string html_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

// Columns of text, left- or right-aligned, two spaces apart, indented by two; or an HTML table. The first
// row is the head unless the table is `headless` (rows of name and value).
class Table {
 public:
  explicit Table(std::vector<std::string> head, std::string right, bool headless = false)
      : right_(std::move(right)), headless_(headless) {
    rows_.push_back(std::move(head));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print_html(std::ostream& out) const {
    out << "<table>\n";
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      const char* cell = r == 0 && !headless_ ? "th" : "td";
      out << "<tr>";
      for (std::size_t c = 0; c < rows_[r].size(); ++c)
        out << '<' << cell << " style=\"text-align: " << (right_[c] == 'r' ? "right" : "left") << "\">"
            << html_escaped(rows_[r][c]) << "</" << cell << '>';
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  void print(std::ostream& out) const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_)
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (width.size() <= c) width.push_back(0);
        width[c] = std::max(width[c], row[c].size());
      }
    for (const auto& row : rows_) {
      std::string line = " ";
      for (std::size_t c = 0; c < row.size(); ++c) {
        const std::string pad(width[c] - row[c].size(), ' ');
        line += ' ';
        line += right_[c] == 'r' ? pad + row[c] : row[c] + pad;
        line += ' ';
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << '\n';
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::string right_;  // 'r' or 'l' per column
  bool headless_;
};

std::vector<std::string> resampling_cells(const std::optional<Uncertainty>& u) {
  if (!u) return {"-", "-"};
  std::string interval = "[";
  interval += value(u->lower);
  interval += ", ";
  interval += value(u->upper);
  interval += ']';
  return {interval, p_value(u->p_value)};
}

nlohmann::ordered_json interval_json(const Uncertainty& u, const Settings& s, const char* root, const char* pow) {
  return {{"level", s.level},
          {"replicates", s.replicates},
          {"seed", s.seed},
          {root, {{"lower", u.lower}, {"upper", u.upper}}},
          {pow, {{"lower", u.lower_pow}, {"upper", u.upper_pow}}}};
}

nlohmann::ordered_json test_json(const Uncertainty& u, const Settings& s) {
  return {{"replicates", s.replicates}, {"seed", s.seed}, {"statistic", u.statistic}, {"p_value", u.p_value}};
}

void add_uncertainty(nlohmann::ordered_json& j, const std::optional<Uncertainty>& u, const Settings& s,
                     const char* root = "ce", const char* pow = "ce_pow_p") {
  if (!u) return;
  j["interval"] = interval_json(*u, s, root, pow);
  j["calibration_test"] = test_json(*u, s);
}

}  // namespace

std::string describe(const BinnedOptions& o) {
  const std::string bins = o.bins ? std::to_string(*o.bins) + " " + std::string(to_string(o.binning)) + " bins"
                                  : "Doane " + std::string(to_string(o.binning)) + " bins";
  return std::string(to_string(o.type)) + ", " + bins + ", " + estimate_text(o);
}

namespace {

// The report's opening lines: the input, and how its intervals and tests were formed.
std::vector<std::string> heading(const Report& r, const Provenance& provenance) {
  const Settings& s = r.settings;
  std::string files;
  for (const auto& [key, v] : provenance.files.items()) files += (files.empty() ? "" : ", ") + key + " " + v.get<std::string>();
  std::ostringstream input;
  input << r.summary.n << " samples, " << r.summary.k << (r.summary.k == 1 ? " column P(y = 1)" : " classes") << " ("
        << r.probs_dtype;
  if (!s.classes.empty()) {
    input << "; classes";
    for (std::int64_t c : s.classes) input << ' ' << c;
    input << " of the input, renormalised";
  } else if (s.renormalize) {
    input << "; rows renormalised";
  }
  input << ")";
  const std::string resampling =
      s.replicates ? fmt("%g", 100 * s.level) + "% bootstrap intervals and calibration-test p-values from B = " +
                         std::to_string(s.replicates) + " replicates (seed " + std::to_string(s.seed) + ")"
                   : "no intervals or tests (--replicates 0)";
  return {files.empty() ? "ecekde report" : "ecekde report: " + files, input.str(), resampling};
}

std::string interval_head(const Settings& s) { return s.replicates ? fmt("%g", 100 * s.level) + "% interval" : "interval"; }

Table summary_table(const Report& r) {
  Table summary({"accuracy", value(r.summary.accuracy)}, "lr", true);
  summary.add({"mean confidence", value(r.summary.mean_confidence)});
  summary.add({"NLL", value(r.summary.nll)});
  summary.add({"Brier score", value(r.summary.brier)});
  return summary;
}

Table crossfit_table(const Report& r) {
  Table crossfit({"type", "CE_p", fmt("%g", 100 * r.settings.level) + "% interval", "bandwidth"}, "lrlr");
  for (const Result& e : r.crossfit)
    crossfit.add({std::string(to_string(e.type)), value(e.ce),
                  concat("[", value(e.ce_interval->lower), ", ", value(e.ce_interval->upper), "]"), value(e.bandwidth)});
  return crossfit;
}

std::vector<std::string> crossfit_warnings(const Report& r) {
  std::vector<std::string> lines;
  for (const Result& e : r.crossfit) {
    if (e.averaged_rows > 0 && e.averaged_rows < e.n)
      lines.push_back(concat("note: ", to_string(e.type), ": the row mean averages ", e.averaged_rows, " of ", e.n,
                             " rows, a random subset (its standard error includes the subsampling)"));
    for (const std::string& w : e.warnings) lines.push_back(concat("warning: ", to_string(e.type), ": ", w));
  }
  return lines;
}

Table kde_table(const Report& r) {
  Table kde({"type", "CE_p", interval_head(r.settings), "p-value", "bandwidth"}, "lrlrr");
  for (const KdeEntry& e : r.kde) {
    std::vector<std::string> row{std::string(to_string(e.result.type)), value(e.result.ce)};
    for (auto& cell : resampling_cells(e.uncertainty)) row.push_back(cell);
    row.push_back(value(e.result.bandwidth));
    kde.add(row);
  }
  return kde;
}

std::vector<std::string> kde_notes(const Report& r) {
  std::vector<std::string> lines;
  for (const KdeEntry& e : r.kde) {
    if (e.search_reduced)
      lines.push_back(concat(to_string(e.result.type), ": bandwidth chosen by a criterion averaged over ",
                             e.result.selection->rows, " of the ", e.result.n,
                             " rows (each against every sample): over the usual rows it would form ",
                             fmt("%.2g", *e.search_reduced), " kernel sums per bandwidth, above the limit of ",
                             fmt("%.2g", r.settings.paper_search_limit), " (--paper-search-limit)"));
    if (e.resampling_skipped)
      lines.push_back(concat(to_string(e.result.type), ": no interval or test: they would form ",
                             fmt("%.2g", *e.resampling_skipped), " replicate sums, above the limit of ",
                             fmt("%.2g", r.settings.paper_resampling_limit), " (--paper-resampling-limit)"));
  }
  return lines;
}

Table binned_table(const Report& r) {
  Table binned({"type", "bins", "binning", "estimate", "value", interval_head(r.settings), "p-value", "note"},
               "llllrlrl");
  for (const BinnedEntry& e : r.binned) {
    std::vector<std::string> row{std::string(to_string(e.options.type)), bins_text(e.options, e.result),
                                 std::string(to_string(e.options.binning)), estimate_text(e.options), value(e.result.ce)};
    for (auto& cell : resampling_cells(e.uncertainty)) row.push_back(cell);
    row.push_back(e.options.form == BinnedForm::debiased ? "CE_2^2 estimate " + value(e.result.ce_pow_p) : "");
    binned.add(row);
  }
  return binned;
}

std::string mmce_title(const MmceEntry& m) {
  return "MMCE (unweighted, Laplacian kernel of width " + fmt("%g", m.options.kernel_width) + ")";
}

Table mmce_table(const Report& r) {
  Table mmce({"", "value", interval_head(r.settings), "p-value"}, "lrlr");
  std::vector<std::string> row{"MMCE", value(r.mmce->result.mmce)};
  for (auto& cell : resampling_cells(r.mmce->uncertainty)) row.push_back(cell);
  mmce.add(row);
  return mmce;
}

}  // namespace

void print_text(std::ostream& out, const Report& r, const Provenance& provenance) {
  const Settings& s = r.settings;
  for (const std::string& line : heading(r, provenance)) out << line << '\n';

  out << "\nSummary\n";
  summary_table(r).print(out);

  out << "\nCalibration error (" << norm(s.p) << "; the default estimator, crossfit: label noise is not counted as\n"
         "miscalibration; " << fmt("%g", 100 * s.level) << "% intervals from its standard error)\n";
  crossfit_table(r).print(out);
  for (const std::string& line : crossfit_warnings(r)) out << "  " << line << '\n';

  out << "\nECE^KDE of the paper (" << norm(s.p) << ", automatic bandwidth; for comparison: at practical n it also\n"
         "counts label noise, so it reads above the crossfit figures; docs/validation.md, Section 7)\n";
  kde_table(r).print(out);
  for (const std::string& line : kde_notes(r)) out << "  " << line << '\n';

  out << "\nECE^bin (binned)\n";
  binned_table(r).print(out);

  if (r.mmce) {
    out << '\n' << mmce_title(*r.mmce) << '\n';
    mmce_table(r).print(out);
  }
  if (s.replicates)
    out << "\np-values: consistency resampling (labels redrawn from the predictions) of \"the predictions are\n"
           "calibrated\"; the smallest possible is 1/(B + 1) = "
        << p_value(1.0 / static_cast<double>(s.replicates + 1)) << ".\n";
  if (!provenance.plots.empty()) {
    out << "\nPlots:\n";
    for (const std::string& p : provenance.plots) out << "  " << p << '\n';
  }
}

void print_html(std::ostream& out, const Report& r, const Provenance& provenance) {
  const Settings& s = r.settings;
  const auto paragraph = [&out](const std::string& text) { out << "<p>" << html_escaped(text) << "</p>\n"; };
  out << "<div class=\"ecekde-report\">\n";
  for (const std::string& line : heading(r, provenance)) paragraph(line);
  out << "<h4>Summary</h4>\n";
  summary_table(r).print_html(out);
  out << "<h4>Calibration error (" << norm(s.p) << "; the default estimator, crossfit)</h4>\n";
  crossfit_table(r).print_html(out);
  for (const std::string& line : crossfit_warnings(r)) paragraph(line);
  out << "<h4>ECE^KDE of the paper (" << norm(s.p) << ", automatic bandwidth; for comparison)</h4>\n";
  kde_table(r).print_html(out);
  for (const std::string& line : kde_notes(r)) paragraph(line);
  out << "<h4>ECE^bin (binned)</h4>\n";
  binned_table(r).print_html(out);
  if (r.mmce) {
    out << "<h4>" << html_escaped(mmce_title(*r.mmce)) << "</h4>\n";
    mmce_table(r).print_html(out);
  }
  out << "</div>\n";
}

nlohmann::ordered_json to_json(const Report& r, const Provenance& provenance) {
  const Settings& s = r.settings;
  nlohmann::ordered_json doc = {{"ecekde_version", ECEKDE_VERSION}, {"command", "report"}};
  doc["input"] = provenance.files;
  doc["input"]["n"] = r.summary.n;
  doc["input"]["k"] = r.summary.k;
  doc["input"]["probs_dtype"] = r.probs_dtype;
  if (!s.classes.empty()) doc["input"]["classes"] = s.classes;
  doc["input"]["renormalized"] = s.renormalize || !s.classes.empty();
  doc["settings"] = nlohmann::ordered_json::object();
  for (const options::Option<Settings>& o : options())  // classes and renormalize are shown with the input
    if (o.name != "classes" && o.name != "renormalize") doc["settings"][std::string(o.name)] = value_json(o.get(s));
  doc["summary"] = {{"n", r.summary.n},
                    {"k", r.summary.k},
                    {"accuracy", r.summary.accuracy},
                    {"mean_confidence", r.summary.mean_confidence},
                    {"nll", r.summary.nll},
                    {"brier", r.summary.brier}};
  doc["crossfit"] = nlohmann::ordered_json::array();
  for (const Result& e : r.crossfit) doc["crossfit"].push_back(result_json(e));
  doc["kde"] = nlohmann::ordered_json::array();
  for (const KdeEntry& e : r.kde) {
    nlohmann::ordered_json j = result_json(e.result);
    add_uncertainty(j, e.uncertainty, s);
    if (e.resampling_skipped)
      j["resampling_skipped"] = {{"work", *e.resampling_skipped}, {"limit", s.paper_resampling_limit}};
    if (e.search_reduced)
      j["search_reduced"] = {
          {"rows", e.result.selection->rows}, {"work", *e.search_reduced}, {"limit", s.paper_search_limit}};
    doc["kde"].push_back(j);
  }
  doc["binned"] = nlohmann::ordered_json::array();
  for (const BinnedEntry& e : r.binned) {
    std::vector<std::size_t> bins;
    for (const auto& edges : e.result.edges) bins.push_back(edges.size() - 1);
    nlohmann::ordered_json j = {{"type", to_string(e.result.type)},
                                {"binning", to_string(e.result.binning)},
                                {"bins_rule", e.options.bins ? "fixed" : "doane"},
                                {"bins", bins},
                                {"occupied", e.result.occupied},
                                {"form", to_string(e.result.form)},
                                {"p", e.result.p},
                                {"maximum", e.result.maximum},
                                {"ce", e.result.ce},
                                {"ce_pow_p", e.result.ce_pow_p},
                                {"n", e.result.n},
                                {"k", e.result.k}};
    if (e.result.type == CalibrationType::marginal) j["class_ce_pow_p"] = e.result.class_ce_pow_p;
    add_uncertainty(j, e.uncertainty, s);
    doc["binned"].push_back(j);
  }
  if (r.mmce) {
    const MmceEntry& m = *r.mmce;
    nlohmann::ordered_json j = {{"weighted", m.options.weighted},
                                {"kernel_width", m.options.kernel_width},
                                {"mmce", m.result.mmce},
                                {"mmce_squared", m.result.mmce_squared},
                                {"n", m.result.n},
                                {"k", m.result.k}};
    add_uncertainty(j, m.uncertainty, s, "mmce", "mmce_squared");
    doc["mmce"] = j;
  }
  doc["plots"] = provenance.plots;
  return doc;
}

}  // namespace ecekde::report
