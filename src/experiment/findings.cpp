#include "experiment/findings.h"

#include <algorithm>
#include <cmath>

#include "core/strfmt.h"
#include "experiment/comparison.h"

namespace kvs::experiment {

namespace {

// A surviving difference as the findings name it, the better method first.
struct Finding {
  std::string winner, dataset;
  std::vector<std::string> losers;  // several when their comparisons read the same
  std::string numbers;              // "+d [+lo, +hi] (W/L/T, p Holm p)"
};

Finding oriented(const TableComparison& c) {
  const PairedComparison& p = c.paired;
  const bool a_wins = p.difference.value >= 0;
  const double sign = a_wins ? 1 : -1;
  const double low = std::min(sign * p.difference.low, sign * p.difference.high);
  const double high = std::max(sign * p.difference.low, sign * p.difference.high);
  return {a_wins ? c.a : c.b,
          c.dataset,
          {a_wins ? c.b : c.a},
          strfmt("%s [%s, %s] (%lld/%lld/%lld, p Holm %s)",
                 signed_points(sign * p.difference.value).c_str(), signed_points(low).c_str(),
                 signed_points(high).c_str(), static_cast<long long>(a_wins ? p.wins : p.losses),
                 static_cast<long long>(a_wins ? p.losses : p.wins), static_cast<long long>(p.ties),
                 p_text(c.p_holm).c_str())};
}

// The largest differences, largest first, each winner named once: its largest difference, with
// every method it beats by the very same numbers on that dataset (methods that all score 0, say).
std::vector<Finding> largest(const std::vector<const TableComparison*>& sorted, size_t count) {
  std::vector<Finding> out;
  for (const TableComparison* c : sorted) {
    Finding f = oriented(*c);
    const auto same_winner = std::find_if(out.begin(), out.end(),
                                          [&](const Finding& o) { return o.winner == f.winner; });
    if (same_winner == out.end()) {
      if (out.size() < count) out.push_back(std::move(f));
    } else if (same_winner->dataset == f.dataset && same_winner->numbers == f.numbers)
      same_winner->losers.push_back(f.losers.front());
  }
  return out;
}

std::string describe(const Finding& f) {
  std::string losers = f.losers.front();
  for (size_t i = 1; i < f.losers.size(); ++i)
    losers += (i + 1 == f.losers.size() ? " and " : ", ") + f.losers[i];
  return f.winner + " over " + losers + " on " + f.dataset + ": " + f.numbers;
}

// One budget's bullet: the surviving differences between methods, then the full cache's line.
std::string budget_line(const std::vector<const TableComparison*>& at_budget, size_t per_budget) {
  std::vector<const TableComparison*> surviving;
  size_t between = 0, full = 0, below_full = 0, above_full = 0;
  for (const TableComparison* c : at_budget) {
    if (!c->full_cache.empty()) {
      ++full;
      if (!c->survives) continue;
      // Below the full cache: the full cache is the one ahead.
      const bool full_ahead = (c->a == c->full_cache) == (c->paired.difference.value > 0);
      ++(full_ahead ? below_full : above_full);
      continue;
    }
    ++between;
    if (c->survives) surviving.push_back(c);
  }
  std::stable_sort(surviving.begin(), surviving.end(),
                   [](const TableComparison* x, const TableComparison* y) {
                     const double dx = std::fabs(x->paired.difference.value);
                     const double dy = std::fabs(y->paired.difference.value);
                     return dx != dy ? dx > dy : x->p_holm < y->p_holm;
                   });
  std::string line;
  if (between == 0)
    line = "no two methods other than the full cache compared.";
  else if (surviving.empty())
    line = strfmt("none of the %zu differences between two methods survives.", between);
  else {
    std::vector<std::string> named;
    for (const Finding& f : largest(surviving, per_budget)) named.push_back(describe(f));
    line = strfmt(
               "%zu of %zu differences between two methods survive; the largest (each winner "
               "once): ",
               surviving.size(), between) +
           join(named, "; ") + ".";
  }
  if (full > 0) {
    line += strfmt(" Against the full cache: %zu of %zu method results below it", below_full, full);
    if (above_full > 0) line += strfmt(", %zu above it", above_full);
    line += strfmt(", %zu not significant.", full - below_full - above_full);
  }
  return line;
}

}  // namespace

std::string findings_section(const TableSpec& table,
                             const std::vector<TableComparison>& comparisons, size_t per_budget) {
  if (comparisons.empty()) return "";
  std::vector<int64_t> budgets;
  for (const TableComparison& c : comparisons)
    if (std::find(budgets.begin(), budgets.end(), c.budget) == budgets.end())
      budgets.push_back(c.budget);
  std::string out = "### Findings: " + table.name + "\n\n";
  out += strfmt(
      "Written by the report from %s_paired.md: per budget, the largest differences between two "
      "methods that survive Holm's correction over the table's %zu comparisons at alpha %.2f, the "
      "better method first: mean per-question difference in points [95%% bootstrap interval] "
      "(W/L/T, p after Holm).\n\n",
      table.name.c_str(), comparisons.size(), kAlpha);
  for (const int64_t b : budgets) {
    std::vector<const TableComparison*> at_budget;
    for (const TableComparison& c : comparisons)
      if (c.budget == b) at_budget.push_back(&c);
    out += "- **B = " + budget_text(b) + "**: " + budget_line(at_budget, per_budget) + "\n";
  }
  return out + "\n";
}

}  // namespace kvs::experiment
