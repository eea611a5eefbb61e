#include "experiment/paired_scores.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "core/files.h"
#include "core/strfmt.h"
#include "experiment/spec.h"
#include "store/store.h"

namespace kvs::experiment {

namespace {

using BudgetRuns = std::map<int64_t, store::Run>;       // a method's runs on one dataset, by budget
using DatasetRuns = std::map<std::string, BudgetRuns>;  // ... on every dataset

std::string listed(const std::set<std::string>& items) {
  return join(std::vector<std::string>(items.begin(), items.end()), ", ");
}

std::string budget_list(const std::set<int64_t>& budgets) {
  std::vector<std::string> parts;
  for (const int64_t b : budgets)
    parts.push_back(b == kFullCacheBudget ? "full" : std::to_string(b));
  return join(parts, ", ");
}

// "niah_single_1_1024 (32, 64), niah_single_2_1024 (128)": where a method has runs.
std::string recorded_cells(const DatasetRuns& runs) {
  std::vector<std::string> parts;
  for (const auto& [dataset, by_budget] : runs) {
    std::set<int64_t> budgets;
    for (const auto& [budget, run] : by_budget) budgets.insert(budget);
    parts.push_back(dataset + " (" + budget_list(budgets) + ")");
  }
  return join(parts, ", ");
}

// The runs of method `name` (on `dataset` unless empty), refusing two runs of one cell (runs of
// different experiments merged into one database).
DatasetRuns runs_of(const std::vector<store::Run>& runs, const ScoreQuery& q,
                    const std::string& name) {
  DatasetRuns out;
  for (const store::Run& r : runs) {
    const std::string recorded = recorded_name(r);
    if (recorded != name && recorded != slug(name)) continue;
    if (!q.dataset.empty() && r.spec.dataset != q.dataset) continue;
    const auto [it, added] = out[r.spec.dataset].emplace(r.spec.budget, r);
    if (!added)
      throw error_at(q.db_path, "method '" + name + "' has two runs on " + r.spec.dataset +
                                    " at budget " + std::to_string(r.spec.budget) + " (" +
                                    it->second.spec.key + ", " + r.spec.key +
                                    "): compare them in separate databases");
  }
  return out;
}

// The budgets at which both have a run; the full cache's run stands at every budget.
std::set<int64_t> common_budgets(const BudgetRuns& a, const BudgetRuns& b) {
  std::set<int64_t> out;
  for (const auto& [x, ra] : a)
    for (const auto& [y, rb] : b)
      if (x == y || y == kFullCacheBudget)
        out.insert(x);
      else if (x == kFullCacheBudget)
        out.insert(y);
  return out;
}

const store::Run& run_at(const BudgetRuns& runs, int64_t budget) {
  const auto it = runs.find(budget);
  return it != runs.end() ? it->second : runs.at(kFullCacheBudget);
}

}  // namespace

QuestionScores best_state_test_scores(store::Store& db, const store::Run& run) {
  QuestionScores out;
  const auto best = db.last_accepted(run);
  if (!best) return out;
  for (const store::PredictionRecord& p : db.predictions_of(*best, "test"))
    out[p.question_index] = {p.question_id, 100.0 * p.official_score.value_or(p.score)};
  return out;
}

PairedDataset pair_questions(const std::string& dataset, const QuestionScores& a,
                             const QuestionScores& b, const std::string& where,
                             const std::string& a_name, const std::string& b_name) {
  PairedDataset d{dataset, {}, {}};
  for (const auto& [index, qa] : a) {
    const auto qb = b.find(index);
    if (qb == b.end()) continue;
    if (qa.id != qb->second.id)
      throw error_at(where, strfmt("question %lld of %s is '%s' in %s but '%s' in %s: not the same "
                                   "questions",
                                   static_cast<long long>(index), dataset.c_str(), qa.id.c_str(),
                                   a_name.c_str(), qb->second.id.c_str(), b_name.c_str()));
    d.a.push_back(qa.points);
    d.b.push_back(qb->second.points);
  }
  return d;
}

std::string recorded_name(const store::Run& run) {
  if (!run.spec.job_key.empty()) {  // <experiment>/<dataset>/<method slug>/B<budget>
    const std::string prefix = "/" + run.spec.dataset + "/";
    const auto start = run.spec.key.find(prefix);
    if (start != std::string::npos) {
      const auto from = start + prefix.size();
      const auto end = run.spec.key.find('/', from);
      if (end != std::string::npos) return run.spec.key.substr(from, end - from);
    }
  }
  return run.spec.profile_family + (run.spec.segments > 0 ? std::to_string(run.spec.segments) : "");
}

PairedScores read_paired_test_scores(const ScoreQuery& q) {
  store::Store db(q.db_path, store::Access::read_only);
  const std::vector<store::Run> runs = db.list_runs();
  std::set<std::string> names, datasets;
  for (const store::Run& r : runs) {
    names.insert(recorded_name(r));
    datasets.insert(r.spec.dataset);
  }
  for (const std::string& name : {q.a, q.b})
    if (!names.count(name) && !names.count(slug(name)))
      throw error_at(q.db_path,
                     "no method '" + name + "' (recorded methods: " + listed(names) + ")");
  if (!q.dataset.empty() && !datasets.count(q.dataset))
    throw error_at(q.db_path,
                   "no dataset '" + q.dataset + "' (recorded datasets: " + listed(datasets) + ")");

  const DatasetRuns ra = runs_of(runs, q, q.a), rb = runs_of(runs, q, q.b);
  std::map<std::string, std::set<int64_t>> common;  // dataset -> budgets both have
  std::set<int64_t> budgets;
  for (const auto& [dataset, runs_a] : ra) {
    const auto it = rb.find(dataset);
    if (it == rb.end()) continue;
    common[dataset] = common_budgets(runs_a, it->second);
    budgets.insert(common[dataset].begin(), common[dataset].end());
  }
  const std::string pair = "'" + q.a + "' and '" + q.b + "'";
  if (budgets.empty()) {
    ScoreQuery everywhere = q;  // what each method has on any dataset, for the message
    everywhere.dataset.clear();
    throw error_at(q.db_path, pair + " have no dataset and budget in common" +
                                  (q.dataset.empty() ? "" : " on " + q.dataset) + ": " + q.a +
                                  " has " + recorded_cells(runs_of(runs, everywhere, q.a)) + "; " +
                                  q.b + " has " + recorded_cells(runs_of(runs, everywhere, q.b)));
  }
  if (q.budget && !budgets.count(*q.budget))
    throw error_at(q.db_path, "--budget " + std::to_string(*q.budget) + ": " + pair +
                                  " have runs at budgets " + budget_list(budgets) + " only");

  PairedScores out;
  out.a = q.a;
  out.b = q.b;
  out.source = "official test scores in " + q.db_path;
  out.budget = q.budget ? *q.budget : *budgets.rbegin();
  for (const int64_t b : budgets)
    if (b != *out.budget) out.other_budgets.push_back(b);
  for (const auto& [dataset, shared] : common) {
    if (!shared.count(*out.budget)) continue;
    const store::Run& a = run_at(ra.at(dataset), *out.budget);
    const store::Run& b = run_at(rb.at(dataset), *out.budget);
    PairedDataset d =
        pair_questions(dataset, best_state_test_scores(db, a), best_state_test_scores(db, b),
                       db.path(), a.spec.key, b.spec.key);
    if (!d.a.empty()) out.datasets.push_back(std::move(d));
  }
  if (out.datasets.empty())
    throw error_at(q.db_path, pair + " have no test scores on common questions at budget " +
                                  budget_list({*out.budget}) +
                                  " (are their states replayed on test?)");
  return out;
}

namespace {

// dataset -> scores of one score file (points).
std::map<std::string, std::vector<double>> read_score_file(const std::string& path) {
  const nlohmann::json doc = read_json_file(path, "the score file");
  auto numbers = [&](const nlohmann::json& array, const std::string& where) {
    if (!array.is_array()) throw error_at(path, where + " is not an array of per-question scores");
    if (array.empty()) throw error_at(path, where + " holds no scores");
    std::vector<double> out;
    for (size_t i = 0; i < array.size(); ++i) {
      if (!array[i].is_number())
        throw error_at(path, where + "[" + std::to_string(i) + "] is not a number");
      out.push_back(array[i].get<double>());
    }
    return out;
  };
  if (doc.is_array()) return {{"scores", numbers(doc, "the array")}};
  if (!doc.is_object() || doc.empty())
    throw error_at(
        path, "expected a JSON array of per-question scores, or an object of dataset -> array");
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, array] : doc.items())
    out[name] = numbers(array, "dataset '" + name + "'");
  return out;
}

}  // namespace

PairedScores read_paired_score_files(const std::string& path_a, const std::string& path_b) {
  const auto fa = read_score_file(path_a), fb = read_score_file(path_b);
  std::set<std::string> na, nb;
  for (const auto& [name, s] : fa) na.insert(name);
  for (const auto& [name, s] : fb) nb.insert(name);
  if (na != nb)
    throw error_at(path_b, "holds datasets " + listed(nb) + " but " + path_a + " holds " +
                               listed(na) + ": both files must score the same questions");
  PairedScores out;
  out.a = path_a;
  out.b = path_b;
  out.source = "scores of the two files";
  for (const auto& [name, a] : fa) {
    const std::vector<double>& b = fb.at(name);
    if (a.size() != b.size())
      throw error_at(
          path_b,
          strfmt("dataset '%s' has %zu scores but %zu in %s: both files must score the same "
                 "questions",
                 name.c_str(), b.size(), a.size(), path_a.c_str()));
    out.datasets.push_back({name, a, b});
  }
  return out;
}

}  // namespace kvs::experiment
