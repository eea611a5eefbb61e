#include "store/rows.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace kvs::store {

namespace {

// A timestamp parameter: an empty value becomes "now", in the format of the columns' defaults.
std::string timestamp_param(int index) {
  const std::string param = "?" + std::to_string(index);
  return "coalesce(nullif(" + param + ", ''), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))";
}

std::string to_json(const std::vector<double>& values) { return nlohmann::json(values).dump(); }

std::vector<double> from_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text).get<std::vector<double>>();
  } catch (const nlohmann::json::exception&) {
    throw Error(where + " is not a JSON array of numbers: " + text);
  }
}

std::optional<int64_t> null_if_zero(int64_t value) {
  return value == 0 ? std::nullopt : std::optional<int64_t>(value);
}

Experiment experiment_from(const Statement& row) {
  Experiment e;
  e.id = row.integer(0);
  e.name = row.text(1);
  e.spec_json = row.text(2);
  e.created_at = row.text(3);
  return e;
}

constexpr const char* kSelectExperiment = "SELECT id, name, spec_json, created_at FROM experiments";

constexpr const char* kSelectJob =
    "SELECT jobs.id, job_key, experiments.name, jobs.spec_json, host, status, prefills, "
    "started_at, finished_at FROM jobs JOIN experiments ON experiments.id = jobs.experiment_id";

Job job_from(const Statement& row) {
  Job j;
  j.id = row.integer(0);
  j.spec.key = row.text(1);
  j.spec.experiment = row.text(2);
  j.spec.spec_json = row.text(3);
  j.spec.host = row.text(4);
  j.finished = row.text(5) == "finished";
  j.prefills = row.optional_integer(6);
  j.started_at = row.text(7);
  j.finished_at = row.optional_text(8);
  return j;
}

constexpr const char* kSelectRun =
    "SELECT runs.id, run_key, coalesce(jobs.job_key, ''), model, model_path, dataset, "
    "longbench_dir, split_seed, coalesce(dev_limit, 0), budget, profile_family, "
    "coalesce(segments, 0), search_json, policy_json, git_commit, build_type, command_line, "
    "runs.host, runs.status, runs.started_at, runs.finished_at, "
    "(SELECT count(*) FROM states WHERE states.run_id = runs.id) "
    "FROM runs LEFT JOIN jobs ON jobs.id = runs.job_id";

Run run_from(const Statement& row) {
  Run r;
  r.id = row.integer(0);
  RunSpec& s = r.spec;
  s.key = row.text(1);
  s.job_key = row.text(2);
  s.model = row.text(3);
  s.model_path = row.text(4);
  s.dataset = row.text(5);
  s.longbench_dir = row.text(6);
  s.split_seed = row.integer(7);
  s.dev_limit = row.integer(8);
  s.budget = row.integer(9);
  s.profile_family = row.text(10);
  s.segments = row.integer(11);
  s.search_json = row.text(12);
  s.policy_json = row.text(13);
  s.git_commit = row.text(14);
  s.build_type = row.text(15);
  s.command_line = row.text(16);
  s.host = row.text(17);
  r.finished = row.text(18) == "finished";
  r.started_at = row.text(19);
  r.finished_at = row.optional_text(20);
  r.states = row.integer(21);
  return r;
}

// A split's git_commit column, or NULL in a file from before version 3 (opened read-only as it is).
std::string commit_column(Connection& db, const std::string& table) {
  return has_column(db, table, "git_commit") ? table + ".git_commit" : std::string("NULL");
}

std::string select_state_sql(Connection& db) {
  return "SELECT id, run_id, eval_order, latent_json, lambda1_json, lambda2_json, policy_json, "
         "dev_score, accepted, best_so_far, changed_coordinate, delta, seconds, created_at, " +
         commit_column(db, "states") + " FROM states";
}

State state_from(Connection& db, const Statement& row) {
  State s;
  s.id = row.integer(0);
  s.run_id = row.integer(1);
  StateRecord& r = s.record;
  r.eval_order = row.integer(2);
  const std::string where = db.path() + ": state " + std::to_string(s.id) + " column ";
  r.latent = from_json(row.text(3), where + "latent_json");
  r.lambda1 = from_json(row.text(4), where + "lambda1_json");
  r.lambda2 = from_json(row.text(5), where + "lambda2_json");
  r.policy_json = row.text(6);
  r.dev_score = row.real(7);
  r.accepted = row.integer(8) != 0;
  r.best_so_far = row.real(9);
  r.changed_coordinate = row.optional_integer(10);
  r.delta = row.optional_real(11);
  r.seconds = row.real(12);
  s.created_at = row.text(13);
  r.git_commit = row.optional_text(14).value_or("");
  return s;
}

// `owner` names the state or replay in errors.
void insert_predictions(Connection& db, int64_t state_id, const std::string& split,
                        const std::vector<PredictionRecord>& predictions,
                        const std::string& owner) {
  Statement insert(db,
                   "INSERT INTO predictions (state_id, split, question_index, question_id, "
                   "prediction, score, official_score, prompt_tokens, generated_tokens, seconds) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                   "recording the " + split + " predictions of " + owner);
  for (const PredictionRecord& p : predictions) {
    insert.bind(1, state_id)
        .bind(2, split)
        .bind(3, p.question_index)
        .bind(4, p.question_id)
        .bind(5, p.prediction)
        .bind(6, p.score)
        .bind(7, p.official_score)
        .bind(8, p.prompt_tokens)
        .bind(9, p.generated_tokens)
        .bind(10, p.seconds);
    insert.run();
    insert.reset();
  }
}

void insert_cache_layout(Connection& db, int64_t state_id, const std::string& split,
                         const CacheLayout& c) {
  Statement insert(
      db,
      "INSERT INTO cache_layouts (state_id, split, questions, kept_entries, held_bytes, "
      "uniform_bytes, counts_json, largest_entries, bound_entries) VALUES (?1, ?2, ?3, ?4, ?5, "
      "?6, ?7, ?8, ?9)",
      "recording the " + split + " cache layout of state id " + std::to_string(state_id));
  insert.bind(1, state_id)
      .bind(2, split)
      .bind(3, c.questions)
      .bind(4, c.kept_entries)
      .bind(5, c.held_bytes)
      .bind(6, c.uniform_bytes)
      .bind(7, nlohmann::json(c.counts).dump())
      .bind(8, c.largest_entries)
      .bind(9, c.bound_entries);
  insert.run();
}

}  // namespace

std::optional<CacheLayout> select_cache_layout(Connection& db, int64_t state_id,
                                               const std::string& split) {
  if (!has_table(db, "cache_layouts")) return std::nullopt;
  // A file from before version 4, read as it is, has no decode-time sizes.
  const std::string sql =
      "SELECT questions, kept_entries, held_bytes, uniform_bytes, counts_json, " +
      std::string(has_column(db, "cache_layouts", "largest_entries")
                      ? "largest_entries, bound_entries"
                      : "NULL, NULL") +
      " FROM cache_layouts WHERE state_id = ?1 AND split = ?2";
  Statement select(
      db, sql.c_str(),
      "reading the " + split + " cache layout of state id " + std::to_string(state_id));
  select.bind(1, state_id).bind(2, split);
  if (!select.step()) return std::nullopt;
  CacheLayout c;
  c.questions = select.integer(0);
  c.kept_entries = select.real(1);
  c.held_bytes = select.real(2);
  c.uniform_bytes = select.real(3);
  c.largest_entries = select.optional_real(5);
  c.bound_entries = select.optional_real(6);
  const std::string where =
      db.path() + ": cache layout of state " + std::to_string(state_id) + " column counts_json";
  try {
    c.counts = nlohmann::json::parse(select.text(4)).get<std::vector<std::vector<double>>>();
  } catch (const nlohmann::json::exception& e) {
    throw error_at(where, std::string("not a list of lists of numbers: ") + e.what());
  }
  return c;
}

std::optional<Experiment> select_experiment(Connection& db, const std::string& name) {
  Statement select(db, (std::string(kSelectExperiment) + " WHERE name = ?1").c_str(),
                   "reading experiment '" + name + "'");
  select.bind(1, name);
  if (!select.step()) return std::nullopt;
  return experiment_from(select);
}

std::vector<Experiment> select_experiments(Connection& db) {
  Statement select(db, (std::string(kSelectExperiment) + " ORDER BY id").c_str(),
                   "listing experiments");
  std::vector<Experiment> out;
  while (select.step()) out.push_back(experiment_from(select));
  return out;
}

int64_t insert_experiment(Connection& db, const Experiment& e) {
  Statement insert(db,
                   ("INSERT INTO experiments (name, spec_json, created_at) VALUES (?1, ?2, " +
                    timestamp_param(3) + ")")
                       .c_str(),
                   "recording experiment '" + e.name + "'");
  insert.bind(1, e.name).bind(2, e.spec_json).bind(3, e.created_at);
  insert.run();
  return db.last_insert_rowid();
}

void update_experiment_spec(Connection& db, int64_t experiment_id, const std::string& spec_json) {
  Statement update(db, "UPDATE experiments SET spec_json = ?2 WHERE id = ?1",
                   "updating the spec of experiment id " + std::to_string(experiment_id));
  update.bind(1, experiment_id).bind(2, spec_json);
  update.run();
}

std::optional<Job> select_job(Connection& db, const std::string& key) {
  Statement select(db, (std::string(kSelectJob) + " WHERE job_key = ?1").c_str(),
                   "reading job '" + key + "'");
  select.bind(1, key);
  if (!select.step()) return std::nullopt;
  return job_from(select);
}

std::vector<Job> select_jobs(Connection& db) {
  Statement select(db, (std::string(kSelectJob) + " ORDER BY jobs.id").c_str(), "listing jobs");
  std::vector<Job> out;
  while (select.step()) out.push_back(job_from(select));
  return out;
}

int64_t insert_job(Connection& db, const Job& job) {
  const auto experiment = select_experiment(db, job.spec.experiment);
  if (!experiment)
    throw error_at(db.path(), "job '" + job.spec.key + "' names experiment '" +
                                  job.spec.experiment + "', which is not in the database");
  Statement insert(db,
                   ("INSERT INTO jobs (job_key, experiment_id, spec_json, host, status, prefills, "
                    "started_at, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, " +
                    timestamp_param(7) + ", ?8)")
                       .c_str(),
                   "recording job '" + job.spec.key + "'");
  insert.bind(1, job.spec.key)
      .bind(2, experiment->id)
      .bind(3, job.spec.spec_json)
      .bind(4, job.spec.host)
      .bind(5, std::string(job.finished ? "finished" : "running"))
      .bind(6, job.prefills)
      .bind(7, job.started_at)
      .bind(8, job.finished_at);
  insert.run();
  return db.last_insert_rowid();
}

void update_job_finished(Connection& db, int64_t job_id, std::optional<int64_t> prefills,
                         const std::string& finished_at) {
  Statement update(db,
                   ("UPDATE jobs SET status = 'finished', prefills = ?2, finished_at = " +
                    timestamp_param(3) + " WHERE id = ?1")
                       .c_str(),
                   "marking job id " + std::to_string(job_id) + " finished");
  update.bind(1, job_id).bind(2, prefills).bind(3, finished_at);
  update.run();
}

void reopen_job(Connection& db, int64_t job_id, const std::string& spec_json) {
  Statement update(db,
                   "UPDATE jobs SET spec_json = ?2, status = 'running', prefills = NULL, "
                   "finished_at = NULL WHERE id = ?1",
                   "reopening job id " + std::to_string(job_id));
  update.bind(1, job_id).bind(2, spec_json);
  update.run();
}

std::optional<Run> select_run(Connection& db, const std::string& key) {
  Statement select(db, (std::string(kSelectRun) + " WHERE run_key = ?1").c_str(),
                   "reading run '" + key + "'");
  select.bind(1, key);
  if (!select.step()) return std::nullopt;
  return run_from(select);
}

std::optional<Run> select_run(Connection& db, int64_t id) {
  Statement select(db, (std::string(kSelectRun) + " WHERE runs.id = ?1").c_str(),
                   "reading run " + std::to_string(id));
  select.bind(1, id);
  if (!select.step()) return std::nullopt;
  return run_from(select);
}

std::vector<Run> select_runs(Connection& db) {
  Statement select(db, (std::string(kSelectRun) + " ORDER BY runs.id").c_str(), "listing runs");
  std::vector<Run> out;
  while (select.step()) out.push_back(run_from(select));
  return out;
}

int64_t insert_run(Connection& db, const Run& run) {
  const RunSpec& s = run.spec;
  std::optional<int64_t> job_id;
  if (!s.job_key.empty()) {
    const auto job = select_job(db, s.job_key);
    if (!job)
      throw error_at(db.path(), "run '" + s.key + "' names job '" + s.job_key +
                                    "', which is not in the database");
    job_id = job->id;
  }
  Statement insert(
      db,
      ("INSERT INTO runs (run_key, job_id, model, model_path, dataset, longbench_dir, split_seed, "
       "dev_limit, budget, profile_family, segments, search_json, policy_json, git_commit, "
       "build_type, command_line, host, status, started_at, finished_at) VALUES (?1, ?2, ?3, ?4, "
       "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, " +
       timestamp_param(19) + ", ?20)")
          .c_str(),
      "recording run '" + s.key + "'");
  insert.bind(1, s.key)
      .bind(2, job_id)
      .bind(3, s.model)
      .bind(4, s.model_path)
      .bind(5, s.dataset)
      .bind(6, s.longbench_dir)
      .bind(7, s.split_seed)
      .bind(8, null_if_zero(s.dev_limit))
      .bind(9, s.budget)
      .bind(10, s.profile_family)
      .bind(11, null_if_zero(s.segments))
      .bind(12, s.search_json)
      .bind(13, s.policy_json)
      .bind(14, s.git_commit)
      .bind(15, s.build_type)
      .bind(16, s.command_line)
      .bind(17, s.host)
      .bind(18, std::string(run.finished ? "finished" : "running"))
      .bind(19, run.started_at)
      .bind(20, run.finished_at);
  insert.run();
  return db.last_insert_rowid();
}

void update_run_finished(Connection& db, int64_t run_id, const std::string& finished_at) {
  Statement update(db,
                   ("UPDATE runs SET status = 'finished', finished_at = " + timestamp_param(2) +
                    " WHERE id = ?1")
                       .c_str(),
                   "marking run id " + std::to_string(run_id) + " finished");
  update.bind(1, run_id).bind(2, finished_at);
  update.run();
}

std::vector<State> select_states(Connection& db, int64_t run_id, bool with_predictions) {
  Statement select(db, (select_state_sql(db) + " WHERE run_id = ?1 ORDER BY eval_order").c_str(),
                   "reading the states of run id " + std::to_string(run_id));
  select.bind(1, run_id);
  std::vector<State> out;
  while (select.step()) out.push_back(state_from(db, select));
  if (with_predictions) {
    for (State& state : out) {
      state.record.predictions = select_predictions(db, state.id, "dev");
      state.record.cache = select_cache_layout(db, state.id, "dev");
    }
  }
  return out;
}

std::optional<State> select_state(Connection& db, int64_t state_id) {
  Statement select(db, (select_state_sql(db) + " WHERE id = ?1").c_str(),
                   "reading state id " + std::to_string(state_id));
  select.bind(1, state_id);
  if (!select.step()) return std::nullopt;
  return state_from(db, select);
}

int64_t insert_state(Connection& db, int64_t run_id, const StateRecord& r,
                     const std::string& created_at) {
  Statement insert(
      db,
      ("INSERT INTO states (run_id, eval_order, latent_json, lambda1_json, lambda2_json, "
       "policy_json, dev_score, accepted, best_so_far, changed_coordinate, delta, seconds, "
       "git_commit, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
       "nullif(?14, ''), " +
       timestamp_param(13) + ")")
          .c_str(),
      "recording state " + std::to_string(r.eval_order) + " of run id " + std::to_string(run_id));
  insert.bind(1, run_id)
      .bind(2, r.eval_order)
      .bind(3, to_json(r.latent))
      .bind(4, to_json(r.lambda1))
      .bind(5, to_json(r.lambda2))
      .bind(6, r.policy_json)
      .bind(7, r.dev_score)
      .bind(8, int64_t{r.accepted ? 1 : 0})
      .bind(9, r.best_so_far)
      .bind(10, r.changed_coordinate)
      .bind(11, r.delta)
      .bind(12, r.seconds)
      .bind(13, created_at)
      .bind(14, r.git_commit);
  insert.run();
  const int64_t state_id = db.last_insert_rowid();
  insert_predictions(
      db, state_id, "dev", r.predictions,
      "state " + std::to_string(r.eval_order) + " of run id " + std::to_string(run_id));
  if (r.cache) insert_cache_layout(db, state_id, "dev", *r.cache);
  return state_id;
}

std::vector<PredictionRecord> select_predictions(Connection& db, int64_t state_id,
                                                 const std::string& split) {
  Statement select(db,
                   "SELECT question_index, question_id, prediction, score, official_score, "
                   "prompt_tokens, generated_tokens, seconds FROM predictions "
                   "WHERE state_id = ?1 AND split = ?2 ORDER BY question_index",
                   "reading the " + split + " predictions of state id " + std::to_string(state_id));
  select.bind(1, state_id).bind(2, split);
  std::vector<PredictionRecord> out;
  while (select.step()) {
    PredictionRecord p;
    p.question_index = select.integer(0);
    p.question_id = select.text(1);
    p.prediction = select.text(2);
    p.score = select.real(3);
    p.official_score = select.optional_real(4);
    p.prompt_tokens = select.integer(5);
    p.generated_tokens = select.integer(6);
    p.seconds = select.real(7);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Replay> select_replays(Connection& db, int64_t run_id) {
  Statement select(db,
                   ("SELECT replays.id, state_id, eval_order, split, score, official_score, "
                    "replays.seconds, replays.created_at, " +
                    commit_column(db, "replays") +
                    " FROM replays JOIN states ON states.id = replays.state_id "
                    "WHERE states.run_id = ?1 ORDER BY eval_order")
                       .c_str(),
                   "reading the replays of run id " + std::to_string(run_id));
  select.bind(1, run_id);
  std::vector<Replay> out;
  while (select.step()) {
    Replay r;
    r.id = select.integer(0);
    r.state_id = select.integer(1);
    r.eval_order = select.integer(2);
    r.split = select.text(3);
    r.score = select.real(4);
    r.official_score = select.real(5);
    r.seconds = select.real(6);
    r.created_at = select.text(7);
    r.git_commit = select.optional_text(8).value_or("");
    out.push_back(std::move(r));
  }
  return out;
}

bool replay_exists(Connection& db, int64_t state_id) {
  Statement select(db, "SELECT 1 FROM replays WHERE state_id = ?1 AND split = 'test'",
                   "looking up the replay of state id " + std::to_string(state_id));
  select.bind(1, state_id);
  return select.step();
}

int64_t insert_replay(Connection& db, int64_t state_id, const ReplayRecord& r,
                      const std::string& created_at) {
  Statement insert(db,
                   ("INSERT INTO replays (state_id, split, score, official_score, seconds, "
                    "git_commit, created_at) VALUES (?1, 'test', ?2, ?3, ?4, nullif(?6, ''), " +
                    timestamp_param(5) + ")")
                       .c_str(),
                   "recording the replay of state id " + std::to_string(state_id));
  insert.bind(1, state_id)
      .bind(2, r.score)
      .bind(3, r.official_score)
      .bind(4, r.seconds)
      .bind(5, created_at)
      .bind(6, r.git_commit);
  insert.run();
  const int64_t replay_id = db.last_insert_rowid();
  insert_predictions(db, state_id, "test", r.predictions,
                     "the replay of state id " + std::to_string(state_id));
  if (r.cache) insert_cache_layout(db, state_id, "test", *r.cache);
  return replay_id;
}

}  // namespace kvs::store
