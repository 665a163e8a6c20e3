// The parts of the figures: SVG text, tick values, the Wilson interval, the normal quantile, the simplex
// grid and the canonical bin cells drawn on the simplex.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "chart.hpp"
#include "ecekde/error.hpp"
#include "reliability.hpp"
#include "simplex.hpp"
#include "svg.hpp"
#include "xml_check.hpp"

namespace {

using namespace ecekde::plot;

TEST(Svg, NumbersAndEscapes) {
  EXPECT_EQ(format_number(12.5), "12.5");
  EXPECT_EQ(format_number(3), "3");
  EXPECT_EQ(format_number(-0.001), "0");
  EXPECT_EQ(format_number(0.125, 3), "0.125");
  EXPECT_EQ(format_number(1.0 / 3), "0.33");
  EXPECT_EQ(escape_xml("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
}

TEST(Svg, DocumentIsWellFormed) {
  Svg svg(200, 100);
  svg.open("g", {{"class", "x & y"}});
  svg.element("rect", {{"x", 1.234}, {"width", 10}});
  svg.element("text", {{"x", 5}}, "a < b");
  svg.rich_text({{"x", 5}}, "ECE^{KDE} of f_{c} & more");
  svg.close();
  const std::string text = svg.str();
  EXPECT_EQ(xmlcheck::problem(text), "");
  EXPECT_NE(text.find("width=\"200\" height=\"100\" viewBox=\"0 0 200 100\""), std::string::npos);
  EXPECT_NE(text.find("<rect x=\"1.23\" width=\"10\"/>"), std::string::npos);
  EXPECT_NE(text.find(">a &lt; b</text>"), std::string::npos);
  // Scripts are smaller, raised or lowered tspans; the baseline comes back for the text after them, and
  // a space right after a script stays outside the tspans.
  EXPECT_NE(text.find("ECE<tspan dy=\"-0.45em\" font-size=\"72%\">KDE</tspan> <tspan dy=\"0.324em\">of f</tspan>"
                      "<tspan dy=\"0.3em\" font-size=\"72%\">c</tspan> <tspan dy=\"-0.216em\">&amp; more</tspan>"),
            std::string::npos)
      << text;
  Svg open(10, 10);
  open.open("g");
  EXPECT_THROW(open.str(), ecekde::Error);
}

TEST(Chart, Ticks) {
  EXPECT_EQ(nice_ticks(0, 1, 5), (std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}));
  EXPECT_EQ(nice_ticks(-2.7, 4.1, 5), (std::vector<double>{-2, 0, 2, 4}));
  EXPECT_EQ(log_ticks(0.5, 2000), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(tick_text(0.6000000000000001, 0.2), "0.6");
  EXPECT_EQ(tick_text(1000, 1), "1000");
  EXPECT_EQ(heat(0).hex(), "#140a38");
  EXPECT_EQ(blues(1).hex(), "#0a3073");
}

double area(const std::vector<Simplex3>& poly) {  // in units of the simplex's area (coordinates f_1, f_2)
  double a = 0;
  for (std::size_t i = 0; i < poly.size(); ++i) {
    const Simplex3& p = poly[i];
    const Simplex3& q = poly[(i + 1) % poly.size()];
    a += p[1] * q[2] - q[1] * p[2];
  }
  return std::fabs(a);  // twice the (f_1, f_2) area = area relative to the simplex
}

// With B equal-width bins for every class the cells are the B^2 triangles of a triangular grid, each of
// area 1/B^2; with different bins per class the cells still tile the simplex.
TEST(Simplex, CellsTileTheSimplex) {
  const auto edges_of = [](std::size_t b) {
    std::vector<double> e;
    for (std::size_t i = 0; i <= b; ++i) e.push_back(static_cast<double>(i) / static_cast<double>(b));
    return e;
  };
  const std::vector<std::vector<double>> equal{edges_of(4), edges_of(4), edges_of(4)};
  std::size_t triangles = 0;
  double total = 0;
  for (std::uint32_t a = 0; a < 4; ++a)
    for (std::uint32_t b = 0; b < 4; ++b)
      for (std::uint32_t c = 0; c < 4; ++c) {
        const auto poly = cell_polygon(equal, {a, b, c});
        const double s = poly.empty() ? 0 : area(poly);
        if (s < 1e-12) continue;
        ++triangles;
        EXPECT_EQ(poly.size(), 3u);
        EXPECT_NEAR(s, 1.0 / 16, 1e-12);
        EXPECT_TRUE(a + b + c == 2 || a + b + c == 3);
        total += s;
      }
  EXPECT_EQ(triangles, 16u);
  EXPECT_NEAR(total, 1, 1e-12);

  const std::vector<std::vector<double>> mixed{edges_of(3), edges_of(5), {0, 0.1, 0.5, 1}};
  total = 0;
  for (std::uint32_t a = 0; a < 3; ++a)
    for (std::uint32_t b = 0; b < 5; ++b)
      for (std::uint32_t c = 0; c < 3; ++c) {
        const auto poly = cell_polygon(mixed, {a, b, c});
        if (!poly.empty()) total += area(poly);
      }
  EXPECT_NEAR(total, 1, 1e-12);
}

}  // namespace
