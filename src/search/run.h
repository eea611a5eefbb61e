// `kvsearch run` and `kvsearch replay`: a fixed policy or a profile search on a dataset's dev
// split, every evaluated state recorded in SQLite (resumable), and the replay of the accepted
// trajectory on the held-out test split.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evict/policy.h"
#include "evict/window_params.h"
#include "model/runtime.h"
#include "search/session.h"
#include "store/records.h"

namespace kvs::search {

struct RunRequest {
  SessionSettings session;  // model, dataset, split seed, prompt rules, device
  // The policy family (`--profile`): the fixed baseline | pyramid | global policies, or a searched
  // family of layer profiles, segments | curve (evict::Profile is the per-layer lambda shape).
  std::string family = "segments";
  int segments = 3;
  int64_t budget = 64;
  std::string db_path;
  int max_evals = 14;
  double step = 0.3;
  double tau = 0.1;
  int speculation = 12;          // neighbour moves evaluated per batch (results are sequential)
  int64_t limit_dev = 0;         // 0: the whole dev split
  bool eval_test = false;        // score the final state on the test split (official scorer)
  std::string command_line;
  // Batch experiments (src/experiment): the job that owns the run, the run's key (empty: the
  // default key) and the score terms of an ablation (empty: the family's own; a search does not
  // move the coefficients of a term switched off).
  std::string job_key;
  std::string run_key;
  std::optional<evict::ScoreTerms> terms;
  // The per-layer budget schedule (empty: the family's own, uniform for baseline and pyramid for
  // the others): the diversity-aware score on SnapKV's uniform budgets separates the score's
  // effect from PyramidKV's allocation.
  std::optional<evict::Schedule> schedule;
  // A registered method's fixed policy (evict/policy.h's JSON without "budget", which `budget`
  // sets); empty: the family's policy. The family is then a fixed one's, and the run records the
  // method's name as its profile family.
  std::string policy_json;
  // The global family's fixed coefficients (experiment specs; empty: 0 and -0.15).
  std::optional<double> lambda1, lambda2;
  // An allocation the family's policy runs under: an allocating wrapper's JSON without "budget"
  // and "base" (e.g. {"method": "adakv", "rule": "original"}); the family's policy becomes its
  // base at KV-head granularity, and a search moves that base's lambda profiles. Empty: none.
  std::string allocation_json;
};

struct RunSummary {
  int64_t run_id = 0;
  std::string run_key;
  bool already_finished = false;
  int evaluations = 0;         // states recorded in total
  int evaluated_now = 0;       // states this invocation evaluated (the rest were resumed)
  double best_dev_score = 0;
  std::vector<double> best_lambda1, best_lambda2;  // per layer
  double test_score = -1;      // official test score with --eval-test, else -1
  int64_t prefills = 0;        // prefills this invocation ran (QuestionOutcome::prefills, summed)
};

RunSummary run_search(const RunRequest& request);

// The policy `request` evaluates at `latent` (its family's, with request.terms, schedule and fixed
// lambdas applied, under request.allocation_json where given).
evict::Policy request_policy(const RunRequest& request, const std::vector<double>& latent = {});
// The store's description of a run of `request` whose policy template is `policy_template`.
store::RunSpec run_spec(const RunRequest& request, const evict::Policy& policy_template);
std::string run_summary_text(const RunSummary& summary);
// `policy` as the base of the allocating wrapper `allocation_json` (RunRequest::allocation_json),
// at KV-head granularity; throws naming `where` when the method does not allocate a base's budget.
evict::Policy allocated_policy(const evict::Policy& policy, const std::string& allocation_json,
                               const std::string& where);
// The policy whose lambda profiles a (possibly allocated) policy runs: its base, or itself.
const evict::Policy& profile_policy(const evict::Policy& policy);

struct ReplayRequest {
  std::string db_path;
  int64_t run_id = 0;            // 0: every run of the database
  std::string model_dir;         // default: the path recorded with the run
  std::string longbench_dir;     // default: the path recorded with the run
  model::LoadOptions load;
};

// Evaluates every accepted state of the run(s) on the test split (one prefill per test question
// for the whole trajectory), records the replays and returns the trajectory tables.
std::string replay_runs(const ReplayRequest& request);

// `kvsearch runs` / `kvsearch show`: read-only views of a database. With predictions, show also
// lists the best state's per-question predictions and scores, on test where it was replayed, else
// on dev (a text dataset's prediction holds the numbers behind its score).
std::string list_runs_text(const std::string& db_path);
std::string show_run_text(const std::string& db_path, int64_t run_id, bool predictions = false);

}  // namespace kvs::search
