#include "longbench/scorer.h"

#include <algorithm>

#include "core/error.h"
#include "longbench/metrics.h"
#include "longbench/pyfloat.h"
#include "longbench/text.h"

namespace kvs::longbench {

double metric_score(Metric metric, const std::string& prediction, const std::string& ground_truth,
                    const std::vector<std::string>& all_classes) {
  switch (metric) {
    case Metric::QaF1:
      return qa_f1_score(prediction, ground_truth);
    case Metric::RougeL:
      return rouge_score(prediction, ground_truth);
    case Metric::Classification:
      return classification_score(prediction, ground_truth, all_classes);
    case Metric::Retrieval:
      return retrieval_score(prediction, ground_truth);
    case Metric::Count:
      return count_score(prediction, ground_truth);
    case Metric::CodeSim:
      return code_sim_score(prediction, ground_truth);
    case Metric::StringMatchAll:
      return string_match_all(ruler_postprocess(prediction), {ground_truth});
    case Metric::StringMatchPart:
      return string_match_part(ruler_postprocess(prediction), {ground_truth});
    case Metric::BoxedAnswer:
      return boxed_answer_score(prediction, ground_truth);
    case Metric::LastNumber:
      return last_number_score(prediction, ground_truth);
    case Metric::Perplexity:
    case Metric::Fidelity:
      throw Error(metric_name(metric) +
                  ": a text dataset is measured by the evaluator, not scored");
  }
  throw Error("metric_score: unknown metric");
}

double score_with_metric(Metric metric, bool first_line_only, const std::string& prediction,
                         const std::vector<std::string>& answers,
                         const std::vector<std::string>& all_classes, ScoreVariant variant) {
  if (metric == Metric::StringMatchAll) return string_match_all(ruler_postprocess(prediction), answers);
  if (metric == Metric::StringMatchPart) return string_match_part(ruler_postprocess(prediction), answers);
  const std::string scored =
      variant == ScoreVariant::Official && first_line_only ? first_line(prediction) : prediction;
  double score = 0.0;
  for (const auto& answer : answers)
    score = std::max(score, metric_score(metric, scored, answer, all_classes));
  return score;
}

double score_example(const std::string& dataset, const std::string& prediction,
                     const std::vector<std::string>& answers,
                     const std::vector<std::string>& all_classes, ScoreVariant variant) {
  const auto& info = dataset_info(dataset);
  return score_with_metric(info.metric, info.first_line_only, prediction, answers, all_classes,
                           variant);
}

double dataset_score(const std::vector<double>& per_example) {
  if (per_example.empty()) throw Error("dataset_score: no examples to score");
  double total = 0.0;
  for (double s : per_example) total += s;
  return python_round2(100 * total / static_cast<double>(per_example.size()));
}

double dataset_score(const std::vector<double>& per_example, Metric metric) {
  if (metric != Metric::StringMatchAll && metric != Metric::StringMatchPart)
    return dataset_score(per_example);
  if (per_example.empty()) throw Error("dataset_score: no examples to score");
  double total = 0.0;
  for (double s : per_example) total += s;
  return python_round2(total / static_cast<double>(per_example.size()) * 100);
}

LengthBucketScores length_bucket_scores(const std::vector<double>& per_example,
                                        const std::vector<int64_t>& lengths) {
  if (per_example.size() != lengths.size())
    throw Error("length_bucket_scores: " + std::to_string(per_example.size()) + " scores but " +
                std::to_string(lengths.size()) + " lengths");
  std::vector<double> buckets[3];
  for (size_t i = 0; i < per_example.size(); ++i) {
    const int bucket = lengths[i] < 4000 ? 0 : lengths[i] < 8000 ? 1 : 2;
    buckets[bucket].push_back(per_example[i]);
  }
  const auto score = [](const std::vector<double>& b) { return numpy_round2(100 * numpy_mean(b)); };
  return {score(buckets[0]), score(buckets[1]), score(buckets[2])};
}

}  // namespace kvs::longbench
