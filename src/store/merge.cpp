#include "store/merge.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "store/rows.h"
#include "store/run_identity.h"
#include "store/schema.h"
#include "store/spec_growth.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace kvs::store {

namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool same_json(const std::string& a, const std::string& b) {
  return nlohmann::json::parse(a) == nlohmann::json::parse(b);
}

class SourceMerge {
 public:
  SourceMerge(Connection& from, Connection& into) : from_(from), into_(into) {}

  MergeReport run() {
    for (const Experiment& experiment : select_experiments(from_)) merge_experiment(experiment);
    for (const Job& job : select_jobs(from_)) merge_job(job);
    for (const Run& run : select_runs(from_)) merge_run(run);
    return report_;
  }

 private:
  // "<source>: cannot merge into <target>: <what>"
  Error conflict(const std::string& what) const {
    return error_at(from_.path(), "cannot merge into " + into_.path() + ": " + what);
  }

  void merge_experiment(const Experiment& experiment) {
    const auto existing = select_experiment(into_, experiment.name);
    if (!existing) {
      insert_experiment(into_, experiment);
      ++report_.experiments_added;
    } else if (!same_json(existing->spec_json, experiment.spec_json)) {
      // One copy may have grown (added datasets, budgets, methods): the grown spec stays.
      if (spec_grows(existing->spec_json, experiment.spec_json))
        update_experiment_spec(into_, existing->id, experiment.spec_json);
      else if (!spec_grows(experiment.spec_json, existing->spec_json))
        throw conflict("experiment '" + experiment.name + "' has a different spec in each");
    }
  }

  void merge_job(const Job& job) {
    const auto existing = select_job(into_, job.spec.key);
    if (!existing) {
      insert_job(into_, job);
      ++report_.jobs_added;
      return;
    }
    if (existing->spec.experiment != job.spec.experiment)
      throw conflict("job '" + job.spec.key + "' has a different experiment or spec in each");
    if (!same_json(existing->spec.spec_json, job.spec.spec_json)) {
      // The copy whose spec grew is the job as it is now, finished or not.
      if (spec_grows(job.spec.spec_json, existing->spec.spec_json)) return;
      if (!spec_grows(existing->spec.spec_json, job.spec.spec_json))
        throw conflict("job '" + job.spec.key + "' has a different experiment or spec in each");
      reopen_job(into_, existing->id, job.spec.spec_json);
      if (job.finished)
        update_job_finished(into_, existing->id, job.prefills, job.finished_at.value_or(""));
      return;
    }
    if (job.finished && !existing->finished)
      update_job_finished(into_, existing->id, job.prefills, job.finished_at.value_or(""));
  }

  void merge_run(const Run& run) {
    auto existing = select_run(into_, run.spec.key);
    int64_t target_id = 0;
    if (existing) {
      const std::string mismatch = identity_mismatch(existing->spec, run.spec);
      if (!mismatch.empty()) throw conflict("run '" + run.spec.key + "' differs: " + mismatch);
      target_id = existing->id;
    } else {
      target_id = insert_run(into_, run);
      ++report_.runs_added;
    }

    std::vector<State> present = select_states(into_, target_id, false);
    for (const State& state : select_states(from_, run.id, true)) {
      const int64_t order = state.record.eval_order;
      if (order < static_cast<int64_t>(present.size())) {
        const StateRecord& mine = present[order].record;
        if (!same_json(mine.policy_json, state.record.policy_json) ||
            mine.latent != state.record.latent)
          throw conflict("run '" + run.spec.key + "' state " + std::to_string(order) +
                         " was evaluated with another policy in each");
        ++report_.states_present;
        continue;
      }
      if (order != static_cast<int64_t>(present.size()))
        throw conflict("run '" + run.spec.key + "' lacks states before state " +
                       std::to_string(order));
      const int64_t id = insert_state(into_, target_id, state.record, state.created_at);
      present.push_back(State{id, target_id, state.record, state.created_at});
      ++report_.states_added;
      report_.predictions_added += static_cast<int64_t>(state.record.predictions.size());
    }
    if (existing && run.finished && !existing->finished)
      update_run_finished(into_, target_id, run.finished_at.value_or(""));

    for (const Replay& replay : select_replays(from_, run.id)) {
      const int64_t state_id = present[replay.eval_order].id;
      if (replay_exists(into_, state_id)) continue;
      ReplayRecord record;
      record.score = replay.score;
      record.official_score = replay.official_score;
      record.seconds = replay.seconds;
      record.git_commit = replay.git_commit;
      record.predictions = select_predictions(from_, replay.state_id, replay.split);
      record.cache = select_cache_layout(from_, replay.state_id, replay.split);
      insert_replay(into_, state_id, record, replay.created_at);
      ++report_.replays_added;
      report_.predictions_added += static_cast<int64_t>(record.predictions.size());
    }
  }

  Connection& from_;
  Connection& into_;
  MergeReport report_;
};

void add(MergeReport& total, const MergeReport& part) {
  total.experiments_added += part.experiments_added;
  total.jobs_added += part.jobs_added;
  total.runs_added += part.runs_added;
  total.states_added += part.states_added;
  total.states_present += part.states_present;
  total.replays_added += part.replays_added;
  total.predictions_added += part.predictions_added;
}

}  // namespace

MergeReport merge_databases(const std::string& target, const std::vector<std::string>& sources) {
  auto into = open_database(target, Access::read_write, Store::kDefaultBusyTimeoutMs);
  MergeReport total;
  for (const std::string& source : sources) {
    if (same_file(source, target)) throw error_at(source, "is the merge target itself");
    auto from = open_database(source, Access::read_only, Store::kDefaultBusyTimeoutMs);
    check_integrity(*from);
    Transaction transaction(*into);
    const MergeReport part = SourceMerge(*from, *into).run();
    transaction.commit();
    log::info(strfmt(
        "%s: merged %lld runs, %lld states (%lld already present), %lld replays", source.c_str(),
        static_cast<long long>(part.runs_added), static_cast<long long>(part.states_added),
        static_cast<long long>(part.states_present), static_cast<long long>(part.replays_added)));
    add(total, part);
  }
  return total;
}

}  // namespace kvs::store
