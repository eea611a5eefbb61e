// Scores a demo task with the real runner and the full cache: each record of the chosen split is
// prompted as the LongBench pipeline does (longbench::build_prompt: BOS + the filled template),
// prefilled by Transformer::prefill, decoded by greedy_decode until EOS or max_new_tokens, and
// scored with the task's LongBench metric (max over the answers), as round(100 * mean, 2).
#pragma once

#include <cstdint>
#include <string>

#include "demo/tasks.h"
#include "model/transformer.h"
#include "tokenizer/tokenizer.h"

namespace kvs::demo {

struct EvalOptions {
  std::string longbench_dir;  // written by `kvsearch demo data`
  bool test_split = true;     // else the development split
  uint64_t split_seed = 42;
  size_t dev_size = 100;
  int64_t limit = 0;          // at most this many questions (0: all)
};

struct TaskScore {
  std::string dataset;
  std::string split;
  int64_t questions = 0;
  double score = 0;  // 0-100
  double seconds = 0;
  double mean_prompt_tokens = 0;
};

TaskScore evaluate_full_cache(const model::Transformer& model, const tokenizer::Tokenizer& tok,
                              const DemoTask& task, const EvalOptions& options);

}  // namespace kvs::demo
