#include "demo/longbench_writer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "core/strfmt.h"
#include "demo/tasks.h"

namespace kvs::demo {

namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw error_at(path.string(), "cannot write the file");
}

// Each task draws from its own stream, so adding a task never changes another task's records.
uint64_t task_seed(uint64_t seed, size_t task_index) {
  return seed * 1000003ULL + 7919ULL * (task_index + 1);
}

}  // namespace

int64_t word_count(const std::string& text) {
  int64_t words = 0;
  bool in_word = false;
  for (unsigned char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

std::vector<DemoDataSummary> write_demo_longbench(const DemoDataOptions& options) {
  if (options.count < 1) throw Error("demo data: --count must be positive");
  const fs::path root(options.out_dir);
  fs::create_directories(root / "data");
  fs::create_directories(root / "config");
  nlohmann::ordered_json prompts = nlohmann::ordered_json::object();
  nlohmann::ordered_json maxlen = nlohmann::ordered_json::object();
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  std::vector<DemoDataSummary> summaries;
  const auto& tasks = demo_tasks();
  for (size_t t = 0; t < tasks.size(); ++t) {
    const DemoTask& task = tasks[t];
    prompts[task.name] = task.prompt_template();
    maxlen[task.name] = task.max_new_tokens;
    metrics[task.name] = task.metric;
    std::mt19937_64 gen(task_seed(options.seed, t));
    DemoDataSummary summary{task.name, (root / "data" / (task.name + ".jsonl")).string(), 0,
                            INT64_MAX, 0};
    std::string lines;
    for (int64_t i = 0; i < options.count; ++i) {
      const TaskInstance instance = task.generate(demo_lexicon(), task.record_shape, gen);
      nlohmann::ordered_json record;
      record["input"] = instance.questions.front();
      record["context"] = instance.context;
      record["answers"] = {instance.answers.front()};
      const int64_t words = word_count(instance.context);
      record["length"] = words;
      record["dataset"] = task.name;
      record["language"] = "en";
      record["all_classes"] = nullptr;
      record["_id"] = strfmt("%016llx", static_cast<unsigned long long>(gen()));
      lines += record.dump(-1, ' ', /*ensure_ascii=*/false) + "\n";
      summary.min_words = std::min(summary.min_words, words);
      summary.max_words = std::max(summary.max_words, words);
      ++summary.records;
    }
    write_text(summary.path, lines);
    summaries.push_back(summary);
  }
  write_text(root / "config" / "dataset2prompt.json", prompts.dump(2) + "\n");
  write_text(root / "config" / "dataset2maxlen.json", maxlen.dump(2) + "\n");
  write_text(root / "config" / "dataset2metric.json", metrics.dump(2) + "\n");
  return summaries;
}

}  // namespace kvs::demo
