// The 16 English LongBench (v1) datasets and their records. A LongBench directory is laid out as
// the official release: <dir>/data/<name>.jsonl (and <name>_e.jsonl for LongBench-E) and
// <dir>/config/{dataset2prompt,dataset2maxlen}.json (see config.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvs::longbench {

// StringMatchAll / StringMatchPart are RULER's (metrics.h): they score an example against all its
// references at once rather than taking the best answer. BoxedAnswer and LastNumber score math
// and reasoning answers (metrics.h; kvsearch data math). Perplexity and Fidelity are the text
// datasets' (kvsearch data text): no answer is scored; the evaluator feeds each text's tokens
// under every policy and scores the policy against the full cache (search/text_evaluation.h).
enum class Metric {
  QaF1,
  RougeL,
  Classification,
  Retrieval,
  Count,
  CodeSim,
  StringMatchAll,
  StringMatchPart,
  BoxedAnswer,
  LastNumber,
  Perplexity,
  Fidelity
};

// Perplexity and Fidelity: a text is fed, not an answer scored.
bool is_text_metric(Metric metric);

struct DatasetInfo {
  std::string name;        // official name, e.g. "passage_retrieval_en"
  Metric metric;
  bool first_line_only;    // the official scorer keeps only the first line (trec, triviaqa, samsum)
  bool skips_chat_template;  // the official skip list: no chat template even where a model has one
  bool has_e;              // a LongBench-E file <name>_e.jsonl exists
  size_t official_count;   // records in the official data/<name>.jsonl
  size_t dev_size;         // questions in the development split (split.h)
};

// The 16 datasets in the official order (pred.py's list), the order of every report.
const std::vector<DatasetInfo>& english_datasets();

// The 16 English datasets, then any registered extra dataset (register_dataset). Throws
// kvs::Error naming the unknown dataset and listing the valid names.
const DatasetInfo& dataset_info(const std::string& name);

// Adds a dataset beyond the official ones (a LongBench directory's config/dataset2metric.json,
// see config.h; e.g. RULER's generated tasks): scored with `info.metric`, no first-line
// rule, no LongBench-E file. Registering the same name again with the same metric is a no-op; an
// official name or a different metric is an error.
void register_dataset(const DatasetInfo& info);
bool is_english_dataset(const std::string& name);

std::string metric_name(Metric metric);  // "qa_f1_score", "rouge_score", ... (metrics.py names)
Metric metric_from_name(const std::string& name);  // the inverse; kvs::Error listing the names

// One line of a LongBench data file, every field checked on load.
struct Record {
  std::string input;    // the question; may be empty
  std::string context;  // the long document
  std::vector<std::string> answers;
  int64_t length = 0;   // words, as published; LongBench-E buckets use it
  std::string dataset;
  std::string language;
  std::optional<std::vector<std::string>> all_classes;  // null except for classification
  std::string id;       // "_id"
  std::string answer_prefix;  // RULER: the text the model continues from, after the chat wrapper
};

// <dir>/data/<name>.jsonl, or <name>_e.jsonl when `e`.
std::string dataset_path(const std::string& longbench_dir, const std::string& name, bool e = false);

// Loads and validates every record of a data file; errors name the file, line and field.
std::vector<Record> load_records(const std::string& path);

// load_records(dataset_path(...)) after checking the dataset name (and that it has an _e file).
std::vector<Record> load_dataset(const std::string& longbench_dir, const std::string& name,
                                 bool e = false);

}  // namespace kvs::longbench
