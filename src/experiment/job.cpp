#include "experiment/job.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/build_info.h"
#include "core/error.h"
#include "core/log.h"
#include "experiment/job_kinds.h"
#include "store/merge.h"
#include "store/store.h"

namespace kvs::experiment {

search::RunRequest job_request(const ExperimentSpec& spec, const Job& job, const JobSettings& settings) {
  search::RunRequest r;
  r.session.model_dir = settings.model_dir;
  r.session.longbench_dir = settings.longbench_dir;
  r.session.dataset = job.dataset;
  r.db_path = job_database(settings.out_dir, job);
  r.speculation = spec.speculation;
  r.session.split_seed = spec.split_seed;
  r.limit_dev = spec.dev_limit;
  r.session.max_length = spec.max_length;
  r.session.chat_template = spec.chat_template;
  r.session.thinking = spec.thinking;
  r.command_line = settings.command_line;
  r.session.load = settings.load;
  r.job_key = job.key;
  return r;
}

search::RunRequest method_request(const ExperimentSpec& spec, const Job& job, const MethodSpec& method,
                                  int64_t budget, const JobSettings& settings) {
  search::RunRequest r = job_request(spec, job, settings);
  // The full cache is SnapKV above the prompt (no eviction); a policy's family is a fixed one's.
  r.family = method.full_cache() || !method.policy_json.empty() ? "baseline" : method.family;
  r.policy_json = method.policy_json;
  r.segments = method.segments;
  r.budget = budget;
  r.max_evals = method.searched() ? method.evals : 1;
  if (method.dev_limit) r.limit_dev = *method.dev_limit;
  r.step = method.step;
  r.tau = method.tau;
  r.run_key = run_key(spec, job.dataset, method.name, budget);
  r.terms = method.terms;
  r.schedule = method.schedule;
  r.lambda1 = method.lambda1;
  r.lambda2 = method.lambda2;
  r.allocation_json = method.allocation_json;
  return r;
}

std::optional<store::Job> recorded_job(const std::string& out_dir, const Job& job) {
  const std::string path = job_database(out_dir, job);
  if (!std::filesystem::exists(path)) return std::nullopt;
  store::Store db(path, store::Access::read_only);
  for (store::Job j : db.list_jobs()) {
    if (j.spec.key != job.key) continue;
    // A job whose spec has grown since (store/spec_growth.h) has what was added still to do.
    if (nlohmann::json::parse(j.spec.spec_json) != nlohmann::json::parse(job.spec_json))
      j.finished = false;
    return j;
  }
  return std::nullopt;
}

JobOutcome run_job(const ExperimentSpec& spec, const Plan& plan, size_t index, const JobSettings& settings) {
  if (index >= plan.jobs.size())
    throw error_at(spec.path, "job index " + std::to_string(index) + " is out of range (the plan has " +
                                  std::to_string(plan.jobs.size()) + " jobs)");
  const Job& job = plan.jobs[index];
  const std::string path = job_database(settings.out_dir, job);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());

  // An evaluate job records the test replays of its dataset's searches next to their states: it
  // starts from a copy of their databases (merging is idempotent, so reruns add nothing).
  std::vector<std::string> sources;
  for (const std::string& key : job.search_jobs) {
    const std::string source = job_database(settings.out_dir, plan.job(key));
    const auto search = recorded_job(settings.out_dir, plan.job(key));
    if (!search || !search->finished)
      throw error_at(source, "job '" + job.key + "' needs search job '" + key + "', which has not finished");
    sources.push_back(source);
  }
  if (!sources.empty()) store::merge_databases(path, sources);

  store::Store db(path);
  db.find_or_create_experiment(spec.name, spec.identity_json);
  const store::Job row = db.find_or_create_job({job.key, spec.name, job.spec_json, build_info::host_name()});
  if (row.finished) {
    JobOutcome skipped;
    skipped.key = job.key;
    skipped.skipped = true;
    skipped.summary = job.key + ": already finished";
    return skipped;
  }
  JobOutcome outcome = job.kind == JobKind::Search ? run_search_job(spec, job, settings)
                                                   : run_evaluate_job(spec, job, settings, db);
  db.mark_job_finished(row, outcome.prefills);
  log::info(outcome.summary);
  return outcome;
}

}  // namespace kvs::experiment
