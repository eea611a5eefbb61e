// The report's line charts tell their series apart: each of the first 21 series has its own
// colour, each of the first 28 its own marker and dash pattern, and the drawn SVG of a 19-series
// chart (the leaderboard's count) uses 19 colours, in its lines and in its legend.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <utility>

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

}  // namespace
}  // namespace kvs::experiment
