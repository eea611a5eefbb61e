// `kvsearch demo train` end to end: a SentencePiece tokenizer trained on task text, the small
// Mistral trained on the curriculum, the checkpoint written in the Hugging Face layout
// (config.json, model.safetensors, tokenizer.model), then scored on the test split of each task with
// the full cache, through the evaluator `kvsearch run` uses (search/session.h). Everything that
// defines the run and what it measured goes to a JSON log.
#pragma once

#include <string>
#include <vector>

#include "demo/train_options.h"
#include "model/config.h"

namespace kvs::demo {

// One task's full-cache score: round(100 * mean, 2) over the first questions of a split.
struct TaskScore {
  std::string dataset;
  std::string split;
  int64_t questions = 0;
  double score = 0;  // 0-100
  double seconds = 0;
  double mean_prompt_tokens = 0;
  std::vector<std::string> predictions;  // per question, in split order
};

// The full-cache score of `dataset` on the first `limit` (0: all) test questions of `longbench_dir`
// (split seed 42), by the model in `model_dir` on the CPU in float32: the questions, stop ids and
// decode of `kvsearch run` (search::Session, search::Evaluator).
TaskScore full_cache_test_score(const std::string& model_dir, const std::string& longbench_dir,
                                const std::string& dataset, int64_t limit);

struct DemoTrainOptions {
  std::string data_dir;  // `kvsearch demo data` output, scored after training
  std::string out_dir;   // the checkpoint
  std::string log_path;  // the JSON log (default <out_dir>/train_log.json)
  int64_t vocab_size = 2000;
  ModelShape shape;
  TrainOptions train;
  std::string dtype = "f32";  // stored dtype: f32 | f16 | bf16
  int64_t eval_limit = 0;     // questions per task on the test split (0: all)
};

struct DemoTrainReport {
  model::ModelConfig config;
  int64_t parameters = 0;
  int64_t checkpoint_bytes = 0;
  double train_seconds = 0;
  double total_seconds = 0;
  double final_loss = 0;
  std::vector<TaskScore> scores;
  std::string log_path;
};

DemoTrainReport run_demo_training(const DemoTrainOptions& options);

}  // namespace kvs::demo
