// The bootstrap estimates behind the report's cells: a method's mean test score on one dataset at
// one budget, and its macro average over datasets (stratified bootstrap), each with its 95%
// interval (paired_stats.h), computed once per cell with one seed and resample count. Torch-free.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_scores.h"
#include "experiment/paired_stats.h"

namespace kvs::experiment {

// A run's per-question scores (points) in question order.
std::vector<double> points_of(const QuestionScores& scores);

class CellEstimates {
 public:
  CellEstimates(const ExperimentScores& scores, const Bootstrap& bootstrap);

  // mean_with_interval of the method's per-question scores; nothing when none are recorded.
  std::optional<Estimate> mean(const std::string& dataset, const std::string& method,
                               int64_t budget) const;
  // macro_average of the datasets' per-question scores; nothing when a dataset has none.
  std::optional<Estimate> macro(const std::vector<std::string>& datasets, const std::string& method,
                                int64_t budget) const;

  const ExperimentScores& scores() const { return scores_; }
  const Bootstrap& bootstrap() const { return bootstrap_; }

 private:
  const ExperimentScores& scores_;
  Bootstrap bootstrap_;
  // By the run keys read (a full-cache method's one run stands at every budget).
  mutable std::map<std::vector<std::string>, std::optional<Estimate>> cache_;
};

}  // namespace kvs::experiment
