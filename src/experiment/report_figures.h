// The figures the report draws for each of its tables, as SVG (svg_figure.h): the macro average
// over the table's datasets against budget with its 95% bootstrap interval as a band, one line
// per method, and a method x budget heat map of the same macro average. From the per-question
// scores (CellEstimates), so a table without any gets no figures. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "experiment/cell_estimates.h"
#include "experiment/spec.h"

namespace kvs::experiment {

struct SvgFigure {
  std::string name;   // file stem: <name>.svg
  std::string title;  // what the report's index shows
  std::string svg;
};

// <table>_budgets and <table>_heatmap, at every budget of the spec; none when no method of the
// table has a macro average at any budget.
std::vector<SvgFigure> table_figures(const TableSpec& table, const ExperimentSpec& spec,
                                     const CellEstimates& estimates);

}  // namespace kvs::experiment
