// The report's line charts tell their series apart: each of the first 21 series has its own
// colour, each of the first 28 its own marker and dash pattern, and the drawn SVG of a 19-series
// chart (the leaderboard's count) uses 19 colours, in its lines and in its legend.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "experiment/svg_figure.h"

namespace kvs::experiment {
namespace {

TEST(SvgFigure, EverySeriesHasItsOwnColourAndItsOwnMarkerAndDash) {
  std::set<std::string> colours;
  std::set<std::pair<int, std::string>> shapes;
  for (size_t i = 0; i < 28; ++i) {
    const SeriesStyle s = series_style(i);
    if (i < 21) colours.insert(s.colour);
    shapes.insert({s.marker, s.dash});
    EXPECT_LT(s.marker, static_cast<int>(kMarkerKinds));
  }
  EXPECT_EQ(colours.size(), 21u);
  EXPECT_EQ(shapes.size(), 28u);
}

TEST(SvgFigure, ANineteenSeriesChartDrawsNineteenColours) {
  LineChart chart;
  chart.title = "t";
  chart.x_ticks = {"64", "128"};
  for (int s = 0; s < 19; ++s)
    chart.series.push_back({"method " + std::to_string(s),
                            {BandPoint{10.0 * s, 10.0 * s - 1, 10.0 * s + 1},
                             BandPoint{10.0 * s + 5, 10.0 * s + 4, 10.0 * s + 6}}});
  const std::string svg = to_svg(chart);
  const std::regex line_colour("<polyline [^>]*stroke=\"(#[0-9a-f]{6})\"");
  std::set<std::string> lines;
  size_t polylines = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line_colour);
       it != std::sregex_iterator(); ++it, ++polylines)
    lines.insert((*it)[1]);
  EXPECT_EQ(polylines, 19u);
  EXPECT_EQ(lines.size(), 19u);
  // The legend's sample lines: the same colours, with the series' dash patterns.
  const std::regex legend("<line [^>]*stroke=\"(#[0-9a-f]{6})\" stroke-width=\"2\"");
  std::set<std::string> legend_colours;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), legend); it != std::sregex_iterator();
       ++it)
    legend_colours.insert((*it)[1]);
  EXPECT_EQ(legend_colours, lines);
  EXPECT_NE(svg.find("stroke-dasharray=\"7,3\""), std::string::npos);
  EXPECT_NE(svg.find(">method 18</text>"), std::string::npos);
  // The legend fits: 19 entries of 20 px below the frame's top (50 px) need 460 px.
  EXPECT_NE(svg.find("height=\"460.0\""), std::string::npos) << svg.substr(0, 200);
}

// A staircase (a best so far) holds each value until the next point: a corner at the next x and
// the previous y; markers-only series draw no line.
TEST(SvgFigure, StepsHoldTheValueAndMarkersAloneDrawNoLine) {
  LineChart chart;
  chart.title = "t";
  chart.x_ticks = {"1", "2", "3"};
  LineChart::Series best{"best",
                         {BandPoint{10, 10, 10}, BandPoint{20, 20, 20}, BandPoint{20, 20, 20}}};
  best.steps = true;
  LineChart::Series dev{"dev", {BandPoint{10, 10, 10}, BandPoint{20, 20, 20}, BandPoint{5, 5, 5}}};
  dev.line = false;
  chart.series = {best, dev};
  const std::string svg = to_svg(chart);
  const std::smatch m = [&] {
    std::smatch found;
    std::regex_search(svg, found, std::regex("<polyline points=\"([^\"]*)\""));
    return found;
  }();
  ASSERT_FALSE(m.empty()) << svg;
  std::vector<std::pair<std::string, std::string>> points;
  const std::string text = m[1];
  const std::regex pair("([0-9.]+),([0-9.]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pair); it != std::sregex_iterator();
       ++it)
    points.push_back({(*it)[1], (*it)[2]});
  ASSERT_EQ(points.size(), 5u);                   // 3 points and 2 corners
  EXPECT_EQ(points[1].first, points[2].first);    // the corner: at the second point's x
  EXPECT_EQ(points[1].second, points[0].second);  // with the first point's y
  EXPECT_NE(points[2].second, points[0].second);
  EXPECT_EQ(svg.find("<polyline", svg.find("<polyline") + 1), std::string::npos);  // dev: markers
  EXPECT_EQ(svg.find("fill-opacity"), std::string::npos);  // exact values: no band
}

}  // namespace
}  // namespace kvs::experiment
