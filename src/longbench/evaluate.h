// eval.py over prediction files: one <dataset>.jsonl per dataset, each line
// {"pred", "answers", "all_classes", "length"} as the official pred.py writes it.
// As in eval.py, the all_classes of a file's LAST line is used for every line of that file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "longbench/scorer.h"
#include "longbench/thinking.h"

namespace kvs::longbench {

struct PredictionLine {
  std::string pred;
  std::vector<std::string> answers;
  std::optional<std::vector<std::string>> all_classes;
  std::optional<int64_t> length;  // required for LongBench-E scoring
};

// Every line checked; errors name the file, line and field.
std::vector<PredictionLine> load_predictions(const std::string& path);

struct DatasetResult {
  std::string dataset;
  std::vector<double> per_example;
  double score = 0;                          // round(100 * mean, 2)
  std::optional<LengthBucketScores> buckets;  // with LongBench-E scoring
};

// Scores one prediction file of `dataset`. With `e`, every line needs a length. `thinking`: what
// the scorer sees of each prediction (thinking.h; run's --thinking).
DatasetResult evaluate_file(const std::string& path, const std::string& dataset, bool e,
                            ScoreVariant variant = ScoreVariant::Official,
                            Thinking thinking = Thinking::Keep);

// Scores one prediction file with `metric` alone (no first-line rule), the result named `name`:
// RULER's string_match_all / string_match_part on any prediction file.
DatasetResult evaluate_file_with_metric(const std::string& path, const std::string& name,
                                        Metric metric, bool e,
                                        ScoreVariant variant = ScoreVariant::Official,
                                        Thinking thinking = Thinking::Keep);

// Every file of the directory whose name ends in "jsonl", the dataset being the name up to the
// first '.' (as eval.py); results in the official dataset order, then registered datasets (a
// loaded config/dataset2metric.json) by name. With `metric`, every file is scored with it and any
// name is accepted. Errors on an unknown dataset, two files of one dataset, or no prediction file.
std::vector<DatasetResult> evaluate_directory(const std::string& dir, bool e,
                                              ScoreVariant variant = ScoreVariant::Official,
                                              std::optional<Metric> metric = std::nullopt,
                                              Thinking thinking = Thinking::Keep);

}  // namespace kvs::longbench
