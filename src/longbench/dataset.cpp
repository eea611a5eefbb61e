#include "longbench/dataset.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "core/error.h"
#include "longbench/jsonl.h"

namespace kvs::longbench {

const std::vector<DatasetInfo>& english_datasets() {
  // name, metric, first line only, skips chat template, has _e, official count, dev size
  static const std::vector<DatasetInfo> datasets = {
      {"narrativeqa", Metric::QaF1, false, false, false, 200, 100},
      {"qasper", Metric::QaF1, false, false, true, 200, 100},
      {"multifieldqa_en", Metric::QaF1, false, false, true, 150, 100},
      {"hotpotqa", Metric::QaF1, false, false, true, 200, 100},
      {"2wikimqa", Metric::QaF1, false, false, true, 200, 100},
      {"musique", Metric::QaF1, false, false, false, 200, 100},
      {"gov_report", Metric::RougeL, false, false, true, 200, 100},
      {"qmsum", Metric::RougeL, false, false, false, 200, 100},
      {"multi_news", Metric::RougeL, false, false, true, 200, 100},
      {"trec", Metric::Classification, true, true, true, 200, 100},
      {"triviaqa", Metric::QaF1, true, true, true, 200, 100},
      {"samsum", Metric::RougeL, true, true, true, 200, 100},
      {"passage_count", Metric::Count, false, false, true, 200, 100},
      {"passage_retrieval_en", Metric::Retrieval, false, false, true, 200, 100},
      {"lcc", Metric::CodeSim, false, true, true, 500, 250},
      {"repobench-p", Metric::CodeSim, false, true, true, 500, 250},
  };
  return datasets;
}

bool is_english_dataset(const std::string& name) {
  for (const auto& d : english_datasets())
    if (d.name == name) return true;
  return false;
}

namespace {

// Extra datasets by name; std::map keeps references stable as entries are added.
std::map<std::string, DatasetInfo>& registered_datasets() {
  static std::map<std::string, DatasetInfo> registered;
  return registered;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

const DatasetInfo& dataset_info(const std::string& name) {
  for (const auto& d : english_datasets())
    if (d.name == name) return d;
  std::string names;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const auto it = registered_datasets().find(name);
    if (it != registered_datasets().end()) return it->second;
    for (const auto& d : english_datasets()) names += (names.empty() ? "" : ", ") + d.name;
    for (const auto& [extra, info] : registered_datasets()) names += ", " + extra;
  }
  throw Error("unknown LongBench dataset '" + name + "' (expected one of: " + names + ")");
}

void register_dataset(const DatasetInfo& info) {
  if (is_english_dataset(info.name))
    throw Error("dataset '" + info.name + "' is an official LongBench dataset; it cannot be redefined");
  std::lock_guard<std::mutex> lock(registry_mutex());
  const auto [it, added] = registered_datasets().emplace(info.name, info);
  if (!added && it->second.metric != info.metric)
    throw Error("dataset '" + info.name + "' is already registered with " + metric_name(it->second.metric));
}

std::string metric_name(Metric metric) {
  switch (metric) {
    case Metric::QaF1:
      return "qa_f1_score";
    case Metric::RougeL:
      return "rouge_score";
    case Metric::Classification:
      return "classification_score";
    case Metric::Retrieval:
      return "retrieval_score";
    case Metric::Count:
      return "count_score";
    case Metric::CodeSim:
      return "code_sim_score";
    case Metric::StringMatchAll:
      return "string_match_all";
    case Metric::StringMatchPart:
      return "string_match_part";
    case Metric::BoxedAnswer:
      return "boxed_answer";
    case Metric::LastNumber:
      return "last_number";
    case Metric::Perplexity:
      return "perplexity";
    case Metric::Fidelity:
      return "fidelity";
  }
  return "?";
}

bool is_text_metric(Metric metric) {
  return metric == Metric::Perplexity || metric == Metric::Fidelity;
}

Metric metric_from_name(const std::string& name) {
  std::string names;
  for (Metric m : {Metric::QaF1, Metric::RougeL, Metric::Classification, Metric::Retrieval,
                   Metric::Count, Metric::CodeSim, Metric::StringMatchAll, Metric::StringMatchPart,
                   Metric::BoxedAnswer, Metric::LastNumber, Metric::Perplexity, Metric::Fidelity}) {
    if (metric_name(m) == name) return m;
    names += (names.empty() ? "" : ", ") + metric_name(m);
  }
  throw Error("unknown metric '" + name + "' (expected one of: " + names + ")");
}

std::string dataset_path(const std::string& longbench_dir, const std::string& name, bool e) {
  return (std::filesystem::path(longbench_dir) / "data" / (name + (e ? "_e" : "") + ".jsonl"))
      .string();
}

std::vector<Record> load_records(const std::string& path) {
  std::vector<Record> records;
  for_each_jsonl_object(path, [&](const nlohmann::json& object, const std::string& where) {
    Record r;
    r.input = get_string(object, "input", where);
    r.context = get_string(object, "context", where);
    r.answers = get_string_list(object, "answers", where);
    if (r.answers.empty()) throw error_at(where, "field 'answers' is an empty list");
    r.length = get_integer(object, "length", where);
    if (r.length < 0) throw error_at(where, "field 'length' must not be negative");
    r.dataset = get_string(object, "dataset", where);
    r.language = get_string(object, "language", where);
    r.all_classes = get_optional_string_list(object, "all_classes", where);
    r.id = get_string(object, "_id", where);
    if (object.contains("answer_prefix")) r.answer_prefix = get_string(object, "answer_prefix", where);
    records.push_back(std::move(r));
  });
  return records;
}

std::vector<Record> load_dataset(const std::string& longbench_dir, const std::string& name,
                                 bool e) {
  const auto& info = dataset_info(name);
  if (e && !info.has_e) throw Error("LongBench-E has no dataset '" + name + "'");
  return load_records(dataset_path(longbench_dir, name, e));
}

}  // namespace kvs::longbench
