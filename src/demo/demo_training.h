// `kvsearch demo train` end to end: a SentencePiece tokenizer trained on task text, the small
// Mistral trained on the curriculum, the checkpoint written in the Hugging Face layout
// (config.json, model.safetensors, tokenizer.model), then loaded back with Transformer::load and
// scored on the test split of each task with the full cache. Everything that defines the run and
// what it measured goes to a JSON log.
#pragma once

#include <string>
#include <vector>

#include "demo/evaluate.h"
#include "demo/model_init.h"
#include "demo/trainer.h"
#include "model/config.h"

namespace kvs::demo {

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
