// What a demo training run is asked for: the small Mistral's shape and the training options, as
// plain structs (torch-free, so the CLI that fills them needs no LibTorch headers).
#pragma once

#include <cstdint>
#include <vector>

#include "demo/training_data.h"

namespace kvs::demo {

// head_dim is set on its own, as Mistral's config allows: a head must be wide enough to carry the
// token it copies. With 32-wide heads a 128-wide model never learned to copy over the 384-word
// lexicon; with 64-wide heads it did in a few hundred steps (data/demo/README.md). rope_theta is
// Mistral-7B-Instruct-v0.2's: the slowest rotations stay nearly still across a 2k-token prompt,
// so a head can match content at any distance.
struct ModelShape {
  int64_t layers = 2;
  int64_t hidden = 128;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t head_dim = 64;
  int64_t intermediate = 384;
  double rope_theta = 1e6;
  int64_t max_positions = 8192;
};

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

}  // namespace kvs::demo
