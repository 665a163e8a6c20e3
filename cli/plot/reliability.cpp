#include "reliability.hpp"

#include <algorithm>
#include <cmath>

#include "chart.hpp"

namespace ecekde::plot {

namespace {

struct Layout {
  double plot;           // side of the square diagram
  double strip = 64;     // height of the count strip
  double left = 64, right = 30, top = 48, gap = 8, bottom = 46;
  double width() const { return left + plot + right; }
  double height() const { return top + plot + gap + strip + bottom; }
};

void draw_panel(Svg& svg, const ReliabilityPanel& panel, const Layout& L, int id) {
  svg.rich_text({{"x", L.left}, {"y", 17}, {"font-size", style::kLabelFont}, {"font-weight", "bold"},
                 {"fill", style::kInk}},
                panel.title);
  if (!panel.subtitle.empty())
    svg.rich_text({{"x", L.left}, {"y", 35}, {"font-size", style::kFont}, {"fill", style::kMuted}}, panel.subtitle);

  const Frame main({L.left, L.top, L.plot, L.plot}, {0, 1}, {0, 1});
  const std::vector<double> unit_ticks = nice_ticks(0, 1, 5);
  draw_axes(svg, main, {unit_ticks, "", true, false}, {unit_ticks, panel.y_label});

  const std::string clip = "clip" + std::to_string(id);
  svg.open("clipPath", {{"id", clip}});
  // A little wider than the frame, so that markers at accuracy 0 or 1 show whole.
  svg.element("rect", {{"x", L.left - 6}, {"y", L.top - 6}, {"width", L.plot + 12}, {"height", L.plot + 12}});
  svg.close();
  svg.open("g", {{"clip-path", "url(#" + clip + ")"}});

  svg.open("g", {{"class", "band"}, {"fill", style::kBand}, {"fill-opacity", 0.45}});
  for (std::size_t i = 0; i < panel.bins.size(); ++i) {
    const ReliabilityBin& b = panel.bins[i];
    const double lo = panel.lower[i], hi = panel.upper[i];
    svg.element("rect", {{"x", main.px(b.lower)}, {"y", main.py(hi)}, {"width", main.px(b.upper) - main.px(b.lower)},
                         {"height", main.py(lo) - main.py(hi)}});
  }
  svg.close();
  svg.element("line", {{"class", "diagonal"}, {"x1", main.px(0)}, {"y1", main.py(0)}, {"x2", main.px(1)}, {"y2", main.py(1)},
                       {"stroke", style::kDiagonal}, {"stroke-width", 1.2}, {"stroke-dasharray", "5 4"}});
  if (panel.curve_x.size() >= 2) {
    std::vector<Point> pts;
    for (std::size_t i = 0; i < panel.curve_x.size(); ++i)
      pts.push_back({main.px(panel.curve_x[i]), main.py(panel.curve_y[i])});
    svg.element("polyline", {{"class", "kde-curve"}, {"points", points_attribute(pts)}, {"fill", "none"},
                             {"stroke", style::kKde}, {"stroke-width", 2.2}, {"stroke-linejoin", "round"}});
  }
  svg.open("g", {{"class", "bins"}, {"fill", style::kBins}, {"stroke", "white"}, {"stroke-width", 1}});
  for (const ReliabilityBin& b : panel.bins)
    svg.element("circle", {{"class", "bin-marker"}, {"cx", main.px(b.mean_confidence)}, {"cy", main.py(b.mean_label)}, {"r", 4}});
  svg.close();
  svg.close();  // clip group

  // The count strip: one bar per occupied bin over the bin's edges, on a log scale (counts span decades
  // when scores pile up near 0 or 1).
  std::size_t most = 1;
  for (const ReliabilityBin& b : panel.bins) most = std::max(most, b.count);
  const double floor = 0.5, top = std::max(10.0, 1.6 * static_cast<double>(most));
  const Frame strip({L.left, L.top + L.plot + L.gap, L.plot, L.strip}, {0, 1}, {floor, top}, true);
  draw_axes(svg, strip, {unit_ticks, panel.x_label, false, true}, {log_ticks(1, top), "samples", false, true});
  svg.open("g", {{"class", "counts"}, {"fill", style::kBins}, {"fill-opacity", 0.75}});
  for (const ReliabilityBin& b : panel.bins) {
    const double y = strip.py(static_cast<double>(b.count));
    svg.element("rect", {{"x", strip.px(b.lower) + 0.5}, {"y", y}, {"width", std::max(0.5, strip.px(b.upper) - strip.px(b.lower) - 1)},
                         {"height", strip.py(floor) - y}});
  }
  svg.close();
}

}  // namespace

std::string reliability_svg(const ReliabilityFigure& figure) {
  const std::size_t count = figure.panels.size();
  const bool single = count == 1;
  Layout L;
  L.plot = single ? 360 : 230;
  const std::size_t columns = count <= 4 ? std::max<std::size_t>(count, 1)
                                         : static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(count))));
  const std::size_t rows = (count + columns - 1) / std::max<std::size_t>(columns, 1);
  const double margin = 16;
  const double width = std::max(2 * margin + static_cast<double>(columns) * L.width(),
                                 2 * margin + 1.1 * text_width(figure.title, style::kTitleFont));  // bold: ~10% wider

  const std::vector<LegendEntry> entries{
      {LegendEntry::Kind::marker, style::kBins, "bin: mean score, label frequency"},
      {LegendEntry::Kind::patch, style::kBand,
       format_number(100 * figure.level, 1) + "% Wilson interval of the bin's frequency"},
      {LegendEntry::Kind::line, style::kKde, figure.curve_label},
      {LegendEntry::Kind::dashed_line, style::kDiagonal, "perfect calibration"}};
  // The legend's height depends on wrapping: lay it out once in a scratch document to measure it.
  Svg scratch(width, 100);
  const double legend_height = legend(scratch, 0, 0, width - 2 * margin, entries);
  const double header = 34 + legend_height + 6;

  Svg svg(width, header + static_cast<double>(rows) * L.height() + margin);
  svg.rich_text({{"x", margin}, {"y", 24}, {"font-size", style::kTitleFont}, {"font-weight", "bold"}, {"fill", style::kInk}},
                figure.title);
  legend(svg, margin, 50, width - 2 * margin, entries);
  for (std::size_t i = 0; i < count; ++i) {
    const double x = (width - static_cast<double>(columns) * L.width()) / 2 + static_cast<double>(i % columns) * L.width();
    const double y = header + static_cast<double>(i / columns) * L.height();
    svg.open("g", {{"class", "panel"}, {"transform", "translate(" + format_number(x) + " " + format_number(y) + ")"}});
    draw_panel(svg, figure.panels[i], L, static_cast<int>(i));
    svg.close();
  }
  return svg.str();
}

}  // namespace ecekde::plot
