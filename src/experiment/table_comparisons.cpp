#include "experiment/table_comparisons.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "core/strfmt.h"
#include "experiment/comparison.h"

namespace kvs::experiment {

namespace {

constexpr size_t kDifferenceColumn = 7;  // "A - B", with its interval

// The comparisons between two methods, then those against the full cache.
std::vector<const TableComparison*> methods_first(const std::vector<TableComparison>& comparisons) {
  std::vector<const TableComparison*> out;
  for (const bool full : {false, true})
    for (const TableComparison& c : comparisons)
      if (c.full_cache.empty() != full) out.push_back(&c);
  return out;
}

Table comparison_rows(const std::vector<const TableComparison*>& comparisons) {
  Table t;
  t.header = {"Dataset", "Budget",        "A",     "B", "n", "A mean", "B mean", "A - B",
              "W/L/T",   "p (sign test)", "p Holm"};
  for (const TableComparison* c : comparisons) {
    const PairedComparison& p = c->paired;
    std::vector<std::string> cells = {
        c->dataset,
        budget_text(c->budget),
        c->a,
        c->b,
        std::to_string(p.difference.n),
        strfmt("%.2f", p.mean_a),
        strfmt("%.2f", p.mean_b),
        signed_points(p.difference.value),
        strfmt("%lld/%lld/%lld", static_cast<long long>(p.wins), static_cast<long long>(p.losses),
               static_cast<long long>(p.ties)),
        p_text(p.p),
        p_text(c->p_holm)};
    std::vector<bool> bold(cells.size(), false);
    bold.back() = c->survives;
    std::vector<std::optional<CellInterval>> intervals(cells.size());
    intervals[kDifferenceColumn] =
        CellInterval{signed_points(p.difference.low), signed_points(p.difference.high)};
    add_row(t, std::move(cells), std::move(bold), std::move(intervals));
  }
  return t;
}

std::string method_note(const Bootstrap& bootstrap, size_t family) {
  return strfmt(
      "Paired on the test questions both methods answered (points, 0-100); A - B: mean "
      "per-question difference, in brackets its 95%% percentile bootstrap interval (%lld "
      "resamples of the questions, seed %llu); W/L/T: questions A wins, loses, ties; p: exact "
      "two-sided sign test; p Holm: Holm's correction over the table's %zu comparison%s (bold: "
      "<= %.2f).",
      static_cast<long long>(bootstrap.resamples), static_cast<unsigned long long>(bootstrap.seed),
      family, family == 1 ? "" : "s", kAlpha);
}

}  // namespace

std::vector<int64_t> table_budgets(const TableSpec& table, const ExperimentSpec& spec) {
  return table.kind == "budgets" ? spec.budgets : std::vector<int64_t>{table.budget};
}

std::vector<TableComparison> compare_table_methods(const TableSpec& table,
                                                   const ExperimentSpec& spec,
                                                   const ExperimentScores& scores,
                                                   const Bootstrap& bootstrap) {
  std::vector<TableComparison> out;
  for (const int64_t budget : table_budgets(table, spec))
    for (const std::string& dataset : table.datasets)
      for (size_t i = 0; i < table.methods.size(); ++i)
        for (size_t j = i + 1; j < table.methods.size(); ++j) {
          const std::string &a = table.methods[i], &b = table.methods[j];
          const QuestionScores* sa = scores.get(dataset, a, budget);
          const QuestionScores* sb = scores.get(dataset, b, budget);
          if (!sa || !sb) continue;
          const PairedDataset d = pair_questions(dataset, *sa, *sb, scores.db_path(),
                                                 scores.run_key_of(dataset, a, budget),
                                                 scores.run_key_of(dataset, b, budget));
          if (d.a.empty()) continue;
          TableComparison c;
          c.dataset = dataset;
          c.budget = budget;
          c.a = a;
          c.b = b;
          c.paired = compare_paired(d.a, d.b, bootstrap);
          c.full_cache = spec.method(a).full_cache() ? a : spec.method(b).full_cache() ? b : "";
          out.push_back(std::move(c));
        }
  if (out.empty()) return out;
  std::vector<double> p;
  for (const TableComparison& c : out) p.push_back(c.paired.p);
  const HolmResult h = holm(p, kAlpha);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].p_holm = h.adjusted[i];
    out[i].survives = h.rejected[i];
  }
  return out;
}

Table comparisons_table(const TableSpec& table, const std::vector<TableComparison>& comparisons,
                        const Bootstrap& bootstrap) {
  Table t = comparison_rows(methods_first(comparisons));
  t.name = table.name + "_paired";
  t.title = "Paired comparisons of " + table.name + "'s methods";
  if (comparisons.empty()) {
    t.header.clear();
    t.notes.push_back(
        "No paired comparison: no two of the table's methods have per-question test scores on "
        "common questions.");
    return t;
  }
  t.notes.push_back(method_note(bootstrap, comparisons.size()));
  return t;
}

Table surviving_table(const TableSpec& table, const std::vector<TableComparison>& comparisons,
                      const Bootstrap& bootstrap) {
  std::vector<const TableComparison*> surviving;
  size_t between_methods = 0;
  for (const TableComparison& c : comparisons) {
    if (!c.full_cache.empty()) continue;
    ++between_methods;
    if (c.survives) surviving.push_back(&c);
  }
  Table t = comparison_rows(surviving);
  t.name = table.name + "_significant";
  t.title = "Differences between " + table.name + "'s methods that survive Holm's correction";
  const std::string elsewhere =
      strfmt("all of them: %s_paired.md%s", table.name.c_str(),
             between_methods < comparisons.size()
                 ? strfmt("; against the full cache: %s_full_cache.md", table.name.c_str()).c_str()
                 : "");
  if (t.rows.empty()) {
    t.header.clear();
    t.notes.push_back(
        between_methods == 0
            ? std::string("No paired comparison between two methods: no two of the table's "
                          "methods other than the full cache have per-question test scores on "
                          "common questions.")
            : strfmt("None of the table's %zu paired comparison%s between two methods survives "
                     "Holm's correction at alpha %.2f (%s).",
                     between_methods, between_methods == 1 ? "" : "s", kAlpha, elsewhere.c_str()));
    return t;
  }
  t.notes.push_back(strfmt("%zu of the table's %zu paired comparisons between two methods survive "
                           "(%s). ",
                           t.rows.size(), between_methods, elsewhere.c_str()) +
                    method_note(bootstrap, comparisons.size()));
  return t;
}

std::optional<Table> full_cache_table(const TableSpec& table,
                                      const std::vector<TableComparison>& comparisons) {
  Table t;
  t.name = table.name + "_full_cache";
  t.title = "Methods of " + table.name + " against the full cache (short)";
  t.header = {"Budget",  "Dataset",  "Full cache",
              "Methods", "Below it", "Not significant after Holm (method - full cache)",
              "Above it"};
  // Rows by budget and dataset, in the comparisons' order.
  std::vector<std::tuple<int64_t, std::string, std::string>> keys;
  std::map<std::tuple<int64_t, std::string, std::string>, std::array<std::vector<std::string>, 3>>
      sides;  // below, not different, above
  std::map<std::tuple<int64_t, std::string, std::string>, double> full_mean;
  for (const TableComparison& c : comparisons) {
    if (c.full_cache.empty()) continue;
    const auto key = std::make_tuple(c.budget, c.dataset, c.full_cache);
    if (!sides.count(key)) keys.push_back(key);
    const bool full_is_a = c.a == c.full_cache;
    const PairedComparison& p = c.paired;
    full_mean[key] = full_is_a ? p.mean_a : p.mean_b;
    const std::string& method = full_is_a ? c.b : c.a;
    const double sign = full_is_a ? -1 : 1;  // method - full cache
    const double diff = sign * p.difference.value;
    const double low = std::min(sign * p.difference.low, sign * p.difference.high);
    const double high = std::max(sign * p.difference.low, sign * p.difference.high);
    auto& [below, level, above] = sides[key];
    if (!c.survives)
      level.push_back(strfmt("%s %s [%s, %s]", method.c_str(), signed_points(diff).c_str(),
                             signed_points(low).c_str(), signed_points(high).c_str()));
    else
      (diff < 0 ? below : above).push_back(method);
  }
  if (keys.empty()) return std::nullopt;
  for (const auto& key : keys) {
    const auto& [budget, dataset, full_name] = key;
    const auto& [below, level, above] = sides.at(key);
    const size_t n = below.size() + level.size() + above.size();
    add_row(t, {budget_text(budget), dataset, strfmt("%.2f", full_mean.at(key)), std::to_string(n),
                strfmt("%zu of %zu", below.size(), n), level.empty() ? "-" : join(level, "; "),
                above.empty() ? "-" : join(above, ", ")});
  }
  t.notes.push_back(strfmt(
      "Below it / above it: a method whose paired difference with the full cache survives Holm's "
      "correction at alpha %.2f (over all the table's comparisons, %s_paired.md); not significant: "
      "the others, with the mean per-question difference and its 95%% bootstrap interval "
      "(points).",
      kAlpha, table.name.c_str()));
  return t;
}

}  // namespace kvs::experiment
