#include "store/store.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "store/rows.h"
#include "store/run_identity.h"
#include "store/spec_growth.h"
#include "store/sqlite.h"

namespace kvs::store {

namespace {

// NaN would reach SQLite as NULL and JSON as null: refuse it with the field's name instead.
void check_finite(double value, const std::string& where, const std::string& field) {
  if (!std::isfinite(value)) throw error_at(where, field + " is not a finite number");
}

void check_finite(const std::vector<double>& values, const std::string& where,
                  const std::string& field) {
  for (size_t i = 0; i < values.size(); ++i)
    check_finite(values[i], where, field + "[" + std::to_string(i) + "]");
}

void check_predictions(const std::vector<PredictionRecord>& predictions, const std::string& where) {
  for (const PredictionRecord& p : predictions) {
    const std::string field = "prediction for question " + std::to_string(p.question_index) + ": ";
    check_finite(p.score, where, field + "score");
    if (p.official_score) check_finite(*p.official_score, where, field + "official_score");
    check_finite(p.seconds, where, field + "seconds");
  }
}

void check_run_spec(const RunSpec& spec, const std::string& path) {
  const std::string where = path + ": run '" + spec.key + "'";
  if (spec.key.empty()) throw error_at(path, "a run needs a key (see default_run_key)");
  if (spec.model.empty()) throw error_at(where, "model is empty");
  if (spec.dataset.empty()) throw error_at(where, "dataset is empty");
  if (spec.profile_family.empty()) throw error_at(where, "profile family is empty");
  if (spec.budget <= 0) throw error_at(where, "budget " + std::to_string(spec.budget) + " <= 0");
  if (spec.dev_limit < 0) throw error_at(where, "dev question limit is negative");
  if (spec.segments < 0) throw error_at(where, "segment count is negative");
  check_json(spec.search_json, where + " search settings");
  check_json(spec.policy_json, where + " policy template");
}

// The run as the database has it now (another process may have changed it since `run` was read).
Run current_run(Connection& db, const Run& run) {
  auto current = select_run(db, run.id);
  if (!current || current->spec.key != run.spec.key)
    throw error_at(db.path(), "run '" + run.spec.key + "' (id " + std::to_string(run.id) +
                                  ") is not in this database");
  return *current;
}

}  // namespace

Store::Store(const std::string& path, Access access, int busy_timeout_ms)
    : db_(open_database(path, access, busy_timeout_ms)) {}

Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

const std::string& Store::path() const { return db_->path(); }

Experiment Store::find_or_create_experiment(const std::string& name, const std::string& spec_json) {
  if (name.empty()) throw error_at(path(), "an experiment needs a name");
  check_json(spec_json, path() + ": spec of experiment '" + name + "'");
  Transaction transaction(*db_);
  if (auto existing = select_experiment(*db_, name)) {
    if (!spec_grows(existing->spec_json, spec_json))
      throw error_at(path(), "experiment '" + name +
                                 "' was recorded with a different spec (a spec may only add "
                                 "datasets, budgets and methods): give the changed experiment "
                                 "another name or write to another database");
    if (nlohmann::json::parse(existing->spec_json) != nlohmann::json::parse(spec_json)) {
      update_experiment_spec(*db_, existing->id, spec_json);
      existing->spec_json = spec_json;
    }
    transaction.commit();
    return *existing;
  }
  Experiment experiment;
  experiment.name = name;
  experiment.spec_json = spec_json;
  insert_experiment(*db_, experiment);
  auto created = select_experiment(*db_, name);
  transaction.commit();
  return *created;
}

std::vector<Experiment> Store::list_experiments() { return select_experiments(*db_); }

Job Store::find_or_create_job(const JobSpec& spec) {
  if (spec.key.empty()) throw error_at(path(), "a job needs a key");
  check_json(spec.spec_json, path() + ": spec of job '" + spec.key + "'");
  Transaction transaction(*db_);
  if (auto existing = select_job(*db_, spec.key)) {
    if (existing->spec.experiment != spec.experiment ||
        !spec_grows(existing->spec.spec_json, spec.spec_json))
      throw error_at(path(), "job '" + spec.key + "' was recorded for experiment '" +
                                 existing->spec.experiment +
                                 "' with a different spec: a job key must name one job");
    if (nlohmann::json::parse(existing->spec.spec_json) != nlohmann::json::parse(spec.spec_json)) {
      reopen_job(*db_, existing->id, spec.spec_json);  // its spec grew: the rest to do
      existing = select_job(*db_, spec.key);
    }
    transaction.commit();
    return *existing;
  }
  Job job;
  job.spec = spec;
  insert_job(*db_, job);
  auto created = select_job(*db_, spec.key);
  transaction.commit();
  return *created;
}

void Store::mark_job_finished(const Job& job, int64_t prefills) {
  Transaction transaction(*db_);
  const auto current = select_job(*db_, job.spec.key);
  if (!current) throw error_at(path(), "job '" + job.spec.key + "' is not in this database");
  if (!current->finished) update_job_finished(*db_, current->id, prefills, "");
  transaction.commit();
}

std::vector<Job> Store::list_jobs() { return select_jobs(*db_); }

FoundRun Store::find_or_create_run(const RunSpec& spec) {
  check_run_spec(spec, path());
  Transaction transaction(*db_);  // two processes may ask for the same run at once
  if (auto existing = select_run(*db_, spec.key)) {
    const std::string mismatch = identity_mismatch(existing->spec, spec);
    if (!mismatch.empty())
      throw error_at(path(), "run '" + spec.key +
                                 "' was recorded with another setting: " + mismatch +
                                 "; rerun with the recorded settings or use another "
                                 "database");
    if (existing->spec.git_commit != spec.git_commit)
      log::warn(strfmt("%s: run '%s' was started at commit %s, this is %s", path().c_str(),
                       spec.key.c_str(), existing->spec.git_commit.c_str(),
                       spec.git_commit.c_str()));
    transaction.commit();
    return {*existing, true};
  }
  Run run;
  run.spec = spec;
  const int64_t id = insert_run(*db_, run);
  FoundRun created{*select_run(*db_, id), false};
  transaction.commit();
  return created;
}

std::optional<Run> Store::get_run(int64_t id) { return select_run(*db_, id); }

std::optional<Run> Store::find_run(const std::string& key) { return select_run(*db_, key); }

std::vector<Run> Store::list_runs() { return select_runs(*db_); }

void Store::mark_finished(const Run& run) {
  Transaction transaction(*db_);
  if (!current_run(*db_, run).finished) update_run_finished(*db_, run.id, "");
  transaction.commit();
}

int64_t Store::record_state(const Run& run, const StateRecord& state) {
  const std::string where =
      path() + ": run '" + run.spec.key + "' state " + std::to_string(state.eval_order);
  check_finite(state.latent, where, "latent");
  check_finite(state.lambda1, where, "lambda1");
  check_finite(state.lambda2, where, "lambda2");
  check_finite(state.dev_score, where, "dev_score");
  check_finite(state.best_so_far, where, "best_so_far");
  check_finite(state.seconds, where, "seconds");
  if (state.delta) check_finite(*state.delta, where, "delta");
  check_json(state.policy_json, where + " policy");
  check_predictions(state.predictions, where);

  Transaction transaction(*db_);
  const Run current = current_run(*db_, run);
  if (current.finished) throw error_at(where, "the run is finished; no state can be added");
  if (state.eval_order < current.states)
    throw error_at(where, "is already recorded (a resumed search must skip recorded states)");
  if (state.eval_order > current.states)
    throw error_at(where, "would leave a gap: the run has " + std::to_string(current.states) +
                              " states, so the next one is " + std::to_string(current.states));
  const int64_t id = insert_state(*db_, run.id, state, "");
  transaction.commit();
  return id;
}

std::vector<State> Store::states_of(const Run& run, bool with_predictions) {
  return select_states(*db_, run.id, with_predictions);
}

std::vector<PredictionRecord> Store::predictions_of(const State& state, const std::string& split) {
  return select_predictions(*db_, state.id, split);
}

int64_t Store::record_replay(const State& state, const ReplayRecord& replay) {
  const std::string where = path() + ": replay of state " +
                            std::to_string(state.record.eval_order) + " of run id " +
                            std::to_string(state.run_id);
  check_finite(replay.score, where, "score");
  check_finite(replay.official_score, where, "official_score");
  check_finite(replay.seconds, where, "seconds");
  check_predictions(replay.predictions, where);

  Transaction transaction(*db_);
  const auto current = select_state(*db_, state.id);
  if (!current || current->run_id != state.run_id ||
      current->record.eval_order != state.record.eval_order)
    throw error_at(where, "no such state in this database");
  if (replay_exists(*db_, state.id)) throw error_at(where, "the state already has a test replay");
  const int64_t id = insert_replay(*db_, state.id, replay, "");
  transaction.commit();
  return id;
}

std::vector<Replay> Store::replays_of(const Run& run) { return select_replays(*db_, run.id); }

bool Store::has_replay(const State& state) { return replay_exists(*db_, state.id); }

std::optional<CacheLayout> Store::cache_layout(const State& state, const std::string& split) {
  return select_cache_layout(*db_, state.id, split);
}

std::optional<State> Store::last_accepted(const Run& run) {
  std::optional<State> last;
  for (State& s : select_states(*db_, run.id, false))
    if (s.record.accepted) last = std::move(s);
  return last;
}

void Store::check_integrity() { kvs::store::check_integrity(*db_); }

}  // namespace kvs::store
