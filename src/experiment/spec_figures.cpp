#include "experiment/spec_figures.h"

#include <algorithm>

#include "experiment/svg_figure.h"

namespace kvs::experiment {

namespace {

// A point without an interval: a marker on the line, no band.
BandPoint exact(double v) { return {v, v, v}; }

std::string budgets_figure(const FigureSpec& f, const ExperimentSpec& spec,
                           const ExperimentResults& results, const CellEstimates& estimates) {
  LineChart chart;
  chart.title = f.title;
  chart.x_label = "KV budget per head and layer";
  chart.y_label = "test score (official scorer)";
  for (const int64_t b : spec.budgets) chart.x_ticks.push_back(std::to_string(b));
  for (const std::string& m : f.methods) {
    LineChart::Series series{m, {}};
    for (const int64_t b : spec.budgets) {
      const auto e = estimates.mean(f.dataset, m, b);
      const auto test = results.test(f.dataset, m, b);
      series.points.push_back(e      ? std::optional<BandPoint>({e->value, e->low, e->high})
                              : test ? std::optional<BandPoint>(exact(*test))
                                     : std::nullopt);
    }
    chart.series.push_back(std::move(series));
  }
  return to_svg(chart);
}

std::string trajectory_figure(const FigureSpec& f, const ExperimentResults& results) {
  LineChart chart;
  chart.title = f.title;
  chart.x_label = "evaluation (search order)";
  chart.y_label = "score (dev: raw, test: official)";
  size_t evaluations = 0;
  for (const std::string& m : f.methods) {
    const auto r = results.get(f.dataset, m, f.budget);
    const std::vector<TrajectoryPoint> points = r ? r->trajectory : std::vector<TrajectoryPoint>{};
    evaluations = std::max(evaluations, points.size());
    LineChart::Series best{m + ": dev best so far", {}},
        dev{m + ": dev score of each evaluation", {}},
        test{m + ": test replay of accepted states", {}};
    best.steps = true;
    dev.line = false;
    test.line = false;
    for (const TrajectoryPoint& p : points) {
      best.points.push_back(exact(p.best_so_far));
      dev.points.push_back(exact(p.dev));
      test.points.push_back(p.accepted && p.test ? std::optional<BandPoint>(exact(*p.test))
                                                 : std::nullopt);
    }
    for (auto* s : {&best, &dev, &test}) chart.series.push_back(std::move(*s));
  }
  for (size_t i = 1; i <= evaluations; ++i) chart.x_ticks.push_back(std::to_string(i));
  for (LineChart::Series& s : chart.series) s.points.resize(evaluations);
  return to_svg(chart);
}

std::string profiles_figure(const FigureSpec& f, const ExperimentResults& results) {
  std::vector<LineChart> panels(2);
  panels[0].title = "lambda1 (dispersion)";
  panels[1].title = "lambda2 (correlation)";
  size_t layers = 0;
  for (const std::string& m : f.methods) {
    const auto r = results.get(f.dataset, m, f.budget);
    LineChart::Series l1{m, {}}, l2{m, {}};
    if (r) {
      for (const double v : r->lambda1) l1.points.push_back(exact(v));
      for (const double v : r->lambda2) l2.points.push_back(exact(v));
    }
    layers = std::max({layers, l1.points.size(), l2.points.size()});
    panels[0].series.push_back(std::move(l1));
    panels[1].series.push_back(std::move(l2));
  }
  for (LineChart& p : panels) {
    p.x_label = "layer";
    p.y_label = p.title;
    for (size_t l = 0; l < layers; ++l) p.x_ticks.push_back(std::to_string(l));
    for (LineChart::Series& s : p.series) s.points.resize(layers);
  }
  return to_svg(panels, f.title);
}

}  // namespace

std::vector<SvgFigure> spec_figures(const ExperimentSpec& spec, const ExperimentResults& results,
                                    const CellEstimates& estimates) {
  std::vector<SvgFigure> out;
  for (const FigureSpec& f : spec.figures)
    out.push_back({f.name, f.title,
                   f.kind == "budgets"      ? budgets_figure(f, spec, results, estimates)
                   : f.kind == "trajectory" ? trajectory_figure(f, results)
                                            : profiles_figure(f, results)});
  return out;
}

}  // namespace kvs::experiment
