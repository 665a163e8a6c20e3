#include "svg.hpp"

#include <cmath>
#include <cstdio>

#include "ecekde/error.hpp"

namespace ecekde::plot {

std::string format_number(double value, int decimals) {
  if (!std::isfinite(value)) return "0";  // never reached by the charts; keeps the SVG well-formed
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string points_attribute(const std::vector<Point>& points) {
  std::string out;
  for (const Point& p : points) {
    if (!out.empty()) out += ' ';
    out += format_number(p.x) + ',' + format_number(p.y);
  }
  return out;
}

Svg::Svg(double width, double height) : width_(width), height_(height) {
  element("rect", {{"width", "100%"}, {"height", "100%"}, {"fill", "white"}});
}

void Svg::start_tag(std::string_view name, std::initializer_list<Attr> attrs) {
  body_.append(2 * (open_.size() + 1), ' ');
  body_ += '<';
  body_ += name;
  for (const Attr& a : attrs) {
    body_ += ' ';
    body_ += a.name;
    body_ += "=\"";
    body_ += escape_xml(a.value);
    body_ += '"';
  }
}

void Svg::element(std::string_view name, std::initializer_list<Attr> attrs) {
  start_tag(name, attrs);
  body_ += "/>\n";
}

void Svg::element(std::string_view name, std::initializer_list<Attr> attrs, std::string_view text) {
  start_tag(name, attrs);
  body_ += '>';
  body_ += escape_xml(text);
  body_ += "</";
  body_ += name;
  body_ += ">\n";
}

void Svg::rich_text(std::initializer_list<Attr> attrs, std::string_view markup) {
  start_tag("text", attrs);
  body_ += '>';
  // A raised (lowered) run shifts the baseline for the rest of the text too, so the next plain run
  // starts with the opposite shift. Shifts are in em of the run's own font size (72% in scripts).
  const char* restore = nullptr;
  for (std::size_t i = 0; i < markup.size();) {
    const char c = markup[i];
    const std::size_t end = markup.size() > i + 1 && markup[i + 1] == '{' ? markup.find('}', i + 2)
                                                                          : std::string_view::npos;
    if ((c == '^' || c == '_') && end != std::string_view::npos) {
      const bool sup = c == '^';
      body_ += sup ? "<tspan dy=\"-0.45em\" font-size=\"72%\">" : "<tspan dy=\"0.3em\" font-size=\"72%\">";
      body_ += escape_xml(markup.substr(i + 2, end - i - 2));
      body_ += "</tspan>";
      restore = sup ? "0.324em" : "-0.216em";
      i = end + 1;
      continue;
    }
    const std::size_t next = markup.find_first_of("^_", i + 1);
    const std::size_t stop = next == std::string_view::npos ? markup.size() : next;
    std::string run = escape_xml(markup.substr(i, stop - i));
    // A space right after a script goes between the tspans: some renderers (librsvg) drop white space
    // at the start of a tspan, even a no-break space.
    if (restore && !run.empty() && run.front() == ' ') {
      body_ += ' ';
      run.erase(0, 1);
    }
    if (restore) {
      body_ += std::string("<tspan dy=\"") + restore + "\">" + run + "</tspan>";
      restore = nullptr;
    } else {
      body_ += run;
    }
    i = stop;
  }
  body_ += "</text>\n";
}

void Svg::open(std::string_view name, std::initializer_list<Attr> attrs) {
  start_tag(name, attrs);
  body_ += ">\n";
  open_.emplace_back(name);
}

void Svg::close() {
  if (open_.empty()) fail("internal error: Svg::close without an open element");
  const std::string name = std::move(open_.back());
  open_.pop_back();
  body_.append(2 * (open_.size() + 1), ' ');
  body_ += "</" + name + ">\n";
}

std::string Svg::str() const {
  if (!open_.empty()) fail("internal error: Svg element <" + open_.back() + "> left open");
  const std::string w = format_number(width_), h = format_number(height_);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w +
         " " + h + "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n" + body_ + "</svg>\n";
}

}  // namespace ecekde::plot
