// A small SVG writer: elements with attributes, nested groups, and text escaped for XML, with a tiny
// markup for super- and subscripts ("ECE^{KDE}", "CE_{p}"). It knows nothing about charts (chart.hpp).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ecekde::plot {

/// A point in pixels (x to the right, y downwards).
struct Point {
  double x = 0, y = 0;
};

/// A number as SVG text: at most `decimals` decimals, trailing zeros removed ("12.5", "3", "-0.25").
std::string format_number(double value, int decimals = 2);

/// `text` with &, <, >, " and ' replaced by XML entities.
std::string escape_xml(std::string_view text);

/// One attribute; numbers are written with format_number (pixel precision).
struct Attr {
  Attr(std::string_view name, std::string_view value) : name(name), value(value) {}
  Attr(std::string_view name, const char* value) : name(name), value(value) {}
  Attr(std::string_view name, const std::string& value) : name(name), value(value) {}
  Attr(std::string_view name, double value) : name(name), value(format_number(value)) {}
  std::string_view name;
  std::string value;
};

/// "x1,y1 x2,y2 ...": the points attribute of <polyline> and <polygon>.
std::string points_attribute(const std::vector<Point>& points);

class Svg {
 public:
  /// A document of width x height pixels with a white background.
  Svg(double width, double height);

  double width() const { return width_; }
  double height() const { return height_; }

  /// <name attrs/>
  void element(std::string_view name, std::initializer_list<Attr> attrs);
  /// <name attrs>text</name>, the text escaped.
  void element(std::string_view name, std::initializer_list<Attr> attrs, std::string_view text);
  /// <text attrs>...</text> whose text may hold ^{superscript} and _{subscript} parts (each becomes a
  /// smaller, raised or lowered <tspan>); everything else is escaped.
  void rich_text(std::initializer_list<Attr> attrs, std::string_view markup);
  /// Opens <name attrs>; close() ends the innermost open element.
  void open(std::string_view name, std::initializer_list<Attr> attrs = {});
  void close();

  /// The whole document. Every opened element must have been closed.
  std::string str() const;

 private:
  void start_tag(std::string_view name, std::initializer_list<Attr> attrs);

  double width_, height_;
  std::string body_;
  std::vector<std::string> open_;
};

}  // namespace ecekde::plot
