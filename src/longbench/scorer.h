// The official LongBench scorer (eval.py) as pure functions: no files, no model.
//   per example:  max over the gold answers of the dataset's metric (starting from 0), after
//                 keeping only prediction.lstrip('\n').split('\n')[0] for trec, triviaqa, samsum
//                 (the official variant; the raw variant scores the whole output);
//   per dataset:  round(100 * sum / n, 2), the sum accumulated in order, Python's rounding;
//   LongBench-E:  per length bucket (< 4000, < 8000, else words), numpy's round(100 * mean, 2).
// RULER's metrics (string_match_all / string_match_part) go through the same interface, as RULER's
// evaluate.py computes them: per example, the prediction cleaned up (ruler_postprocess) and scored
// against all references at once; per dataset, round(sum / n * 100, 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "longbench/dataset.h"

namespace kvs::longbench {

enum class ScoreVariant {
  Official,  // with the first-line rule: the numbers reported on the test split
  Raw,       // the whole output: the dev score the search optimizes
};

// One answer: the dataset's metric (metrics.h). all_classes is used by classification only.
double metric_score(Metric metric, const std::string& prediction, const std::string& ground_truth,
                    const std::vector<std::string>& all_classes);

// One example of a dataset scored with `metric`: the best score over its answers (LongBench), or
// RULER's score over all of them; first_line_only applies LongBench's rule in the Official variant.
double score_with_metric(Metric metric, bool first_line_only, const std::string& prediction,
                         const std::vector<std::string>& answers,
                         const std::vector<std::string>& all_classes, ScoreVariant variant);

// One example: score_with_metric with the dataset's metric and first-line rule.
double score_example(const std::string& dataset, const std::string& prediction,
                     const std::vector<std::string>& answers,
                     const std::vector<std::string>& all_classes,
                     ScoreVariant variant = ScoreVariant::Official);

// round(100 * sum / n, 2) of per-example scores; kvs::Error when empty.
double dataset_score(const std::vector<double>& per_example);
// The dataset score as the metric's own evaluator aggregates it (RULER: round(sum / n * 100, 2)).
double dataset_score(const std::vector<double>& per_example, Metric metric);

struct LengthBucketScores {
  double up_to_4k;   // "0-4k": length < 4000; NaN when the bucket is empty (as numpy gives)
  double up_to_8k;   // "4-8k": 4000 <= length < 8000
  double above_8k;   // "8k+"
};

// LongBench-E: per_example[i] belongs to the bucket of lengths[i] (the record's word count).
LengthBucketScores length_bucket_scores(const std::vector<double>& per_example,
                                        const std::vector<int64_t>& lengths);

}  // namespace kvs::longbench
