// The demo's synthetic long-context tasks: their LongBench-style names, the project's own prompt
// text, generation lengths, test-time shapes and generators. A prompt is
//   prefix + context + question block (the block holds "{input}"),
// which is the dataset2prompt.json template prefix + "{context}" + block; training sequences
// append further question blocks after an answer (training_data.h).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "demo/task_instance.h"

namespace kvs::demo {

enum class TaskKind { PassageRetrieval, KvRecall };

struct DemoTask {
  std::string name;            // dataset name, e.g. "demo_passage_retrieval"
  TaskKind kind;
  std::string metric;          // LongBench metric name: "retrieval_score" | "qa_f1_score"
  std::string prefix;          // the template text before {context}
  std::string question_block;  // the template text after {context}; contains {input}
  int max_new_tokens;
  TaskShape record_shape;      // the shape of the shipped records (1-2k token prompts)

  std::string prompt_template() const { return prefix + "{context}" + question_block; }
  std::string question_text(const std::string& input) const;  // question_block with the input
  TaskInstance generate(const std::vector<std::string>& lexicon, const TaskShape& shape,
                        std::mt19937_64& gen) const;
};

const std::vector<DemoTask>& demo_tasks();
const DemoTask& demo_task(const std::string& name);  // kvs::Error listing the names when unknown

// The fixed vocabulary every task draws from: independent of the data seed, so one tokenizer and
// model serve the records of any seed.
const std::vector<std::string>& demo_lexicon();

}  // namespace kvs::demo
