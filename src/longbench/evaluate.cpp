#include "longbench/evaluate.h"

#include <filesystem>
#include <map>

#include "core/error.h"
#include "longbench/jsonl.h"

namespace kvs::longbench {

std::vector<PredictionLine> load_predictions(const std::string& path) {
  std::vector<PredictionLine> lines;
  for_each_jsonl_object(path, [&](const nlohmann::json& object, const std::string& where) {
    PredictionLine line;
    line.pred = get_string(object, "pred", where);
    line.answers = get_string_list(object, "answers", where);
    line.all_classes = get_optional_string_list(object, "all_classes", where);
    if (object.contains("length")) line.length = get_integer(object, "length", where);
    lines.push_back(std::move(line));
  });
  return lines;
}

namespace {

DatasetResult evaluate_lines(const std::string& path, const std::string& dataset, Metric metric,
                             bool first_line_only, bool e, ScoreVariant variant,
                             Thinking thinking) {
  const auto lines = load_predictions(path);
  if (lines.empty()) throw error_at(path, "no predictions in the file");
  const auto& all_classes = lines.back().all_classes;
  if (metric == Metric::Classification && !all_classes)
    throw error_at(path + ":" + std::to_string(lines.size()),
                   "all_classes is null but " + dataset + " is scored by classification");
  const std::vector<std::string> no_classes;
  DatasetResult result;
  result.dataset = dataset;
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& line = lines[i];
    try {
      result.per_example.push_back(
          score_with_metric(metric, first_line_only, scored_text(line.pred, thinking), line.answers,
                            all_classes ? *all_classes : no_classes, variant));
    } catch (const Error& err) {
      throw error_at(path + ":" + std::to_string(i + 1), err.what());
    }
    if (e) {
      if (!line.length)
        throw error_at(path + ":" + std::to_string(i + 1),
                       "missing field 'length' (LongBench-E scoring needs it)");
      lengths.push_back(*line.length);
    }
  }
  result.score = dataset_score(result.per_example, metric);
  if (e) result.buckets = length_bucket_scores(result.per_example, lengths);
  return result;
}

}  // namespace

DatasetResult evaluate_file(const std::string& path, const std::string& dataset, bool e,
                            ScoreVariant variant, Thinking thinking) {
  const auto& info = dataset_info(dataset);
  return evaluate_lines(path, dataset, info.metric, info.first_line_only, e, variant, thinking);
}

DatasetResult evaluate_file_with_metric(const std::string& path, const std::string& name,
                                        Metric metric, bool e, ScoreVariant variant,
                                        Thinking thinking) {
  return evaluate_lines(path, name, metric, false, e, variant, thinking);
}

std::vector<DatasetResult> evaluate_directory(const std::string& dir, bool e, ScoreVariant variant,
                                              std::optional<Metric> metric, Thinking thinking) {
  if (!std::filesystem::is_directory(dir)) throw error_at(dir, "not a directory");
  std::map<std::string, std::string> files;  // dataset -> path
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 5 || name.compare(name.size() - 5, 5, "jsonl") != 0) continue;
    const std::string dataset = name.substr(0, name.find('.'));
    if (!metric) {
      try {
        dataset_info(dataset);
      } catch (const Error& err) {
        throw error_at(entry.path().string(), err.what());
      }
    }
    if (!files.emplace(dataset, entry.path().string()).second)
      throw error_at(dir, "two prediction files for " + dataset + ": " + files[dataset] + " and " +
                              entry.path().string());
  }
  if (files.empty()) throw error_at(dir, "no <dataset>.jsonl prediction files");
  std::vector<DatasetResult> results;
  const auto score = [&](const std::string& dataset, const std::string& path) {
    results.push_back(metric
                          ? evaluate_file_with_metric(path, dataset, *metric, e, variant, thinking)
                          : evaluate_file(path, dataset, e, variant, thinking));
  };
  for (const auto& info : english_datasets()) {
    const auto it = files.find(info.name);
    if (it != files.end()) score(info.name, it->second);
  }
  for (const auto& [dataset, path] : files)
    if (!is_english_dataset(dataset)) score(dataset, path);
  return results;
}

}  // namespace kvs::longbench
