#include "experiment/plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/strfmt.h"

namespace kvs::experiment {

namespace {

nlohmann::json evaluations_json(const std::vector<Evaluation>& evaluations) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : evaluations)
    out.push_back({{"method", e.method}, {"budget", e.budget}, {"run", e.run_key}});
  return out;
}

nlohmann::json method_json(const ExperimentSpec& spec, const std::string& name) {
  const auto methods = nlohmann::json::parse(spec.identity_json).at("methods");
  for (const auto& m : methods)
    if (m.at("name") == name) return m;
  throw error_at(spec.path, "no method named '" + name + "'");
}

// What a method's B means in the plan, where it is not a prefill budget of its own.
std::string budget_note(const MethodSpec& m) {
  if (m.decode_time) {
    const auto policy = nlohmann::json::parse(m.policy_json);
    if (policy.contains("budget"))
      return " (decode-time: the target; the prompt first to " + policy.at("budget").dump() + ")";
    return " (decode-time: the target)";
  }
  if (!m.transfer.empty()) return " (best profile of " + m.transfer + ")";
  return "";
}

// What a job's results depend on: its evaluations with their methods, and the settings shared by
// the experiment.
std::string job_spec_json(const ExperimentSpec& spec, const Job& job) {
  nlohmann::json methods = nlohmann::json::array();
  for (const auto& list : {job.evaluations, job.searches})
    for (const auto& e : list) {
      const auto m = method_json(spec, e.method);
      if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
    }
  nlohmann::json j{{"kind", job.kind == JobKind::Search ? "search" : "evaluate"},
                   {"dataset", job.dataset},
                   {"evaluations", evaluations_json(job.evaluations)},
                   {"searches", evaluations_json(job.searches)},
                   {"methods", methods},
                   {"split_seed", spec.split_seed},
                   {"dev_limit", spec.dev_limit},
                   {"test_limit", spec.test_limit},
                   {"max_length", spec.max_length},
                   {"chat_template", spec.chat_template}};
  // Only where it is not the default: the jobs recorded before the rule existed keep their keys.
  if (spec.thinking != longbench::Thinking::Keep)
    j["thinking"] = longbench::thinking_name(spec.thinking);
  return j.dump();
}

}  // namespace

const Job& Plan::job(const std::string& key) const {
  for (const Job& j : jobs)
    if (j.key == key) return j;
  throw Error("the plan has no job '" + key + "'");
}

std::string run_key(const ExperimentSpec& spec, const std::string& dataset, const std::string& method,
                    int64_t budget) {
  return spec.name + "/" + dataset + "/" + slug(method) + "/B" + std::to_string(budget);
}

Plan make_plan(const ExperimentSpec& spec) {
  Plan plan;
  std::vector<Job> evaluate_jobs;
  for (const std::string& dataset : spec.datasets) {
    Job evaluate;
    evaluate.key = spec.name + "/" + dataset + "/evaluate";
    evaluate.kind = JobKind::Evaluate;
    evaluate.dataset = dataset;
    for (const MethodSpec& m : spec.methods) {
      if (!m.runs_on(dataset)) continue;
      for (const int64_t budget : m.budgets) {
        const Evaluation e{m.name, budget, run_key(spec, dataset, m.name, budget)};
        if (!m.searched()) {
          evaluate.evaluations.push_back(e);
          continue;
        }
        Job search;
        search.key = spec.name + "/" + dataset + "/search/" + slug(m.name) + "/B" + std::to_string(budget);
        search.kind = JobKind::Search;
        search.dataset = dataset;
        search.evaluations.push_back(e);
        search.spec_json = job_spec_json(spec, search);
        plan.jobs.push_back(search);
        evaluate.search_jobs.push_back(search.key);
        evaluate.searches.push_back(e);
      }
    }
    evaluate.stage = evaluate.search_jobs.empty() ? 1 : 2;
    evaluate.spec_json = job_spec_json(spec, evaluate);
    evaluate_jobs.push_back(evaluate);
  }
  plan.jobs.insert(plan.jobs.end(), evaluate_jobs.begin(), evaluate_jobs.end());
  return plan;
}

std::string job_database(const std::string& out_dir, const Job& job) {
  return out_dir + "/jobs/" + slug(job.key) + ".sqlite";
}

std::string merged_database(const std::string& out_dir) { return out_dir + "/results.sqlite"; }

std::string plan_text(const ExperimentSpec& spec, const Plan& plan) {
  std::ostringstream out;
  out << strfmt("experiment %s (%s): %zu datasets, %zu methods, %zu jobs\n", spec.name.c_str(),
                spec.path.c_str(), spec.datasets.size(), spec.methods.size(), plan.jobs.size());
  if (!spec.description.empty()) out << spec.description << "\n";
  out << strfmt("\n%5s  %-5s  %-8s  %s\n", "index", "stage", "kind", "job / what it runs");
  for (size_t i = 0; i < plan.jobs.size(); ++i) {
    const Job& j = plan.jobs[i];
    out << strfmt("%5zu  %-5d  %-8s  %s\n", i, j.stage, j.kind == JobKind::Search ? "search" : "evaluate",
                  j.key.c_str());
    if (j.kind == JobKind::Search) {
      const MethodSpec& m = spec.method(j.evaluations[0].method);
      out << strfmt("%24s  %s at B=%lld: %s search, up to %d evaluations on dev\n", "", m.name.c_str(),
                    static_cast<long long>(j.evaluations[0].budget), m.family.c_str(), m.evals);
      continue;
    }
    size_t decode_time = 0;
    for (const Evaluation& e : j.evaluations) {
      const MethodSpec& m = spec.method(e.method);
      if (m.full_cache()) {
        out << strfmt("%24s  %s (the whole cache, no eviction)\n", "", e.method.c_str());
        continue;
      }
      out << strfmt("%24s  %s at B=%lld%s\n", "", e.method.c_str(),
                    static_cast<long long>(e.budget), budget_note(m).c_str());
      if (m.decode_time) ++decode_time;
    }
    for (const Evaluation& s : j.searches)
      out << strfmt("%24s  test replay of the accepted states of %s at B=%lld\n", "", s.method.c_str(),
                    static_cast<long long>(s.budget));
    out << strfmt("%24s  -> %zu policies on one prefill per dev and test question%s\n", "",
                  j.evaluations.size(),
                  decode_time == 0
                      ? ""
                      : strfmt(" (%zu decode-time ones on a shared decode from the same prefill)",
                               decode_time)
                            .c_str());
  }
  return out.str();
}

}  // namespace kvs::experiment
