#include "demo/evaluate.h"

#include <chrono>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "longbench/prompt.h"
#include "longbench/scorer.h"
#include "longbench/split.h"
#include "model/generate.h"

namespace kvs::demo {

TaskScore evaluate_full_cache(const model::Transformer& model, const tokenizer::Tokenizer& tok,
                              const DemoTask& task, const EvalOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<longbench::Record> records =
      longbench::load_records(longbench::dataset_path(options.longbench_dir, task.name));
  const longbench::Split split = longbench::make_split(records.size(), options.dev_size,
                                                       options.split_seed);
  std::vector<size_t> indices = options.test_split ? split.test : split.dev;
  if (options.limit > 0 && static_cast<size_t>(options.limit) < indices.size())
    indices.resize(static_cast<size_t>(options.limit));
  if (indices.empty()) throw Error("demo eval: the split of " + task.name + " is empty");

  // The directory's own config: its templates, and dataset2metric.json registers the task.
  const longbench::Config config = longbench::load_config(options.longbench_dir);
  model::GreedyOptions greedy;
  greedy.max_new_tokens = task.max_new_tokens;
  greedy.stop_ids.insert(tok.eos_ids().begin(), tok.eos_ids().end());

  TaskScore score;
  score.dataset = task.name;
  score.split = options.test_split ? "test" : "dev";
  std::vector<double> per_example;
  int64_t prompt_tokens = 0;
  Progress progress("eval " + task.name, static_cast<int64_t>(indices.size()), "q");
  for (size_t index : indices) {
    const longbench::Record& record = records[index];
    const longbench::Prompt prompt = longbench::build_prompt(tok, config, task.name, record);
    prompt_tokens += static_cast<int64_t>(prompt.ids.size());
    model::PrefillOptions prefill;
    prefill.decode_capacity = task.max_new_tokens;
    model::PrefillResult result = model.prefill(prompt.ids, prefill);
    const model::GreedyResult out = model::greedy_decode(model, result.cache, result.logits, greedy);
    const std::string prediction = tok.decode(out.tokens.front());
    per_example.push_back(longbench::score_example(task.name, prediction, record.answers, {}));
    progress.set_status(strfmt("score %.1f", longbench::dataset_score(per_example)));
    progress.advance();
  }
  progress.finish();
  score.questions = static_cast<int64_t>(per_example.size());
  score.score = longbench::dataset_score(per_example);
  score.mean_prompt_tokens = static_cast<double>(prompt_tokens) / static_cast<double>(indices.size());
  score.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return score;
}

}  // namespace kvs::demo
