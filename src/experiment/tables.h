// The report's tables in the paper's format (spec.h, TableSpec), rendered as Markdown (the row's
// best in bold) and CSV (plain numbers, a "best" column instead of bold). Scores are official test
// scores with two decimals; "-" marks a result the database does not have (yet). Torch-free.
#pragma once

#include <string>
#include <vector>

#include "experiment/results.h"
#include "experiment/spec.h"

namespace kvs::experiment {

struct Table {
  std::string name;
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<bool>> bold;  // per cell, Markdown only
  std::vector<std::string> notes;       // lines under the Markdown table
};

Table make_table(const TableSpec& table, const ExperimentSpec& spec, const ExperimentResults& results);

// The noise floor of every dataset: dev and test questions, the per-question standard deviation
// (the largest over the dataset's recorded methods) and the standard errors of the split means.
Table noise_table(const ExperimentSpec& spec, const ExperimentResults& results);

std::string to_markdown(const Table& table);
std::string to_csv(const Table& table);

}  // namespace kvs::experiment
