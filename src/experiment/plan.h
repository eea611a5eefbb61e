// The jobs of an experiment. Per dataset:
//   - one search job per searched method and budget (searches are sequential: their own jobs);
//   - one evaluate job that runs everything else on shared prefills (one per question, one more
//     per observation protocol's split of the prompt): every fixed policy at every budget, every
//     transferred profile, and the test replay of every accepted state of the dataset's searches.
//     It comes after the searches it reads (stage 2), else in stage 1.
// Keys are stable across reruns ("<experiment>/<dataset>/..."): they find jobs and runs again.
// Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/spec.h"

namespace kvs::experiment {

enum class JobKind { Search, Evaluate };

// One method at one budget: a run of the results database.
struct Evaluation {
  std::string method;
  int64_t budget = 0;
  std::string run_key;
};

struct Job {
  std::string key;
  JobKind kind = JobKind::Evaluate;
  std::string dataset;
  int stage = 1;  // stage 2 waits for every stage-1 job
  // Search: the one search. Evaluate: the fixed and transferred evaluations.
  std::vector<Evaluation> evaluations;
  // Evaluate: the dataset's searches (their accepted states are replayed on test and their best
  // profiles transferred); each is the key of a search job and its run.
  std::vector<std::string> search_jobs;
  std::vector<Evaluation> searches;
  std::string spec_json;  // the job's slice of the spec, recorded with it
};

struct Plan {
  std::vector<Job> jobs;  // search jobs first, then evaluate jobs; the index is the array task id
  const Job& job(const std::string& key) const;
};

Plan make_plan(const ExperimentSpec& spec);

// The run of `method` at `budget` on `dataset`.
std::string run_key(const ExperimentSpec& spec, const std::string& dataset, const std::string& method,
                    int64_t budget);

// Where a job writes its database, and where the experiment's merged results go.
std::string job_database(const std::string& out_dir, const Job& job);
std::string merged_database(const std::string& out_dir);

// `kvsearch experiment plan`: one line per job, and the prefill arithmetic.
std::string plan_text(const ExperimentSpec& spec, const Plan& plan);

}  // namespace kvs::experiment
