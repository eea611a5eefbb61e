// Row-level reads and writes of every table, private to the store module. No transactions and no
// rules here: the callers (store.cpp, merge.cpp) hold the transaction and decide what may be
// written. Empty timestamps are filled with the current time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"

namespace kvs::store {

class Connection;

std::optional<Experiment> select_experiment(Connection& db, const std::string& name);
std::vector<Experiment> select_experiments(Connection& db);
int64_t insert_experiment(Connection& db, const Experiment& experiment);
void update_experiment_spec(Connection& db, int64_t experiment_id, const std::string& spec_json);

// The job's experiment must be in the database.
std::optional<Job> select_job(Connection& db, const std::string& key);
std::vector<Job> select_jobs(Connection& db);
int64_t insert_job(Connection& db, const Job& job);
void update_job_finished(Connection& db, int64_t job_id, std::optional<int64_t> prefills,
                         const std::string& finished_at);
// The job's spec replaced and the job running again (its spec grew: it has work to do).
void reopen_job(Connection& db, int64_t job_id, const std::string& spec_json);

// The run's job (spec.job_key), when it has one, must be in the database.
std::optional<Run> select_run(Connection& db, const std::string& key);
std::optional<Run> select_run(Connection& db, int64_t id);
std::vector<Run> select_runs(Connection& db);
int64_t insert_run(Connection& db, const Run& run);
void update_run_finished(Connection& db, int64_t run_id, const std::string& finished_at);

// In eval_order; record.predictions and record.cache filled when with_predictions.
std::vector<State> select_states(Connection& db, int64_t run_id, bool with_predictions);
std::optional<State> select_state(Connection& db, int64_t state_id);
// The state, its predictions and its cache layout (split "dev").
int64_t insert_state(Connection& db, int64_t run_id, const StateRecord& state,
                     const std::string& created_at);

// In question_index order.
std::vector<PredictionRecord> select_predictions(Connection& db, int64_t state_id,
                                                 const std::string& split);

// A state's cache layout on a split ("dev", "test"), if recorded (a version-1 file has none).
std::optional<CacheLayout> select_cache_layout(Connection& db, int64_t state_id,
                                               const std::string& split);

// In the replayed states' eval_order.
std::vector<Replay> select_replays(Connection& db, int64_t run_id);
bool replay_exists(Connection& db, int64_t state_id);
// The replay, its predictions and its cache layout (split "test").
int64_t insert_replay(Connection& db, int64_t state_id, const ReplayRecord& replay,
                      const std::string& created_at);

}  // namespace kvs::store
