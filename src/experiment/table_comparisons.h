// The paired comparisons behind a report table: every pair of its methods on each of its datasets
// at each of its budgets, on the test questions both answered (difference with its 95% bootstrap
// interval, wins / losses / ties, exact sign test), with Holm's correction over the table's
// comparisons; as a table of them all (method-vs-method first), a table of the differences between
// methods that survive, and a short table of each method against the full cache. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_scores.h"
#include "experiment/paired_stats.h"
#include "experiment/spec.h"
#include "experiment/tables.h"

namespace kvs::experiment {

struct TableComparison {
  std::string dataset;
  int64_t budget = 0;
  std::string a, b;  // a comes before b in the table's methods
  PairedComparison paired;
  double p_holm = 1;      // adjusted over the table's comparisons
  bool survives = false;  // p_holm <= kAlpha (comparison.h)
  std::string full_cache;  // a or b when it is a full-cache method; "" between two methods
};

// The budgets a table's methods are compared at: every budget of the spec for a budgets table,
// the table's own budget otherwise.
std::vector<int64_t> table_budgets(const TableSpec& table, const ExperimentSpec& spec);

// By budget, dataset (the table's order) and pair (method order). A pair without common scored
// questions is left out; no comparison at all gives an empty list.
std::vector<TableComparison> compare_table_methods(const TableSpec& table,
                                                   const ExperimentSpec& spec,
                                                   const ExperimentScores& scores,
                                                   const Bootstrap& bootstrap);

// Every comparison: dataset, budget, A, B, questions, means, A - B [95% CI], W/L/T, p, p Holm;
// the comparisons between two methods first, those against the full cache after them.
// Named <table>_paired.
Table comparisons_table(const TableSpec& table, const std::vector<TableComparison>& comparisons,
                        const Bootstrap& bootstrap);

// The comparisons between two methods (neither the full cache) that survive Holm's correction, in
// the same columns; none: a table without columns whose note says so. Named <table>_significant.
Table surviving_table(const TableSpec& table, const std::vector<TableComparison>& comparisons,
                      const Bootstrap& bootstrap);

// The comparisons against the full cache, a row per budget and dataset: the full cache's mean,
// how many methods are below it after Holm's correction, and those that are not (with their
// difference). Named <table>_full_cache; nullopt when the table has no full-cache comparison.
std::optional<Table> full_cache_table(const TableSpec& table,
                                      const std::vector<TableComparison>& comparisons);

}  // namespace kvs::experiment
