// What an experiment's merged database says about each method at each budget on each dataset:
// the scores of the best state, its layer profiles and the search trajectory. The runs are found
// by the keys of the plan. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiment/spec.h"
#include "store/records.h"

namespace kvs::experiment {

struct TrajectoryPoint {
  int64_t order = 0;
  double dev = 0;
  double best_so_far = 0;
  bool accepted = false;
  std::optional<double> test;  // official test score of the state's replay
};

struct MethodResult {
  bool finished = false;          // the run finished
  double dev = 0;                 // best dev score
  std::optional<double> test;     // official test score of the best state
  std::vector<double> lambda1, lambda2;  // per layer, of the best state
  // Per-question scores in [0, 1] of the best state: dev (raw), test (official, once replayed).
  std::vector<double> dev_questions, test_questions;
  std::optional<store::CacheLayout> test_cache;  // where its cache went on the test questions
  std::vector<TrajectoryPoint> trajectory;
  // The kvsearch builds that computed it (build_info::git_commit()): every state's dev split and
  // the best state's test replay, each the run's build where recorded before schema version 3.
  std::set<std::string> binaries;
};

class ExperimentResults {
 public:
  ExperimentResults(const ExperimentSpec& spec, const std::string& db_path);

  // Empty when the database has no such run, or the run has no state yet.
  std::optional<MethodResult> get(const std::string& dataset, const std::string& method, int64_t budget) const;
  // The test score, when recorded.
  std::optional<double> test(const std::string& dataset, const std::string& method, int64_t budget) const;
  // Every recorded method result on `dataset` (each method at each of its budgets).
  std::vector<MethodResult> of_dataset(const std::string& dataset) const;

  // Of the runs found: every MethodResult::binaries.
  const std::set<std::string>& commits() const { return commits_; }
  const std::set<std::string>& models() const { return models_; }
  const std::string& db_path() const { return db_path_; }

 private:
  const ExperimentSpec& spec_;
  std::string db_path_;
  struct Keyed {
    std::string run_key, dataset;
    MethodResult result;
  };
  std::vector<Keyed> results_;
  std::set<std::string> commits_, models_;
};

}  // namespace kvs::experiment
