// eval.py over prediction files: one <dataset>.jsonl per dataset, each line
// {"pred", "answers", "all_classes", "length"} as the official pred.py writes it.
// As in eval.py, the all_classes of a file's LAST line is used for every line of that file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "longbench/scorer.h"

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

// Scores one prediction file of `dataset`. With `e`, every line needs a length.
DatasetResult evaluate_file(const std::string& path, const std::string& dataset, bool e,
                            ScoreVariant variant = ScoreVariant::Official);

// Every file of the directory whose name ends in "jsonl", the dataset being the name up to the
// first '.' (as eval.py); results in the official dataset order. Errors on an unknown dataset,
// two files of one dataset, or no prediction file at all.
std::vector<DatasetResult> evaluate_directory(const std::string& dir, bool e,
                                              ScoreVariant variant = ScoreVariant::Official);

}  // namespace kvs::longbench
