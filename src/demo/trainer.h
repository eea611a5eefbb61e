// Training the demo model: AdamW (decoupled weight decay on the matrices only), linear warm-up
// then cosine decay, gradient clipping, cross-entropy on answer tokens (plus an optional
// auxiliary next-token loss on the rest), a curriculum of context
// lengths (training_data.h), a progress bar, and a periodic teacher-forced check on fresh
// record-shaped examples. Seeded: the same options give the same run (up to the floating-point
// reduction order of the thread count).
#pragma once

#include <cstdint>
#include <vector>

#include "demo/training_data.h"
#include "model/config.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace kvs::demo {

struct TrainOptions {
  int64_t steps = 7500;
  uint64_t seed = 1;
  int64_t tokens_per_step = 2048;
  double learning_rate = 3e-3;
  double final_lr_ratio = 0.1;   // cosine decay ends at learning_rate * final_lr_ratio
  int64_t warmup_steps = 100;
  double weight_decay = 0.05;
  double grad_clip = 1.0;
  uint64_t passage_percent = 70;  // share of passage-retrieval sequences; the rest kv recall
  // Weight of an auxiliary next-token loss on the non-answer tokens (0: answer tokens only). The
  // contexts repeat spans (near-duplicates, copied questions), so it teaches copying early.
  double context_loss_weight = 1.0;
  std::vector<CurriculumStage> curriculum = default_curriculum();
  int64_t log_every = 25;         // steps per recorded mean loss
  int64_t check_every = 250;      // steps between teacher-forced checks (0: never)
  int64_t check_examples = 24;    // per task
};

struct LossPoint {
  int64_t step;   // the last step of the averaged window
  int64_t stage;  // curriculum stage
  double loss;    // mean answer-token cross-entropy over the window (without the auxiliary loss)
};

struct CheckPoint {
  int64_t step;
  double passage_exact;  // % of passage examples whose whole answer is the argmax, teacher-forced
  double kv_exact;
};

struct TrainResult {
  model::Weights weights;  // detached float32
  std::vector<LossPoint> losses;
  std::vector<CheckPoint> checks;
  double seconds = 0;
  int64_t tokens_seen = 0;
};

TrainResult train_demo_model(const model::ModelConfig& config, const tokenizer::Tokenizer& tok,
                             const TrainOptions& options);

}  // namespace kvs::demo
