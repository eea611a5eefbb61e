// The typed rows of the store (see README.md in this directory for the tables behind them). JSON
// columns travel as JSON text: the store checks that they parse and compares them by value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvs::store {

// An experiment of issue 7 (one spec file: table1, budget sweep, ...), shared by its jobs.
struct Experiment {
  int64_t id = 0;
  std::string name;       // unique in a database
  std::string spec_json;  // the spec file's content
  std::string created_at;
};

// One batch job of an experiment: a model and dataset with the policies and searches that share
// its prefills. Each job writes its own database; merge_databases() combines them.
struct JobSpec {
  std::string key;         // unique, stable across reruns: identifies the job when merging
  std::string experiment;  // name of an experiment recorded in the same database
  std::string spec_json;   // the job's slice of the experiment spec
  std::string host;        // machine that ran it
};

struct Job {
  int64_t id = 0;
  JobSpec spec;
  bool finished = false;
  std::optional<int64_t> prefills;  // prefills the job ran, set when it finished
  std::string started_at;
  std::optional<std::string> finished_at;
};

// What defines a run. The fields marked "identity" must match when a run is resumed; the others
// describe where and how this invocation ran and may differ between resumes.
struct RunSpec {
  std::string key;             // unique in a database; default_run_key() derives one
  std::string job_key;         // the job that owns the run; empty for a standalone `kvsearch run`
  std::string model;           // identity: model name (e.g. Mistral-7B-Instruct-v0.2)
  std::string model_path;      // checkpoint directory
  std::string dataset;         // identity: LongBench dataset name
  std::string longbench_dir;   // LongBench data directory
  int64_t split_seed = 42;     // identity: dev/test split seed
  int64_t dev_limit = 0;       // identity: dev questions used, 0 for all of them
  int64_t budget = 64;         // identity: KV entries kept per head and layer
  std::string profile_family;  // identity: baseline, pyramid, global, segments or curve
  int64_t segments = 0;        // identity: segment count of the segments family, else 0
  std::string search_json = "{}";  // identity: search settings (step, tau, max_evals, ...)
  std::string policy_json = "{}";  // identity: the policy template the search varies
  std::string git_commit;          // the build that started the run (build_info::git_commit())
  std::string build_type;
  std::string command_line;
  std::string host;
};

struct Run {
  int64_t id = 0;
  RunSpec spec;
  bool finished = false;
  int64_t states = 0;  // states recorded so far
  std::string started_at;
  std::optional<std::string> finished_at;
};

// find_or_create_run()'s answer: the run, and whether it was already in the database.
struct FoundRun {
  Run run;
  bool existed = false;
};

// The answer of one policy to one question.
struct PredictionRecord {
  int64_t question_index = 0;            // position of the record in the dataset file
  std::string question_id;               // the record's _id
  std::string prediction;                // generated text
  double score = 0;                      // per-question score in [0, 1] on the raw output
  std::optional<double> official_score;  // the official scorer's, where it was computed
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double seconds = 0;
};

// Where one policy's cache went on a split: the entries each (layer, cache head) kept and the bytes
// its cache row held, beside the uniform layout's at the same mean budget, each the mean over the
// split's questions.
struct CacheLayout {
  int64_t questions = 0;
  double kept_entries = 0;   // prompt entries kept, summed over layers and cache heads
  double held_bytes = 0;     // keys and values held for the prompt (no padding stored)
  double uniform_bytes = 0;  // the uniform layout at the same mean budget
  std::vector<std::vector<double>> counts;  // [layer][cache head]: entries kept
  // A decode-time policy's: counts (and the bytes) are what it held after its last step; the most
  // entries one KV head of one layer held at any step (mean over the questions), and the bound
  // its schedule sets on that (target + period, or the prompt kept whole + period).
  std::optional<double> largest_entries;
  std::optional<double> bound_entries;

  bool operator==(const CacheLayout& o) const {
    return questions == o.questions && kept_entries == o.kept_entries &&
           held_bytes == o.held_bytes && uniform_bytes == o.uniform_bytes && counts == o.counts &&
           largest_entries == o.largest_entries && bound_entries == o.bound_entries;
  }
};

// One evaluated state of a run: a policy and its dev-split result.
struct StateRecord {
  int64_t eval_order = 0;          // 0 for the first (warm start), then 1, 2, ... without gaps
  std::vector<double> latent;      // the search's latent parameters (a-space)
  std::vector<double> lambda1;     // per layer
  std::vector<double> lambda2;     // per layer
  std::string policy_json = "{}";  // the complete policy evaluated
  double dev_score = 0;            // dataset score (0-100) on the dev split
  bool accepted = false;           // the search made this state its current one
  double best_so_far = 0;          // best accepted dev score after this evaluation
  std::optional<int64_t> changed_coordinate;  // latent index moved from the current state
  std::optional<double> delta;                // the signed move of that coordinate
  double seconds = 0;
  std::vector<PredictionRecord> predictions;  // per dev question
  std::optional<CacheLayout> cache;           // the dev split's, where recorded
  std::string git_commit;  // the build that evaluated the dev split; "" recorded before version 3
};

struct State {
  int64_t id = 0;
  int64_t run_id = 0;
  StateRecord record;  // record.predictions only when asked for
  std::string created_at;
};

// A state re-evaluated on the held-out test split.
struct ReplayRecord {
  double score = 0;           // dataset score (0-100) on raw outputs
  double official_score = 0;  // dataset score with the official scorer
  double seconds = 0;
  std::vector<PredictionRecord> predictions;  // per test question
  std::optional<CacheLayout> cache;           // the test split's, where recorded
  std::string git_commit;  // the build that evaluated the test split; "" recorded before version 3
};

struct Replay {
  int64_t id = 0;
  int64_t state_id = 0;
  int64_t eval_order = 0;  // of the state replayed
  std::string split;       // "test"
  double score = 0;
  double official_score = 0;
  double seconds = 0;
  std::string git_commit;  // ReplayRecord::git_commit
  std::string created_at;
};

// What merge_databases() did.
struct MergeReport {
  int64_t experiments_added = 0;
  int64_t jobs_added = 0;
  int64_t runs_added = 0;
  int64_t states_added = 0;
  int64_t states_present = 0;  // already in the target, skipped
  int64_t replays_added = 0;
  int64_t predictions_added = 0;
};

}  // namespace kvs::store
