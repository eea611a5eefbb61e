// The results database of kvsearch: runs, the states their searches evaluated with every
// per-question prediction, test replays, and the experiments and jobs of batch studies. Every
// write is one transaction, so a process killed at any point leaves whole states only. Several
// processes may write the same file at once (WAL mode; a writer waits for the others' locks).
// One Store per thread. The tables are documented in README.md next to this file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"
#include "store/schema.h"

namespace kvs::store {

class Connection;

class Store {
 public:
  // How long a writer waits for another process's lock before it fails.
  static constexpr int kDefaultBusyTimeoutMs = 120000;

  // Opens the database at `path`. read_write creates it (and its schema) when missing; read_only
  // refuses a missing file and every write.
  explicit Store(const std::string& path, Access access = Access::read_write,
                 int busy_timeout_ms = kDefaultBusyTimeoutMs);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;

  const std::string& path() const;

  // An experiment is found by name; its spec must match the recorded one.
  Experiment find_or_create_experiment(const std::string& name, const std::string& spec_json);
  std::vector<Experiment> list_experiments();

  // A job is found by key; its experiment and spec must match the recorded ones.
  Job find_or_create_job(const JobSpec& spec);
  void mark_job_finished(const Job& job, int64_t prefills);
  std::vector<Job> list_jobs();

  // The run with spec.key: found (existed = true) when its identity fields match spec, refused
  // with an error naming the differing field when they do not, created otherwise.
  FoundRun find_or_create_run(const RunSpec& spec);
  std::optional<Run> get_run(int64_t id);
  std::optional<Run> find_run(const std::string& key);
  std::vector<Run> list_runs();
  // Idempotent: a finished run keeps its first finished_at.
  void mark_finished(const Run& run);

  // Records one evaluated state with its dev predictions in one transaction. States are recorded
  // in order without gaps: eval_order must equal the number of states already recorded. Recording
  // an eval_order that is already there is an error (a resumed search must skip recorded states),
  // as is adding to a finished run.
  int64_t record_state(const Run& run, const StateRecord& state);
  // The recorded states in eval_order: what a resumed search continues from.
  std::vector<State> states_of(const Run& run, bool with_predictions = false);
  std::vector<PredictionRecord> predictions_of(const State& state, const std::string& split);

  // Records a state's test replay with its test predictions in one transaction. A state has at
  // most one: replaying it again is an error (check replays_of first to skip it).
  int64_t record_replay(const State& state, const ReplayRecord& replay);
  // In the replayed states' eval_order.
  std::vector<Replay> replays_of(const Run& run);
  // Where the state's cache went on a split ("dev", "test"), where recorded.
  std::optional<CacheLayout> cache_layout(const State& state, const std::string& split);
  // Whether `state` has its test replay (what a rerun skips).
  bool has_replay(const State& state);
  // The run's last accepted state (the best a search found; a fixed policy's only state), if any.
  std::optional<State> last_accepted(const Run& run);

  // SQLite's quick_check over the whole file; throws naming the file when it is damaged.
  void check_integrity();

 private:
  std::unique_ptr<Connection> db_;
};

}  // namespace kvs::store
