// An experiment spec (experiments/*.json): the datasets, budgets and methods of one paper result,
// the tables and figures `kvsearch report` draws from it, and the Slurm resources of its jobs.
// Torch-free. The format is documented in experiments/README.md; every field is checked on load
// and an error names the file and the field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evict/budget.h"
#include "evict/policy.h"
#include "evict/window_params.h"
#include "longbench/thinking.h"

namespace kvs::experiment {

// The budget of the full-cache method (profile "full"): above every prompt, so nothing is evicted.
constexpr int64_t kFullCacheBudget = int64_t{1} << 24;

// One column of the results: a fixed policy, a profile search, or a searched profile transferred
// unchanged to other budgets.
struct MethodSpec {
  std::string name;     // unique label, e.g. "PyramidKV"
  std::string family;   // policy family (JSON "profile"): full | baseline | pyramid | global |
                        // segments | curve; "policy" for a method given as "policy"; for a
                        // transfer, its source's. "full" keeps the whole
                       // cache: its one budget is kFullCacheBudget, and it is shown at every budget
  int segments = 3;     // segments profile only
  std::vector<int64_t> budgets;              // the experiment's budgets unless given
  int evals = 14;                            // searches: evaluations, warm start included
  // Searches: the first N dev questions that score their states (0: the whole dev split); the
  // experiment's dev_limit unless given. Fixed policies need no dev questions of their own.
  std::optional<int64_t> dev_limit;
  double step = 0.3;                         // searches: coordinate step in a-space
  double tau = 0.1;                          // searches: minimum dev improvement to accept
  std::optional<double> lambda1, lambda2;    // global only: fixed coefficients (default 0, -0.15)
  std::optional<evict::ScoreTerms> terms;    // ablations: score terms switched off
  std::optional<evict::Schedule> schedule;   // per-layer budgets; the family's own unless given
  std::string transfer;  // name of a searched method whose best profile this method evaluates
  // A registered method's policy (family "policy"): evict/policy.h's JSON without "budget", which
  // the method's budgets set, e.g. {"method": "knorm"} or {"method": "snapkv", "window": 64}.
  std::string policy_json;
  // A policy with a "decoding" schedule: decode-only, its budgets are its targets (answered on one
  // shared decode of the decode-time policies, search/decode_time.h).
  bool decode_time = false;
  std::vector<std::string> datasets;  // where it runs (e.g. an ablation on one task); empty: all
  // A profile's policy under an allocating wrapper (JSON "allocation", e.g. {"method": "adakv"}):
  // search::RunRequest::allocation_json. Empty: none.
  std::string allocation_json;

  bool runs_on(const std::string& dataset) const;

  bool searched() const { return transfer.empty() && (family == "segments" || family == "curve"); }
  bool full_cache() const { return family == "full"; }
};

// A table of `kvsearch report`, in the paper's format.
//   datasets: rows = datasets, columns = methods at `budget` (Table 1); the row's best in bold, a
//             macro-average row and a wins row
//   budgets:  rows = budgets, columns = methods' macro averages and gains over `baseline` (Table 2)
//   methods:  rows = methods at `budget`: macro average and datasets better than `baseline` (Table 3)
// reference[row][column]: the paper's published numbers, shown in "(paper)" columns.
struct TableSpec {
  std::string name;  // file stem: <name>.md, <name>.csv
  std::string kind;
  std::string title;
  std::vector<std::string> methods;
  std::vector<std::string> datasets;  // its rows and macro averages; the spec's unless given
  int64_t budget = 0;    // datasets, methods
  std::string baseline;  // budgets, methods
  std::map<std::string, std::map<std::string, double>> reference;
};

// A figure of `kvsearch report` (SVG, drawn by spec_figures.h).
//   profiles:   lambda1 and lambda2 per layer of each method's best state (Fig. 1a)
//   trajectory: dev best-so-far per evaluation with the test replay of each accepted state (Fig.
//   1b) budgets:    test score per budget, one line per method (Fig. 1c)
struct FigureSpec {
  std::string name;  // file stem: <name>.svg
  std::string kind;
  std::string title;
  std::string dataset;
  std::vector<std::string> methods;
  int64_t budget = 0;  // profiles, trajectory
};

// sbatch resources of every job; flags of `experiment run` override them. Empty: not requested.
struct SlurmResources {
  std::string partition;
  std::string time;  // e.g. "04:00:00"
  std::string mem;   // e.g. "64G"
  int gpus = 0;
  int cpus = 0;
};

struct ExperimentSpec {
  std::string path;  // the spec file
  std::string name;
  std::string description;
  std::string model;      // checkpoint directory ("" when the spec leaves it to flag/env/config)
  std::string longbench;  // LongBench directory (likewise)
  std::string model_type;  // when set, the checkpoint's config.json model_type must match
  std::vector<std::string> datasets;
  std::vector<int64_t> budgets;
  uint64_t split_seed = 42;
  int64_t dev_limit = 0;   // first N dev questions; 0: all
  int64_t test_limit = 0;  // first N test questions; 0: all
  int64_t max_length = 0;  // prompt truncation; 0: the model's default
  std::string chat_template = "auto";
  // What the scorer sees of an answer ("thinking": "keep" | "strip", longbench/thinking.h).
  longbench::Thinking thinking = longbench::Thinking::Keep;
  int speculation = 12;    // searches: moves evaluated per batch (results are sequential)
  std::vector<MethodSpec> methods;
  std::vector<TableSpec> tables;
  std::vector<FigureSpec> figures;
  SlurmResources slurm;
  // Canonical JSON of what defines the results (paths, tables, figures and Slurm resources left
  // out): recorded as the experiment's spec in every job database.
  std::string identity_json;

  const MethodSpec& method(const std::string& name) const;  // throws naming the spec file
};

// longbench_dir: where the data is when a flag overrides the spec's directory. Datasets beyond
// the official ones must be declared in that directory's config/dataset2metric.json.
ExperimentSpec load_spec(const std::string& path, const std::string& longbench_dir = "");

// Throws when the spec names a model_type and the checkpoint (any --model argument) is another.
void check_model_type(const ExperimentSpec& spec, const std::string& model_arg);

// "Segments (B=64 profile)" -> "segments-b-64-profile": names of files, keys and array tasks.
std::string slug(const std::string& name);

}  // namespace kvs::experiment
