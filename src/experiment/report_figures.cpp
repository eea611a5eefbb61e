#include "experiment/report_figures.h"

#include "core/strfmt.h"
#include "experiment/svg_figure.h"

namespace kvs::experiment {

std::vector<SvgFigure> table_figures(const TableSpec& table, const ExperimentSpec& spec,
                                     const CellEstimates& estimates) {
  LineChart chart;
  HeatMap map;
  const std::string over = strfmt("macro average over %zu dataset%s", table.datasets.size(),
                                  table.datasets.size() == 1 ? "" : "s");
  chart.title = table.name + ": test score against budget (" + over + ", 95% CI)";
  chart.x_label = "budget B";
  chart.y_label = "test score (points)";
  map.title = table.name + ": " + over + " by method and budget";
  map.x_label = "budget";
  map.y_label = "method";
  for (const int64_t b : spec.budgets) {
    chart.x_ticks.push_back(std::to_string(b));
    map.columns.push_back(std::to_string(b));
  }
  bool any = false;
  for (const std::string& m : table.methods) {
    LineChart::Series series{m, {}};
    std::vector<std::optional<double>> row;
    for (const int64_t b : spec.budgets) {
      const auto e = estimates.macro(table.datasets, m, b);
      any = any || e;
      series.points.push_back(e ? std::optional<BandPoint>({e->value, e->low, e->high})
                                : std::nullopt);
      row.push_back(e ? std::optional<double>(e->value) : std::nullopt);
    }
    chart.series.push_back(std::move(series));
    map.rows.push_back(m);
    map.values.push_back(std::move(row));
  }
  if (!any) return {};
  return {{table.name + "_budgets", chart.title, to_svg(chart)},
          {table.name + "_heatmap", map.title, to_svg(map)}};
}

}  // namespace kvs::experiment
