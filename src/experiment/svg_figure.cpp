#include "experiment/svg_figure.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "core/error.h"
#include "core/strfmt.h"

namespace kvs::experiment {

namespace {

// Kelly's colours of maximum contrast (white left out), black last: every series of a chart up to
// 21 gets its own colour.
const char* const kPalette[] = {"#0067a5", "#f38400", "#008856", "#be0032", "#875692", "#882d17",
                                "#e68fac", "#848482", "#8db600", "#a1caf1", "#f3c300", "#604e97",
                                "#f99379", "#2b3d26", "#b3446c", "#c2b280", "#e25822", "#dcd300",
                                "#654522", "#f6a600", "#222222"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
const char* const kDashes[] = {"", "7,3", "2,2", "9,3,2,3"};
constexpr size_t kDashCount = sizeof(kDashes) / sizeof(kDashes[0]);
constexpr size_t kMostTickLabels = 16;

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double x) { return strfmt("%.1f", x == 0 ? 0.0 : x); }

std::string header(double width, double height, const std::string& title) {
  return strfmt(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%s\" height=\"%s\" "
             "viewBox=\"0 0 %s %s\" font-family=\"sans-serif\" font-size=\"12\">\n",
             num(width).c_str(), num(height).c_str(), num(width).c_str(), num(height).c_str()) +
         "<title>" + escape(title) + "</title>\n" +
         strfmt("<rect width=\"%s\" height=\"%s\" fill=\"white\"/>\n", num(width).c_str(),
                num(height).c_str()) +
         strfmt("<text x=\"%s\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">",
                num(width / 2).c_str()) +
         escape(title) + "</text>\n";
}

std::string text(double x, double y, const std::string& s, const std::string& anchor,
                 const std::string& extra = "") {
  return strfmt("<text x=\"%s\" y=\"%s\" text-anchor=\"%s\"%s>", num(x).c_str(), num(y).c_str(),
                anchor.c_str(), extra.c_str()) +
         escape(s) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& stroke) {
  return strfmt("<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\"/>\n", num(x1).c_str(),
                num(y1).c_str(), num(x2).c_str(), num(y2).c_str(), stroke.c_str());
}

// About how wide a title is (15 px sans-serif) with its margins.
double title_width(const std::string& title) {
  return 40 + 8.5 * static_cast<double>(title.size());
}

// A step of 1, 2 or 5 times a power of ten giving at most about `count` intervals over `span`.
double nice_step(double span, int count) {
  const double raw = span / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

// The plot area of a chart inside its margins.
struct Frame {
  double left, top, width, height;
};

// Where values in [lo, hi] go vertically in `frame`.
struct YScale {
  double lo, hi;
  Frame frame;
  double operator()(double v) const {
    return frame.top + frame.height * (1 - (v - lo) / (hi - lo));
  }
};

YScale y_scale(const LineChart& chart, const Frame& frame, double& step) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : chart.series)
    for (const auto& p : s.points)
      if (p) {
        lo = std::min({lo, p->low, p->value});
        hi = std::max({hi, p->high, p->value});
      }
  if (!std::isfinite(lo)) lo = 0, hi = 100;  // no point: an empty frame in points
  if (hi - lo < 1e-9) lo -= 1, hi += 1;
  step = nice_step(hi - lo, 5);
  return {std::floor(lo / step) * step, std::ceil(hi / step) * step, frame};
}

// A marker of `kind` (SeriesStyle::marker) centred on (x, y).
std::string marker(int kind, double x, double y, const char* colour) {
  const double r = 3.5;
  const auto polygon = [&](std::initializer_list<std::pair<double, double>> corners) {
    std::string points;
    for (const auto& [dx, dy] : corners)
      points += (points.empty() ? "" : " ") + num(x + dx * r) + "," + num(y + dy * r);
    return strfmt("<polygon points=\"%s\" fill=\"%s\"/>\n", points.c_str(), colour);
  };
  switch (kind) {
    case 1:  // square
      return strfmt("<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"/>\n",
                    num(x - r).c_str(), num(y - r).c_str(), num(2 * r).c_str(), num(2 * r).c_str(),
                    colour);
    case 2:  // triangle up
      return polygon({{0, -1.2}, {1.1, 0.8}, {-1.1, 0.8}});
    case 3:  // diamond
      return polygon({{0, -1.3}, {1.1, 0}, {0, 1.3}, {-1.1, 0}});
    case 4:  // triangle down
      return polygon({{0, 1.2}, {1.1, -0.8}, {-1.1, -0.8}});
    case 5:  // hollow circle
      return strfmt(
          "<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"white\" stroke=\"%s\" "
          "stroke-width=\"1.5\"/>\n",
          num(x).c_str(), num(y).c_str(), num(r).c_str(), colour);
    case 6:  // hollow square
      return strfmt(
          "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"white\" "
          "stroke=\"%s\" stroke-width=\"1.5\"/>\n",
          num(x - r).c_str(), num(y - r).c_str(), num(2 * r).c_str(), num(2 * r).c_str(), colour);
    default:  // filled circle
      return strfmt("<circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\"/>\n", num(x).c_str(),
                    num(y).c_str(), num(r).c_str(), colour);
  }
}

// stroke-dasharray of a dash pattern, "" for a solid line.
std::string dash_attribute(const char* dash) {
  return *dash ? strfmt(" stroke-dasharray=\"%s\"", dash) : std::string();
}

// One run of consecutive points: the band as a polygon (one point: an error bar), the line and
// its markers (`line` false: the markers alone; `steps`: a staircase). `band_opacity` thins the
// bands of a crowded chart.
std::string draw_run(const std::vector<std::pair<double, BandPoint>>& run, const SeriesStyle& style,
                     const YScale& y, double band_opacity, bool line, bool steps) {
  const char* colour = style.colour;
  std::string band, path;
  for (const auto& [x, p] : run) band += num(x) + "," + num(y(p.high)) + " ";
  for (auto it = run.rbegin(); it != run.rend(); ++it)
    band += num(it->first) + "," + num(y(it->second.low)) + " ";
  for (size_t i = 0; i < run.size(); ++i) {
    const auto& [x, p] = run[i];
    if (steps && i > 0) path += " " + num(x) + "," + num(y(run[i - 1].second.value));
    path += (path.empty() ? "" : " ") + num(x) + "," + num(y(p.value));
  }
  band.pop_back();
  std::string out;
  const bool has_band = std::any_of(run.begin(), run.end(),
                                    [](const auto& xp) { return xp.second.high > xp.second.low; });
  if (has_band && run.size() == 1)  // a band needs two points: an error bar
    out = strfmt(
        "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" "
        "stroke-opacity=\"0.5\" stroke-width=\"6\"/>\n",
        num(run[0].first).c_str(), num(y(run[0].second.high)).c_str(), num(run[0].first).c_str(),
        num(y(run[0].second.low)).c_str(), colour);
  else if (has_band)  // exact values (low = high) get none
    out = strfmt("<polygon points=\"%s\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"none\"/>\n",
                 band.c_str(), colour, strfmt("%.2f", band_opacity).c_str());
  if (line && run.size() > 1)
    out += strfmt("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                  path.c_str(), colour, dash_attribute(style.dash).c_str());
  for (const auto& [x, p] : run) out += marker(style.marker, x, y(p.value), colour);
  return out;
}

// Light to dark blue for t in [0, 1].
std::string shade(double t) {
  const double light[3] = {247, 251, 255}, dark[3] = {8, 48, 107};
  int c[3];
  for (int i = 0; i < 3; ++i)
    c[i] = static_cast<int>(std::lround(light[i] + t * (dark[i] - light[i])));
  return strfmt("#%02x%02x%02x", c[0], c[1], c[2]);
}

}  // namespace

SeriesStyle series_style(size_t index) {
  return {kPalette[index % kPaletteSize], static_cast<int>(index % kMarkerKinds),
          kDashes[index % kDashCount]};
}

std::string to_svg(const LineChart& chart) {
  for (const auto& s : chart.series)
    if (s.points.size() != chart.x_ticks.size())
      throw Error("line chart '" + chart.title + "': series '" + s.name + "' has " +
                  std::to_string(s.points.size()) + " points for " +
                  std::to_string(chart.x_ticks.size()) + " x ticks");
  size_t legend_chars = 0;
  for (const auto& s : chart.series) legend_chars = std::max(legend_chars, s.name.size());
  const double legend_width = 50 + 7.0 * static_cast<double>(legend_chars);  // sample and name
  const Frame frame{70, 50, 480, 300};
  const double width =
      std::max(frame.left + frame.width + 20 + legend_width, title_width(chart.title));
  const double legend_bottom = frame.top + 20 * static_cast<double>(chart.series.size()) + 10;
  const double height = std::max(420.0, legend_bottom + 20);
  // Bands of many series on one frame hide each other: thinner the more there are.
  const double band_opacity = chart.series.size() > 6 ? 0.07 : 0.2;
  double step = 1;
  const YScale y = y_scale(chart, frame, step);
  const size_t n = chart.x_ticks.size();
  const auto x_of = [&](size_t i) {
    return n == 1 ? frame.left + frame.width / 2
                  : frame.left + 30 +
                        (frame.width - 60) * static_cast<double>(i) / static_cast<double>(n - 1);
  };

  std::string out = header(width, height, chart.title);
  for (double v = y.lo; v <= y.hi + step / 2; v += step) {  // grid and y ticks
    out += line(frame.left, y(v), frame.left + frame.width, y(v), "#e0e0e0");
    out += text(frame.left - 6, y(v) + 4, strfmt("%g", std::round(v / step) * step), "end");
  }
  const size_t label_every = (n + kMostTickLabels - 1) / kMostTickLabels;
  for (size_t i = 0; i < n; i += std::max<size_t>(label_every, 1))
    out += text(x_of(i), frame.top + frame.height + 18, chart.x_ticks[i], "middle");
  out += strfmt(
      "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" "
      "stroke=\"#333333\"/>\n",
      num(frame.left).c_str(), num(frame.top).c_str(), num(frame.width).c_str(),
      num(frame.height).c_str());
  out += text(frame.left + frame.width / 2, frame.top + frame.height + 42, chart.x_label, "middle");
  const double mid = frame.top + frame.height / 2;
  out += text(18, mid, chart.y_label, "middle",
              strfmt(" transform=\"rotate(-90 18 %s)\"", num(mid).c_str()));

  for (size_t s = 0; s < chart.series.size(); ++s) {
    const SeriesStyle style = series_style(s);
    out += "<g>\n<title>" + escape(chart.series[s].name) + "</title>\n";
    std::vector<std::pair<double, BandPoint>> run;
    for (size_t i = 0; i <= n; ++i) {
      if (i < n && chart.series[s].points[i]) {
        run.emplace_back(x_of(i), *chart.series[s].points[i]);
        continue;
      }
      if (!run.empty())
        out += draw_run(run, style, y, band_opacity, chart.series[s].line, chart.series[s].steps);
      run.clear();
    }
    out += "</g>\n";
    const double ly = frame.top + 10 + 20 * static_cast<double>(s);  // legend
    const double lx = frame.left + frame.width + 20;
    if (chart.series[s].line)
      out += strfmt(
          "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
          num(lx).c_str(), num(ly - 4).c_str(), num(lx + 28).c_str(), num(ly - 4).c_str(),
          style.colour, dash_attribute(style.dash).c_str());
    out += marker(style.marker, lx + 14, ly - 4, style.colour);
    out += text(lx + 34, ly, chart.series[s].name, "start");
  }
  return out + "</svg>\n";
}

std::string to_svg(const HeatMap& map) {
  if (map.values.size() != map.rows.size())
    throw Error("heat map '" + map.title + "': " + std::to_string(map.values.size()) +
                " rows of values for " + std::to_string(map.rows.size()) + " row labels");
  double lo = INFINITY, hi = -INFINITY;
  for (size_t r = 0; r < map.values.size(); ++r) {
    if (map.values[r].size() != map.columns.size())
      throw Error("heat map '" + map.title + "': row '" + map.rows[r] + "' has " +
                  std::to_string(map.values[r].size()) + " values for " +
                  std::to_string(map.columns.size()) + " columns");
    for (const auto& v : map.values[r])
      if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
  }
  size_t label_chars = 0;
  for (const auto& r : map.rows) label_chars = std::max(label_chars, r.size());
  const double cell_w = 90, cell_h = 36;
  const double left = 30 + 7.0 * static_cast<double>(label_chars), top = 70;
  const std::string footer = map.y_label + " (rows) x " + map.x_label + " (columns)";
  const double width =
      std::max({left + cell_w * static_cast<double>(map.columns.size()) + 30,
                title_width(map.title), left + 7.0 * static_cast<double>(footer.size())});
  const double height = top + cell_h * static_cast<double>(map.rows.size()) + 70;

  std::string out = header(width, height, map.title);
  out += text(left + cell_w * static_cast<double>(map.columns.size()) / 2, top - 30, map.x_label,
              "middle");
  for (size_t c = 0; c < map.columns.size(); ++c)
    out += text(left + cell_w * (static_cast<double>(c) + 0.5), top - 8, map.columns[c], "middle");
  for (size_t r = 0; r < map.rows.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    out += text(left - 8, y + cell_h / 2 + 4, map.rows[r], "end");
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const double x = left + cell_w * static_cast<double>(c);
      const auto& v = map.values[r][c];
      const double t = !v ? 0 : hi - lo < 1e-9 ? 0.5 : (*v - lo) / (hi - lo);
      out += strfmt(
          "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\" "
          "stroke=\"white\"><title>%s</title></rect>\n",
          num(x).c_str(), num(y).c_str(), num(cell_w).c_str(), num(cell_h).c_str(),
          v ? shade(t).c_str() : "#eeeeee",
          escape(map.rows[r] + ", " + map.columns[c] + ": " +
                 (v ? strfmt("%.2f", *v) : std::string("-")))
              .c_str());
      out += text(x + cell_w / 2, y + cell_h / 2 + 4, v ? strfmt("%.2f", *v) : "-", "middle",
                  t > 0.5 ? " fill=\"white\"" : "");
    }
  }
  const double bottom = top + cell_h * static_cast<double>(map.rows.size());
  out += text(left, bottom + 24, footer, "start");
  if (std::isfinite(lo))
    out += text(left, bottom + 44, strfmt("colour: %.2f (lightest) to %.2f (darkest)", lo, hi),
                "start");
  return out + "</svg>\n";
}

std::string to_svg(const std::vector<LineChart>& panels, const std::string& title) {
  std::string body;
  double x = 0, height = 0;
  for (const LineChart& panel : panels) {
    const std::string svg = to_svg(panel);
    // The panel's own size, from the width="..." height="..." of its opening tag.
    const auto attribute = [&](const std::string& name) {
      const size_t at = svg.find(name + "=\"") + name.size() + 2;
      return std::stod(svg.substr(at, svg.find('"', at) - at));
    };
    body += "<g transform=\"translate(" + num(x) + ",40)\">\n" + svg + "</g>\n";
    x += attribute("width");
    height = std::max(height, attribute("height"));
  }
  return header(std::max(x, title_width(title)), height + 40, title) + body + "</svg>\n";
}

}  // namespace kvs::experiment
