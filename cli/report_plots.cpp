// The figures of `ecekde report --plot DIR`: the data each needs (the library's reliability_figure and
// simplex_figure at the report's bandwidths) handed to cli/plot.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "ecekde/error.hpp"
#include "ecekde/io.hpp"
#include "ecekde/reliability.hpp"
#include "reliability.hpp"
#include "report_plots.hpp"
#include "simplex.hpp"

namespace ecekde::cli {

using namespace report;

namespace {

// Per-class panels are drawn for at most this many classes.
constexpr std::size_t kMaxClassPanels = 100;
// Simplex view: triangles per side of the density grid, and at most this many predictions as dots.
constexpr std::size_t kDensityGrid = 48;
constexpr std::size_t kMaxScatter = 3000;
// Points of the smooth reliability curves.
constexpr std::size_t kCurvePoints = 401;

std::string g(double v, int digits = 4) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

const KdeEntry& kde_of(const Report& r, CalibrationType type) {
  for (const KdeEntry& e : r.kde)
    if (e.result.type == type) return e;
  fail("internal error: the report has no ECE^KDE " + std::string(to_string(type)));
}

std::string save(const std::string& svg, const std::filesystem::path& directory, const std::string& name) {
  const std::string path = (directory / name).string();
  io::write_file(path, svg);
  return path;
}

// The library's definition of the diagrams of `type` (ecekde::reliability_figure) at the report's bandwidth.
ReliabilityFigure figure_data(ProbsView probs, LabelsView labels, const Report& r, CalibrationType type,
                              std::optional<std::size_t> bins, int threads) {
  ReliabilityOptions o;
  o.type = type;
  o.p = r.settings.p;
  o.bins = bins;
  o.bandwidth = kde_of(r, type).result.bandwidth;
  o.level = r.settings.level;
  o.curve_points = kCurvePoints;
  o.execution = {.threads = threads, .control = r.settings.control};
  return reliability_figure(probs, labels, o);
}

// A panel to draw: the library's panel with its words.
plot::ReliabilityPanel drawn(const ReliabilityPanel& data) {
  plot::ReliabilityPanel panel;
  panel.bins = data.bins;
  panel.lower = data.lower;
  panel.upper = data.upper;
  panel.curve_x = data.curve_x;
  panel.curve_y = data.curve_y;
  return panel;
}

std::string top_label_figure(ProbsView probs, LabelsView labels, const Report& r, int threads) {
  const bool binary = probs.cols() == 1;
  const CalibrationType type = binary ? CalibrationType::binary : CalibrationType::top_label;
  const ReliabilityFigure data = figure_data(probs, labels, r, type, r.settings.bins, threads);
  const ReliabilityPanel& d = data.panels[0];
  plot::ReliabilityFigure f;
  f.level = data.level;
  f.title = binary ? "Reliability diagram: P(y = 1) against the predicted probability"
                   : "Top-label reliability diagram: accuracy against confidence";
  f.curve_label = binary ? "ECE^{KDE}'s estimate of P(y = 1 | p)" : "ECE^{KDE}'s estimate of P(correct | confidence)";
  plot::ReliabilityPanel panel = drawn(d);
  panel.title = std::string(to_string(type)) + ", " + std::to_string(d.bin_count) + " equal-width bins, " +
                std::to_string(r.summary.n) + " samples";
  panel.subtitle = "ECE^{bin} " + g(std::pow(d.ece_bin, 1 / data.p)) + ",  ECE^{KDE} " +
                   g(std::pow(d.ece_kde, 1 / data.p)) + " (h = " + g(data.bandwidth) + "),  L" + g(data.p);
  panel.x_label = binary ? "predicted probability P(y = 1)" : "confidence (largest predicted probability)";
  panel.y_label = binary ? "frequency of y = 1" : "accuracy";
  f.panels.push_back(std::move(panel));
  return plot::reliability_svg(f);
}

std::string class_figure(ProbsView probs, LabelsView labels, const Report& r, const std::vector<std::string>& names,
                         int threads) {
  const ReliabilityFigure data = figure_data(probs, labels, r, CalibrationType::marginal, std::nullopt, threads);
  plot::ReliabilityFigure f;
  f.level = data.level;
  f.title = "Per-class reliability diagrams: frequency of each class against its predicted probability";
  f.curve_label = "ECE^{KDE}'s estimate of P(y = c | f_{c})";
  for (std::size_t c = 0; c < data.panels.size(); ++c) {
    const ReliabilityPanel& d = data.panels[c];
    plot::ReliabilityPanel panel = drawn(d);
    panel.title = "class " + names[c] + ", Doane: " + std::to_string(d.bin_count) + " bins";
    panel.subtitle = "class term: ECE^{bin} " + g(d.ece_bin, 3) + ", ECE^{KDE} " + g(d.ece_kde, 3);
    panel.x_label = "predicted probability f_{c}";
    panel.y_label = "frequency of y = c";
    f.panels.push_back(std::move(panel));
  }
  return plot::reliability_svg(f);
}

std::string simplex_figure(ProbsView probs, LabelsView labels, const Report& r, const std::vector<std::string>& names,
                           std::size_t simplex_bins, int threads) {
  const KdeEntry& kde = kde_of(r, CalibrationType::canonical);
  SimplexOptions o;
  o.p = r.settings.p;
  o.bins = simplex_bins;
  o.bandwidth = kde.result.bandwidth;
  o.grid = kDensityGrid;
  o.execution = {.threads = threads, .control = r.settings.control};
  const ecekde::SimplexFigure data = ecekde::simplex_figure(probs, labels, o);
  const BinnedResult& binned = data.binned;

  plot::SimplexFigure f;
  f.title = "The simplex of three classes: binned and kernel estimates (cf. Figure 1 of the paper)";
  for (std::size_t c = 0; c < 3; ++c) f.class_names[c] = names[c];
  const std::size_t n = probs.rows(), stride = (n + kMaxScatter - 1) / kMaxScatter;
  for (std::size_t i = 0; i < n; i += stride) {
    f.points.push_back({probs(i, 0), probs(i, 1), probs(i, 2)});
    f.point_labels.push_back(static_cast<std::size_t>(labels[i]));
  }
  f.scatter_subtitle = (stride == 1 ? std::to_string(n) + " predictions" : std::to_string(f.points.size()) + " of " +
                                                                                std::to_string(n) + " predictions") +
                       ", coloured by label";
  f.edges = binned.edges;
  f.cells = binned.cells;
  f.histogram_subtitle = std::to_string(simplex_bins) + " equal-width bins per class, " + std::to_string(binned.cells.size()) +
                         " cells occupied; ECE^{bin} " + g(binned.ce);
  f.grid = data.grid;
  f.log_density = data.log_density;
  f.density_subtitle = "h = " + g(kde.result.bandwidth) + "; canonical ECE^{KDE} " + g(kde.result.ce);
  return plot::simplex_svg(f);
}

}  // namespace

std::vector<std::string> write_report_plots(ProbsView probs, LabelsView labels, const report::Report& r,
                                     const std::vector<std::string>& class_names, const std::string& directory,
                                     std::size_t simplex_bins) {
  const std::filesystem::path dir(directory);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(directory + ": cannot create the plot directory: " + ec.message());
  const int threads = r.settings.threads;
  const std::size_t K = probs.cols();
  std::vector<std::string> files;
  files.push_back(save(top_label_figure(probs, labels, r, threads), dir,
                       K == 1 ? "reliability_binary.svg" : "reliability_top_label.svg"));
  if (K >= 2 && K <= kMaxClassPanels)
    files.push_back(save(class_figure(probs, labels, r, class_names, threads), dir, "reliability_classes.svg"));
  if (K == 3) files.push_back(save(simplex_figure(probs, labels, r, class_names, simplex_bins, threads), dir, "simplex.svg"));
  return files;
}

}  // namespace ecekde::cli
