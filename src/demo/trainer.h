// Training the demo model: AdamW (decoupled weight decay on the matrices only), linear warm-up
// then cosine decay, gradient clipping, cross-entropy on answer tokens (plus an optional
// auxiliary next-token loss on the rest), a curriculum of context
// lengths (training_data.h), a progress bar, and a periodic teacher-forced check on fresh
// record-shaped examples. Seeded: the same options give the same run (up to the floating-point
// reduction order of the thread count).
#pragma once

#include <cstdint>
#include <vector>

#include "demo/train_options.h"
#include "demo/training_data.h"
#include "model/config.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

namespace kvs::demo {

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
