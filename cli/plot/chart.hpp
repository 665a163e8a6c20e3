// Chart building blocks on top of svg.hpp: a data-to-pixel frame, tick positions, axes with labels,
// colours and colour maps, a colour bar and a legend. Every figure of `ecekde report --plot` uses these,
// so all of them share one look.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "svg.hpp"

namespace ecekde::plot {

/// The look shared by all figures.
namespace style {
inline constexpr double kFont = 12;        ///< tick labels, legends
inline constexpr double kLabelFont = 13;   ///< axis labels, panel titles
inline constexpr double kTitleFont = 16;   ///< figure titles
inline constexpr const char* kInk = "#222222";
inline constexpr const char* kMuted = "#666666";
inline constexpr const char* kGrid = "#e4e4e4";
inline constexpr const char* kBins = "#1f4e8c";      ///< binned statistics (markers, count bars)
inline constexpr const char* kBand = "#8fb8e8";      ///< interval bands
inline constexpr const char* kKde = "#d9480f";       ///< ECE^KDE curves
inline constexpr const char* kDiagonal = "#888888";  ///< the identity line
}  // namespace style

/// A closed interval of data values.
struct Range {
  double lo = 0, hi = 1;
};

/// A rectangle in pixels.
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
};

/// Maps data coordinates into a pixel box (y upwards), linearly or (log_y) logarithmically in y.
class Frame {
 public:
  Frame(Box box, Range x, Range y, bool log_y = false);
  double px(double x) const;
  double py(double y) const;
  const Box& box() const { return box_; }
  const Range& x_range() const { return x_; }
  const Range& y_range() const { return y_; }
  bool log_y() const { return log_y_; }

 private:
  Box box_;
  Range x_, y_;
  bool log_y_;
};

/// About `target` round tick values (multiples of 1, 2 or 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
/// Powers of ten within [lo, hi] (lo > 0), for a logarithmic axis.
std::vector<double> log_ticks(double lo, double hi);
/// A tick value as text, with as many decimals as the tick step needs ("0.2", "15", "1000").
std::string tick_text(double value, double step);

/// What to draw along one axis: tick values (empty = none), the label (rich_text markup), grid lines,
/// and whether the ticks are labelled.
struct Axis {
  std::vector<double> ticks;
  std::string label;
  bool grid = true;
  bool tick_labels = true;
};

/// Grid lines, the frame, ticks with their labels and the axis labels of `frame`.
void draw_axes(Svg& svg, const Frame& frame, const Axis& x, const Axis& y);

/// An RGB colour; hex() gives "#rrggbb".
struct Colour {
  double r = 0, g = 0, b = 0;  ///< each in [0, 1]
  std::string hex() const;
};

/// Sequential colour map for densities: dark violet (t = 0) through red and orange to pale yellow (t = 1).
Colour heat(double t);
/// Sequential colour map for counts: near-white (t = 0) to dark blue (t = 1).
Colour blues(double t);
/// A qualitative colour for category i (classes in scatter plots); 8 colours, then repeating.
Colour category(std::size_t i);

/// A tick of a colour bar: its position (in the bar's range) and its text.
struct Tick {
  double value = 0;
  std::string text;
};

/// A vertical colour bar for values in `range` drawn with `map` (t = 0 at range.lo), with ticks and a
/// label (rich_text markup) to its right.
void colour_bar(Svg& svg, Box box, Range range, const std::function<Colour(double)>& map,
                const std::vector<Tick>& ticks, std::string_view label);

/// One legend entry: a marker, line or patch, and its text (rich_text markup).
struct LegendEntry {
  enum class Kind { marker, line, dashed_line, patch } kind;
  std::string colour;
  std::string text;
};

/// Legend entries side by side from (x, y) (the baseline of the first row), wrapped into rows no wider than
/// max_width; returns the height used.
double legend(Svg& svg, double x, double y, double max_width, const std::vector<LegendEntry>& entries);

/// Approximate rendered width of rich_text markup at `font` pixels (sans-serif).
double text_width(std::string_view markup, double font);

}  // namespace ecekde::plot
