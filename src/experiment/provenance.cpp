#include "experiment/provenance.h"

#include <map>

#include "core/build_info.h"
#include "core/strfmt.h"
#include "experiment/table_comparisons.h"

namespace kvs::experiment {

std::optional<std::string> provenance_note(const TableSpec& table, const ExperimentSpec& spec,
                                           const ExperimentResults& results) {
  std::map<std::string, size_t> cells;  // binary -> results of the table it computed
  for (const int64_t budget : table_budgets(table, spec))
    for (const std::string& dataset : table.datasets)
      for (const std::string& method : table.methods)
        if (const auto r = results.get(dataset, method, budget))
          for (const std::string& b : r->binaries) ++cells[b];
  bool dirty = false;
  std::vector<std::string> named;
  for (const auto& [binary, n] : cells) {
    dirty = dirty || build_info::is_dirty(binary);
    named.push_back(strfmt("%s (%zu result%s%s)", binary.c_str(), n, n == 1 ? "" : "s",
                           build_info::is_dirty(binary) ? ", a dirty tree" : ""));
  }
  if (cells.size() < 2 && !dirty) return std::nullopt;
  return strfmt("Provenance: the results of this table were computed by %zu kvsearch binar%s: ",
                cells.size(), cells.size() == 1 ? "y" : "ies") +
         join(named, ", ") +
         (dirty ? ". A dirty tree's binary had uncommitted changes (its diff's hash, where "
                  "recorded, follows \"-dirty\"): no commit rebuilds it."
                : ".") +
         (cells.size() > 1 ? " A result counts under every binary that computed one of its splits."
                           : "");
}

}  // namespace kvs::experiment
