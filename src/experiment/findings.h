// The "findings" the report writes itself from a table's paired comparisons: per budget, the
// largest differences between two methods that survive Holm's correction, winner first and each
// winner once (with every method it beats by the very same numbers), each with its 95% interval,
// W/L/T and adjusted p; and how many of the methods the full cache is above.
// Nothing but what the paired tables hold, so it changes only when they do. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "experiment/spec.h"
#include "experiment/table_comparisons.h"

namespace kvs::experiment {

// How many winners a budget's line names at most.
constexpr size_t kFindingsPerBudget = 3;

// A Markdown section ("### Findings: <table>") with one bullet per budget of the comparisons;
// "" when the table has no comparison at all.
std::string findings_section(const TableSpec& table,
                             const std::vector<TableComparison>& comparisons,
                             size_t per_budget = kFindingsPerBudget);

}  // namespace kvs::experiment
