#include "experiment/comparison.h"

#include <algorithm>

#include "core/strfmt.h"
#include "experiment/spec.h"

namespace kvs::experiment {

Comparison compare_methods(const PairedScores& scores, const Bootstrap& bootstrap) {
  Comparison c;
  c.a = scores.a;
  c.b = scores.b;
  c.source = scores.source;
  c.budget = scores.budget;
  c.other_budgets = scores.other_budgets;
  std::vector<double> all_a, all_b, p;
  std::vector<std::vector<double>> per_a, per_b, per_diff;
  for (const PairedDataset& d : scores.datasets) {
    c.datasets.push_back({d.name, compare_paired(d.a, d.b, bootstrap)});
    p.push_back(c.datasets.back().paired.p);
    all_a.insert(all_a.end(), d.a.begin(), d.a.end());
    all_b.insert(all_b.end(), d.b.begin(), d.b.end());
    per_a.push_back(d.a);
    per_b.push_back(d.b);
    per_diff.emplace_back();
    for (size_t i = 0; i < d.a.size(); ++i) per_diff.back().push_back(d.a[i] - d.b[i]);
  }
  const HolmResult h = holm(p, kAlpha);  // throws on no datasets, as the statistics do on no scores
  for (size_t i = 0; i < c.datasets.size(); ++i) {
    c.datasets[i].p_holm = h.adjusted[i];
    c.datasets[i].survives = h.rejected[i];
  }
  c.pooled = compare_paired(all_a, all_b, bootstrap);
  c.mean_a = mean_with_interval(all_a, bootstrap);
  c.mean_b = mean_with_interval(all_b, bootstrap);
  if (scores.datasets.size() > 1) {
    c.macro_a = macro_average(per_a, bootstrap);
    c.macro_b = macro_average(per_b, bootstrap);
    c.macro_difference = macro_average(per_diff, bootstrap);
  }
  return c;
}

namespace {

nlohmann::json estimate_json(const Estimate& e) {
  return {{"mean", e.value}, {"low", e.low}, {"high", e.high}, {"n", e.n}};
}

// The paired figures shared by the pooled comparison (top level) and each dataset's.
void put_paired(nlohmann::json& out, const PairedComparison& c) {
  out["n"] = c.difference.n;
  out["mean_a"] = c.mean_a;
  out["mean_b"] = c.mean_b;
  out["difference"] = c.difference.value;
  out["low"] = c.difference.low;
  out["high"] = c.difference.high;
  out["wins"] = c.wins;
  out["losses"] = c.losses;
  out["ties"] = c.ties;
  out["p"] = c.p;
}

// -0.00 would read as a loss: a zero prints as +0.00.
double tidy(double x) { return x == 0 ? 0.0 : x; }

// One row of the text table: label, questions, means, difference with interval, counts, p.
std::string row(int width, const std::string& label, const PairedComparison& c,
                const std::string& tail) {
  const std::string counts =
      strfmt("%lld/%lld/%lld", static_cast<long long>(c.wins), static_cast<long long>(c.losses),
             static_cast<long long>(c.ties));
  return strfmt("%-*s %5lld %7.2f %7.2f %+8.2f  [%+7.2f, %+7.2f]  %-11s %s\n", width, label.c_str(),
                static_cast<long long>(c.difference.n), c.mean_a, c.mean_b,
                tidy(c.difference.value), tidy(c.difference.low), tidy(c.difference.high),
                counts.c_str(), tail.c_str());
}

}  // namespace

std::string p_text(double p) { return p >= 1e-4 ? strfmt("%.4f", p) : strfmt("%.1e", p); }

std::string signed_points(double x) { return strfmt("%+.2f", tidy(x)); }

std::string budget_text(int64_t budget) {
  return budget == kFullCacheBudget ? "full" : std::to_string(budget);
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json out = {{"a", c.a}, {"b", c.b}, {"source", c.source}};
  out["budget"] = c.budget ? nlohmann::json(*c.budget) : nlohmann::json(nullptr);
  out["other_budgets"] = c.other_budgets;
  put_paired(out, c.pooled);
  out["seed"] = c.pooled.difference.bootstrap.seed;
  out["resamples"] = c.pooled.difference.bootstrap.resamples;
  out["alpha"] = kAlpha;
  out["mean_a_interval"] = estimate_json(c.mean_a);
  out["mean_b_interval"] = estimate_json(c.mean_b);
  out["datasets"] = nlohmann::json::array();
  for (const DatasetComparison& d : c.datasets) {
    nlohmann::json j = {{"dataset", d.dataset}, {"p_holm", d.p_holm}, {"survives", d.survives}};
    put_paired(j, d.paired);
    out["datasets"].push_back(j);
  }
  if (c.macro_difference)
    out["macro"] = {{"a", estimate_json(*c.macro_a)},
                    {"b", estimate_json(*c.macro_b)},
                    {"difference", estimate_json(*c.macro_difference)}};
  return out;
}

std::string to_text(const Comparison& c) {
  std::string out = "A = " + c.a + ", B = " + c.b + ": " + c.source;
  if (c.budget) out += ", budget " + budget_text(*c.budget);
  out += "\n";
  if (!c.other_budgets.empty()) {
    std::vector<std::string> others;
    for (const int64_t b : c.other_budgets) others.push_back(budget_text(b));
    out += "(both also have budget " + join(others, ", ") + "; --budget chooses)\n";
  }
  int width = 13;  // "macro average"
  for (const DatasetComparison& d : c.datasets)
    width = std::max(width, static_cast<int>(d.dataset.size()));
  out += strfmt("\n%-*s %5s %7s %7s %8s  %-18s  %-11s %-8s %s\n", width, "dataset", "n", "A", "B",
                "A - B", "95% CI", "W/L/T", "p", "p Holm");
  for (const DatasetComparison& d : c.datasets)
    out += row(width, d.dataset, d.paired,
               strfmt("%-8s %s%s", p_text(d.paired.p).c_str(), p_text(d.p_holm).c_str(),
                      d.survives ? " *" : ""));
  if (c.macro_difference) {
    out += row(width, "all questions", c.pooled, p_text(c.pooled.p));
    const Estimate& m = *c.macro_difference;
    out += strfmt("%-*s %5lld %7.2f %7.2f %+8.2f  [%+7.2f, %+7.2f]\n", width, "macro average",
                  static_cast<long long>(m.n), c.macro_a->value, c.macro_b->value, tidy(m.value),
                  tidy(m.low), tidy(m.high));
  }
  const Bootstrap& bs = c.pooled.difference.bootstrap;
  out += strfmt(
      "\nA: %.2f [%.2f, %.2f], B: %.2f [%.2f, %.2f]: means over the %lld questions, 95%% CIs.\n",
      c.mean_a.value, c.mean_a.low, c.mean_a.high, c.mean_b.value, c.mean_b.low, c.mean_b.high,
      static_cast<long long>(c.mean_a.n));
  out +=
      "Scores in points (0-100); A - B per question; W/L/T: the questions A wins, loses, ties.\n";
  out += strfmt(
      "p: exact two-sided sign test; p Holm: adjusted over the %zu dataset%s (* survives at alpha "
      "%.2f).\n",
      c.datasets.size(), c.datasets.size() == 1 ? "" : "s", kAlpha);
  out += strfmt(
      "95%% CIs: percentile bootstrap, %lld resamples of the questions (paired), seed %llu.\n",
      static_cast<long long>(bs.resamples), static_cast<unsigned long long>(bs.seed));
  if (c.macro_difference)
    out += "Macro average: the mean of the datasets' means; its bootstrap resamples within each.\n";
  return out;
}

}  // namespace kvs::experiment
