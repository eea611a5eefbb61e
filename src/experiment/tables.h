// The report's tables in the paper's format (spec.h, TableSpec), rendered as Markdown (the row's
// best in bold; a budgets table: a row per method, a column per budget, the column's best) and CSV
// (plain numbers, a "best" column instead of bold). Scores are official test scores with two
// decimals, with their 95% bootstrap intervals where the per-question scores are recorded; "-"
// marks a result the database does not have (yet). Torch-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiment/cell_estimates.h"
#include "experiment/results.h"
#include "experiment/spec.h"

namespace kvs::experiment {

// A cell's 95% interval, formatted as its value is ("12.50", "+1.25").
struct CellInterval {
  std::string low, high;
};

struct Table {
  std::string name;
  std::string title;
  std::vector<std::string> header;  // none: the notes only
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> bold;  // per cell, Markdown only
  // Per cell (a row may be shorter): Markdown prints "value [low, high]"; CSV keeps the value and
  // adds "<column> low" and "<column> high" columns after the others for every column with one.
  std::vector<std::vector<std::optional<CellInterval>>> intervals;
  std::vector<std::string> notes;  // lines under the Markdown table
};

// Appends a row; `bold` and `intervals` may be shorter than `cells` (the rest: plain).
void add_row(Table& table, std::vector<std::string> cells, std::vector<bool> bold = {},
             std::vector<std::optional<CellInterval>> intervals = {});

// With `estimates`, a score whose per-question test scores are recorded is their mean with its
// 95% bootstrap interval (CellEstimates::mean; a macro average: CellEstimates::macro over the
// table's datasets); otherwise, and without `estimates`, the recorded official score alone.
Table make_table(const TableSpec& table, const ExperimentSpec& spec,
                 const ExperimentResults& results, const CellEstimates* estimates = nullptr);

// A budgets table's gains over its baseline: a row per method but the baseline, a column per
// budget, the differences of the macro averages (Table 2's gain columns, apart). Named
// <table>_gains.
Table gains_table(const TableSpec& table, const ExperimentSpec& spec,
                  const ExperimentResults& results, const CellEstimates* estimates = nullptr);

// The noise floor of every dataset: dev and test questions, the per-question standard deviation
// (the largest over the dataset's recorded methods) and the standard errors of the split means.
Table noise_table(const ExperimentSpec& spec, const ExperimentResults& results);

std::string to_markdown(const Table& table);
std::string to_csv(const Table& table);

}  // namespace kvs::experiment
