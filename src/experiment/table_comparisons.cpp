#include "experiment/table_comparisons.h"

#include "core/strfmt.h"
#include "experiment/comparison.h"

namespace kvs::experiment {

namespace {

// -0.00 would read as a loss: a zero prints as +0.00.
std::string signed_points(double x) { return strfmt("%+.2f", x == 0 ? 0.0 : x); }

std::string budget_text(int64_t budget) {
  return budget == kFullCacheBudget ? "full" : std::to_string(budget);
}

constexpr size_t kDifferenceColumn = 7;  // "A - B", with its interval

Table comparison_rows(const std::vector<TableComparison>& comparisons, bool surviving_only) {
  Table t;
  t.header = {"Dataset", "Budget",        "A",     "B", "n", "A mean", "B mean", "A - B",
              "W/L/T",   "p (sign test)", "p Holm"};
  for (const TableComparison& c : comparisons) {
    if (surviving_only && !c.survives) continue;
    const PairedComparison& p = c.paired;
    std::vector<std::string> cells = {
        c.dataset,
        budget_text(c.budget),
        c.a,
        c.b,
        std::to_string(p.difference.n),
        strfmt("%.2f", p.mean_a),
        strfmt("%.2f", p.mean_b),
        signed_points(p.difference.value),
        strfmt("%lld/%lld/%lld", static_cast<long long>(p.wins), static_cast<long long>(p.losses),
               static_cast<long long>(p.ties)),
        p_text(p.p),
        p_text(c.p_holm)};
    std::vector<bool> bold(cells.size(), false);
    bold.back() = c.survives;
    std::vector<std::optional<CellInterval>> intervals(cells.size());
    intervals[kDifferenceColumn] =
        CellInterval{signed_points(p.difference.low), signed_points(p.difference.high)};
    t.rows.push_back(std::move(cells));
    t.bold.push_back(std::move(bold));
    t.intervals.push_back(std::move(intervals));
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
          out.push_back({dataset, budget, a, b, compare_paired(d.a, d.b, bootstrap)});
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
  Table t = comparison_rows(comparisons, false);
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
  Table t = comparison_rows(comparisons, true);
  t.name = table.name + "_significant";
  t.title = "Differences in " + table.name + " that survive Holm's correction";
  if (t.rows.empty()) {
    t.header.clear();
    t.notes.push_back(
        comparisons.empty()
            ? std::string("No paired comparison: no two of the table's methods have per-question "
                          "test scores on common questions.")
            : strfmt("None of the table's %zu paired comparison%s survives Holm's correction at "
                     "alpha %.2f (all of them: %s_paired.md).",
                     comparisons.size(), comparisons.size() == 1 ? "" : "s", kAlpha,
                     table.name.c_str()));
    return t;
  }
  t.notes.push_back(
      strfmt("%zu of the table's %zu paired comparisons survive (all of them: %s_paired.md). ",
             t.rows.size(), comparisons.size(), table.name.c_str()) +
      method_note(bootstrap, comparisons.size()));
  return t;
}

}  // namespace kvs::experiment
