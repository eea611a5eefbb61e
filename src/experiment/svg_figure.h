// Self-contained SVG figures drawn from C++ (no plotting library at run time): a line chart with
// a shaded band per series (an estimate and its interval) and a heat map with its values written
// in the cells. The text depends only on the input (fixed number formatting), so a figure is
// byte-identical across runs. Torch-free.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kvs::experiment {

// A point of a series: its value and the band around it.
struct BandPoint {
  double value = 0, low = 0, high = 0;
};

// Series over categories equally spaced along x (e.g. budgets); a missing point breaks the line.
// With many categories (layers) every k-th is labelled, k chosen for at most 16 labels.
struct LineChart {
  std::string title, x_label, y_label;
  std::vector<std::string> x_ticks;
  struct Series {
    std::string name;
    std::vector<std::optional<BandPoint>> points;  // one per x tick; low = high: no band
    bool line = true;    // false: markers only (e.g. one score per evaluation)
    bool steps = false;  // the line holds each value until the next point (a best so far)
  };
  std::vector<Series> series;
};

// A grid of values, darker for larger ones; a missing value is a grey cell marked "-".
struct HeatMap {
  std::string title, x_label, y_label;
  std::vector<std::string> columns, rows;
  std::vector<std::vector<std::optional<double>>> values;  // [row][column]
};

// How a line chart draws its index-th series: a colour of its own for the first 21 series, a
// marker (of kMarkerKinds) and a dash pattern (of 4) whose pair is its own for the first 28.
struct SeriesStyle {
  const char* colour;  // "#rrggbb"
  int marker;          // 0 circle, 1 square, 2 triangle up, 3 diamond, 4 triangle down, 5 and 6
                       // hollow circle and square
  const char* dash;    // stroke-dasharray; "" for a solid line
};
constexpr size_t kMarkerKinds = 7;
SeriesStyle series_style(size_t index);

// Every series in its series_style(): its own colour, marker and dash pattern, in the legend too.
std::string to_svg(const LineChart& chart);
std::string to_svg(const HeatMap& map);

// Charts side by side in one figure under one title (e.g. lambda1 and lambda2 per layer), each
// drawn as to_svg(const LineChart&) draws it.
std::string to_svg(const std::vector<LineChart>& panels, const std::string& title);

}  // namespace kvs::experiment
