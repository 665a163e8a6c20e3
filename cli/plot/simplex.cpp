#include "simplex.hpp"

#include <algorithm>
#include <cmath>

#include "chart.hpp"

namespace ecekde::plot {

namespace {

// The polygon's part where sign * (f_c - bound) >= 0 (Sutherland-Hodgman against one half-plane;
// barycentric coordinates are affine, so the cut points interpolate linearly).
std::vector<Simplex3> clip(const std::vector<Simplex3>& poly, std::size_t c, double bound, double sign) {
  std::vector<Simplex3> out;
  for (std::size_t i = 0; i < poly.size(); ++i) {
    const Simplex3& a = poly[i];
    const Simplex3& b = poly[(i + 1) % poly.size()];
    const double da = sign * (a[c] - bound), db = sign * (b[c] - bound);
    if (da >= 0) out.push_back(a);
    if ((da >= 0) != (db >= 0)) {
      const double t = da / (da - db);
      out.push_back({a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])});
    }
  }
  return out;
}

}  // namespace

std::vector<Simplex3> cell_polygon(const std::vector<std::vector<double>>& edges, const std::vector<std::uint32_t>& bins) {
  std::vector<Simplex3> poly{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (std::size_t c = 0; c < 3 && poly.size() >= 3; ++c) {
    poly = clip(poly, c, edges[c][bins[c]], 1);
    if (poly.size() >= 3) poly = clip(poly, c, edges[c][bins[c] + 1], -1);
  }
  // A cut through a corner repeats it: keep one copy of each corner.
  std::vector<Simplex3> corners;
  for (const Simplex3& f : poly) {
    const Simplex3& last = corners.empty() ? poly.back() : corners.back();
    if (std::fabs(f[0] - last[0]) + std::fabs(f[1] - last[1]) + std::fabs(f[2] - last[2]) > 1e-12) corners.push_back(f);
  }
  return corners.size() >= 3 ? corners : std::vector<Simplex3>{};
}

namespace {

constexpr double kSide = 300, kRoot3 = 1.7320508075688772;

// Pixel position of f in a triangle whose top corner (class 2) is at (x0 + side/2, y0).
struct TrianglePlacement {
  double x0, y0;
  Point at(const Simplex3& f) const {
    return {x0 + kSide * (f[1] + f[2] / 2), y0 + kSide * kRoot3 / 2 * (1 - f[2])};
  }
  std::vector<Point> polygon(const std::vector<Simplex3>& fs) const {
    std::vector<Point> pts;
    for (const Simplex3& f : fs) pts.push_back(at(f));
    return pts;
  }
};

const std::vector<Simplex3> kCorners{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

void outline_and_corners(Svg& svg, const TrianglePlacement& t, const std::array<std::string, 3>& names) {
  svg.element("polygon", {{"class", "simplex-outline"}, {"points", points_attribute(t.polygon(kCorners))}, {"fill", "none"},
                          {"stroke", style::kInk}, {"stroke-width", 1.2}, {"stroke-linejoin", "round"}});
  svg.open("g", {{"font-size", style::kLabelFont}, {"fill", style::kInk}});
  const Point p0 = t.at(kCorners[0]), p1 = t.at(kCorners[1]), p2 = t.at(kCorners[2]);
  svg.element("text", {{"x", p0.x}, {"y", p0.y + 18}, {"text-anchor", "middle"}}, "class " + names[0]);
  svg.element("text", {{"x", p1.x}, {"y", p1.y + 18}, {"text-anchor", "middle"}}, "class " + names[1]);
  svg.element("text", {{"x", p2.x}, {"y", p2.y - 8}, {"text-anchor", "middle"}}, "class " + names[2]);
  svg.close();
}

void panel_title(Svg& svg, double x, double y, const std::string& title, const std::string& subtitle) {
  svg.rich_text({{"x", x}, {"y", y}, {"font-size", style::kLabelFont}, {"font-weight", "bold"}, {"fill", style::kInk}}, title);
  svg.rich_text({{"x", x}, {"y", y + 17}, {"font-size", style::kFont}, {"fill", style::kMuted}}, subtitle);
}

// Lines f_c = e for every inner edge e of every class: the grid of the binned estimator.
void bin_grid(Svg& svg, const TrianglePlacement& t, const std::vector<std::vector<double>>& edges) {
  svg.open("g", {{"class", "bin-grid"}, {"stroke", "#9a9a9a"}, {"stroke-width", 0.7}});
  for (std::size_t c = 0; c < 3 && c < edges.size(); ++c)
    for (double e : edges[c]) {
      if (!(e > 0 && e < 1)) continue;
      Simplex3 a{}, b{};
      a[c] = b[c] = e;
      a[(c + 1) % 3] = 1 - e;
      b[(c + 2) % 3] = 1 - e;
      const Point pa = t.at(a), pb = t.at(b);
      svg.element("line", {{"x1", pa.x}, {"y1", pa.y}, {"x2", pb.x}, {"y2", pb.y}});
    }
  svg.close();
}

void scatter_panel(Svg& svg, const SimplexFigure& f, const TrianglePlacement& t) {
  svg.element("polygon", {{"points", points_attribute(t.polygon(kCorners))}, {"fill", "#fafafa"}});
  bin_grid(svg, t, f.edges);
  svg.open("g", {{"class", "scatter"}, {"fill-opacity", 0.7}});
  for (std::size_t i = 0; i < f.points.size(); ++i) {
    const Point p = t.at(f.points[i]);
    svg.element("circle", {{"cx", p.x}, {"cy", p.y}, {"r", 1.9}, {"fill", category(f.point_labels[i]).hex()}});
  }
  svg.close();
  outline_and_corners(svg, t, f.class_names);
  const double y = t.y0 + kSide * kRoot3 / 2 + 42;
  std::vector<LegendEntry> entries;
  for (std::size_t c = 0; c < 3; ++c)
    entries.push_back({LegendEntry::Kind::marker, category(c).hex(), "label " + f.class_names[c]});
  legend(svg, t.x0, y, kSide + 40, entries);
}

void histogram_panel(Svg& svg, const SimplexFigure& f, const TrianglePlacement& t, double bar_x) {
  std::size_t most = 1;
  for (const SimplexCell& c : f.cells) most = std::max(most, c.count);
  const double top = std::log10(static_cast<double>(most));
  // Counts on a log scale: t = log10(count) / log10(max), so a single sample is the palest blue.
  auto shade = [top](double v) { return blues(0.08 + 0.92 * (top > 0 ? v / top : 1)); };
  svg.element("polygon", {{"points", points_attribute(t.polygon(kCorners))}, {"fill", "#f2f2f2"}});
  svg.open("g", {{"class", "cells"}, {"stroke", "white"}, {"stroke-width", 0.6}, {"stroke-linejoin", "round"}});
  for (const SimplexCell& c : f.cells) {
    const std::vector<Simplex3> poly = cell_polygon(f.edges, c.bins);
    if (poly.empty()) continue;
    svg.element("polygon", {{"class", "cell"}, {"points", points_attribute(t.polygon(poly))},
                            {"fill", shade(std::log10(static_cast<double>(c.count))).hex()}});
  }
  svg.close();
  outline_and_corners(svg, t, f.class_names);
  std::vector<Tick> ticks;
  for (double v : log_ticks(1, static_cast<double>(most))) ticks.push_back({std::log10(v), tick_text(v, 1)});
  if (static_cast<double>(most) > 2 * std::pow(10.0, ticks.back().value))  // label the top unless a tick is near
    ticks.push_back({top, std::to_string(most)});
  const double h = kSide * kRoot3 / 2;
  colour_bar(svg, {bar_x, t.y0 + 0.1 * h, 14, 0.8 * h}, {0, std::max(top, 1e-9)},
             [](double u) { return blues(0.08 + 0.92 * u); }, ticks, "samples per cell");
}

void density_panel(Svg& svg, const SimplexFigure& f, const TrianglePlacement& t, double bar_x) {
  // Colour range: from the 2% quantile to the maximum of the log density, so that a few nearly empty
  // regions do not wash out the rest.
  std::vector<double> sorted = f.log_density;
  std::sort(sorted.begin(), sorted.end());
  const double hi = sorted.back(), lo = std::min(sorted[sorted.size() / 50], hi - 1e-9);
  svg.open("g", {{"class", "density"}, {"stroke-width", 0.6}, {"stroke-linejoin", "round"}});
  const double M = static_cast<double>(f.grid);
  std::size_t q = 0;
  for (std::size_t j = 0; j < f.grid; ++j)
    for (std::size_t i = 0; i + j < f.grid; ++i) {
      const double a = static_cast<double>(i), b = static_cast<double>(j);
      auto corner = [&](double di, double dj) {
        const double f1 = (a + di) / M, f2 = (b + dj) / M;
        return Simplex3{1 - f1 - f2, f1, f2};
      };
      std::vector<std::vector<Simplex3>> triangles{{corner(0, 0), corner(1, 0), corner(0, 1)}};
      if (i + j + 2 <= f.grid) triangles.push_back({corner(1, 0), corner(0, 1), corner(1, 1)});
      for (const auto& tri : triangles) {
        const std::string colour = heat((f.log_density[q++] - lo) / (hi - lo)).hex();
        svg.element("polygon", {{"points", points_attribute(t.polygon(tri))}, {"fill", colour}, {"stroke", colour}});
      }
    }
  svg.close();
  outline_and_corners(svg, t, f.class_names);
  std::vector<Tick> ticks;
  const std::vector<double> values = nice_ticks(lo, hi, 5);
  const double step = values.size() > 1 ? values[1] - values[0] : 1;
  for (double v : values) ticks.push_back({v, tick_text(v, step)});
  const double h = kSide * kRoot3 / 2;
  colour_bar(svg, {bar_x, t.y0 + 0.1 * h, 14, 0.8 * h}, {lo, hi}, heat, ticks, "log density");
}

}  // namespace

std::string simplex_svg(const SimplexFigure& f) {
  const double panel_width = kSide + 150, margin = 40, top = 98;
  Svg svg(margin + 3 * panel_width, top + kSide * kRoot3 / 2 + 80);
  svg.rich_text({{"x", margin}, {"y", 26}, {"font-size", style::kTitleFont}, {"font-weight", "bold"}, {"fill", style::kInk}},
                f.title);
  const char* titles[] = {"(a) predictions and bins", "(b) binned simplex histogram", "(c) Dirichlet KDE of the predictions"};
  const std::string* subtitles[] = {&f.scatter_subtitle, &f.histogram_subtitle, &f.density_subtitle};
  for (int p = 0; p < 3; ++p) {
    const double x = margin + p * panel_width;
    svg.open("g", {{"class", p == 0 ? "panel scatter-panel" : p == 1 ? "panel histogram-panel" : "panel density-panel"}});
    panel_title(svg, x, 56, titles[p], *subtitles[p]);
    const TrianglePlacement t{x, top};
    if (p == 0) scatter_panel(svg, f, t);
    if (p == 1) histogram_panel(svg, f, t, x + kSide + 18);
    if (p == 2) density_panel(svg, f, t, x + kSide + 18);
    svg.close();
  }
  return svg.str();
}

}  // namespace ecekde::plot
