// The per-question official test scores (points) of every run of an experiment's plan, read from
// its merged database: what the report's intervals, paired comparisons and figures are computed
// from (the tables' plain scores come from results.h). Torch-free.
#pragma once

#include <map>
#include <string>

#include "experiment/paired_scores.h"
#include "experiment/spec.h"

namespace kvs::experiment {

class ExperimentScores {
 public:
  ExperimentScores(const ExperimentSpec& spec, const std::string& db_path);

  // The scores of the best state of `method` on `dataset` at `budget` (a full-cache method: its one
  // run, at every budget); nullptr when the database has no such run, no replay of its best state
  // or a replay without per-question scores.
  const QuestionScores* get(const std::string& dataset, const std::string& method,
                            int64_t budget) const;

  // The run that get() reads, for messages.
  std::string run_key_of(const std::string& dataset, const std::string& method,
                         int64_t budget) const;

  const std::string& db_path() const { return db_path_; }

 private:
  const ExperimentSpec& spec_;
  std::string db_path_;
  std::map<std::string, QuestionScores> by_run_key_;  // runs with at least one scored question
};

}  // namespace kvs::experiment
