#include "chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace ecekde::plot {

Frame::Frame(Box box, Range x, Range y, bool log_y) : box_(box), x_(x), y_(y), log_y_(log_y) {}

double Frame::px(double x) const { return box_.x + (x - x_.lo) / (x_.hi - x_.lo) * box_.w; }

double Frame::py(double y) const {
  const double t = log_y_ ? std::log(y / y_.lo) / std::log(y_.hi / y_.lo) : (y - y_.lo) / (y_.hi - y_.lo);
  return box_.y + box_.h - t * box_.h;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double eps = step * 1e-9;
  for (double v = std::ceil((lo - eps) / step) * step; v <= hi + eps; v += step)
    ticks.push_back(std::fabs(v) < eps ? 0.0 : v);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (double v = std::pow(10.0, std::ceil(std::log10(lo) - 1e-9)); v <= hi * (1 + 1e-9); v *= 10)
    ticks.push_back(v);
  return ticks;
}

std::string tick_text(double value, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 10), value);
  return buf;
}

namespace {

// The spacing of ticks (for their labels' decimals): the smallest gap, or 1 for a single tick.
double tick_step(const std::vector<double>& ticks) {
  double step = 0;
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    const double gap = ticks[i] - ticks[i - 1];
    step = i == 1 ? gap : std::min(step, gap);
  }
  return ticks.size() < 2 ? 1 : step;
}

}  // namespace

void draw_axes(Svg& svg, const Frame& frame, const Axis& x, const Axis& y) {
  const Box& b = frame.box();
  const double x_step = tick_step(x.ticks), y_step = frame.log_y() ? 1 : tick_step(y.ticks);
  svg.open("g", {{"class", "axes"}});
  svg.open("g", {{"stroke", style::kGrid}, {"stroke-width", 1}});
  if (x.grid)
    for (double t : x.ticks) svg.element("line", {{"x1", frame.px(t)}, {"y1", b.y}, {"x2", frame.px(t)}, {"y2", b.y + b.h}});
  if (y.grid)
    for (double t : y.ticks) svg.element("line", {{"x1", b.x}, {"y1", frame.py(t)}, {"x2", b.x + b.w}, {"y2", frame.py(t)}});
  svg.close();
  svg.element("rect", {{"x", b.x}, {"y", b.y}, {"width", b.w}, {"height", b.h}, {"fill", "none"},
                       {"stroke", style::kInk}, {"stroke-width", 1}});
  svg.open("g", {{"stroke", style::kInk}, {"stroke-width", 1}});
  for (double t : x.ticks) svg.element("line", {{"x1", frame.px(t)}, {"y1", b.y + b.h}, {"x2", frame.px(t)}, {"y2", b.y + b.h + 4}});
  for (double t : y.ticks) svg.element("line", {{"x1", b.x - 4}, {"y1", frame.py(t)}, {"x2", b.x}, {"y2", frame.py(t)}});
  svg.close();
  svg.open("g", {{"font-size", style::kFont}, {"fill", style::kInk}});
  if (x.tick_labels)
    for (double t : x.ticks)
      svg.element("text", {{"x", frame.px(t)}, {"y", b.y + b.h + 4 + style::kFont}, {"text-anchor", "middle"}},
                  tick_text(t, x_step));
  if (y.tick_labels)
    for (double t : y.ticks)
      svg.element("text", {{"x", b.x - 7}, {"y", frame.py(t) + style::kFont * 0.35}, {"text-anchor", "end"}},
                frame.log_y() ? tick_text(t, 1) : tick_text(t, y_step));
  svg.close();
  if (!x.label.empty())
    svg.rich_text({{"x", b.x + b.w / 2}, {"y", b.y + b.h + 8 + 2.2 * style::kFont}, {"text-anchor", "middle"},
                   {"font-size", style::kLabelFont}, {"fill", style::kInk}},
                  x.label);
  if (!y.label.empty()) {
    const double lx = b.x - 44, ly = b.y + b.h / 2;
    svg.rich_text({{"x", lx}, {"y", ly}, {"text-anchor", "middle"}, {"font-size", style::kLabelFont},
                   {"fill", style::kInk}, {"transform", "rotate(-90 " + format_number(lx) + " " + format_number(ly) + ")"}},
                  y.label);
  }
  svg.close();
}

std::string Colour::hex() const {
  auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255)); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", byte(r), byte(g), byte(b));
  return buf;
}

namespace {

// Piecewise-linear interpolation between equally spaced anchor colours.
template <std::size_t N>
Colour interpolate(const std::array<Colour, N>& anchors, double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * (N - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(t), N - 2);
  const double u = t - static_cast<double>(i);
  const Colour& a = anchors[i];
  const Colour& c = anchors[i + 1];
  return {a.r + u * (c.r - a.r), a.g + u * (c.g - a.g), a.b + u * (c.b - a.b)};
}

}  // namespace

Colour heat(double t) {
  static const std::array<Colour, 6> anchors{{{0.08, 0.04, 0.22},
                                              {0.32, 0.08, 0.48},
                                              {0.62, 0.16, 0.45},
                                              {0.88, 0.33, 0.27},
                                              {0.98, 0.64, 0.20},
                                              {0.99, 0.96, 0.70}}};
  return interpolate(anchors, t);
}

Colour blues(double t) {
  static const std::array<Colour, 4> anchors{
      {{0.95, 0.97, 1.00}, {0.62, 0.78, 0.92}, {0.22, 0.50, 0.78}, {0.04, 0.19, 0.45}}};
  return interpolate(anchors, t);
}

Colour category(std::size_t i) {
  static const std::array<Colour, 8> colours{{{0.13, 0.40, 0.72},
                                              {0.89, 0.45, 0.10},
                                              {0.20, 0.60, 0.25},
                                              {0.80, 0.18, 0.22},
                                              {0.52, 0.36, 0.70},
                                              {0.55, 0.37, 0.28},
                                              {0.85, 0.42, 0.68},
                                              {0.45, 0.45, 0.45}}};
  return colours[i % colours.size()];
}

void colour_bar(Svg& svg, Box box, Range range, const std::function<Colour(double)>& map,
                const std::vector<Tick>& ticks, std::string_view label) {
  constexpr int kSteps = 64;
  svg.open("g", {{"class", "colour-bar"}});
  for (int s = 0; s < kSteps; ++s) {
    const double y = box.y + box.h - (s + 1) * box.h / kSteps;
    svg.element("rect", {{"x", box.x}, {"y", y}, {"width", box.w}, {"height", box.h / kSteps + 0.5},
                         {"fill", map((s + 0.5) / kSteps).hex()}});
  }
  svg.element("rect", {{"x", box.x}, {"y", box.y}, {"width", box.w}, {"height", box.h}, {"fill", "none"},
                       {"stroke", style::kInk}, {"stroke-width", 0.8}});
  for (const Tick& t : ticks) {
    const double y = box.y + box.h - (t.value - range.lo) / (range.hi - range.lo) * box.h;
    svg.element("line", {{"x1", box.x + box.w}, {"y1", y}, {"x2", box.x + box.w + 4}, {"y2", y}, {"stroke", style::kInk}});
    svg.element("text", {{"x", box.x + box.w + 7}, {"y", y + style::kFont * 0.35}, {"font-size", style::kFont},
                         {"fill", style::kInk}},
                t.text);
  }
  const double lx = box.x + box.w + 50, ly = box.y + box.h / 2;
  svg.rich_text({{"x", lx}, {"y", ly}, {"text-anchor", "middle"}, {"font-size", style::kFont}, {"fill", style::kInk},
                 {"transform", "rotate(-90 " + format_number(lx) + " " + format_number(ly) + ")"}},
                label);
  svg.close();
}

double text_width(std::string_view markup, double font) {
  double w = 0;
  double scale = 1;
  for (std::size_t i = 0; i < markup.size(); ++i) {
    const char c = markup[i];
    if ((c == '^' || c == '_') && i + 1 < markup.size() && markup[i + 1] == '{') {
      scale = 0.72;
      ++i;
      continue;
    }
    if (c == '}' && scale < 1) {
      scale = 1;
      continue;
    }
    if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    w += 0.58 * font * scale;  // about the mean advance of DejaVu Sans / Helvetica
  }
  return w;
}

double legend(Svg& svg, double x, double y, double max_width, const std::vector<LegendEntry>& entries) {
  const double line = style::kFont * 1.6;
  double cx = x, cy = y;
  svg.open("g", {{"class", "legend"}, {"font-size", style::kFont}, {"fill", style::kInk}});
  for (const LegendEntry& e : entries) {
    const double width = 24 + text_width(e.text, style::kFont);
    if (cx > x && cx + width > x + max_width) {
      cx = x;
      cy += line;
    }
    const double mid = cy - style::kFont * 0.35;
    switch (e.kind) {
      case LegendEntry::Kind::marker:
        svg.element("circle", {{"cx", cx + 9}, {"cy", mid}, {"r", 4}, {"fill", e.colour}, {"stroke", "white"}, {"stroke-width", 1}});
        break;
      case LegendEntry::Kind::line:
        svg.element("line", {{"x1", cx}, {"y1", mid}, {"x2", cx + 18}, {"y2", mid}, {"stroke", e.colour}, {"stroke-width", 2.5}});
        break;
      case LegendEntry::Kind::dashed_line:
        svg.element("line", {{"x1", cx}, {"y1", mid}, {"x2", cx + 18}, {"y2", mid}, {"stroke", e.colour}, {"stroke-width", 1.5},
                             {"stroke-dasharray", "4 3"}});
        break;
      case LegendEntry::Kind::patch:
        svg.element("rect", {{"x", cx + 2}, {"y", mid - 6}, {"width", 14}, {"height", 12}, {"fill", e.colour}, {"fill-opacity", 0.6}});
        break;
    }
    svg.rich_text({{"x", cx + 24}, {"y", cy}}, e.text);
    cx += width + 22;
  }
  svg.close();
  return cy - y + line;
}

}  // namespace ecekde::plot
