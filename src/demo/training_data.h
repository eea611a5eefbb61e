// Training sequences for the demo model. A sequence is exactly the prompt the runner will see,
//   BOS + prompt(context, question 1), answer 1 + EOS,
// followed (training only) by further question blocks of the same context, each with its answer
// + EOS. The loss is taken on the answer tokens (and their EOS) only. Contexts grow along a
// curriculum: short first, up to the shape of the shipped records at the end.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "demo/tasks.h"
#include "tokenizer/tokenizer.h"

namespace kvs::demo {

struct TrainingSequence {
  std::vector<int32_t> ids;
  std::vector<int64_t> answer_positions;  // i such that ids[i] is an answer token (predicted at i-1)
};

TrainingSequence encode_training_sequence(const DemoTask& task, const TaskInstance& instance,
                                          const tokenizer::Tokenizer& tok);

struct CurriculumStage {
  double until;       // the stage lasts until this fraction of the steps
  TaskShape passage;  // demo_passage_retrieval contexts
  TaskShape kv;       // demo_kv_recall contexts
};

// Four stages from a handful of items to about the records' shape, six questions per context.
std::vector<CurriculumStage> default_curriculum();

// The index of the stage that covers `progress` in [0, 1].
size_t stage_index(const std::vector<CurriculumStage>& curriculum, double progress);

// Draws training batches: sequences of the current stage until the batch holds tokens_per_step
// tokens (at least one sequence), passage_percent of them passage retrieval.
// Instances of the records' shape (one question each) from their own stream, for monitoring.
std::vector<TrainingSequence> record_shaped_sequences(const DemoTask& task,
                                                      const tokenizer::Tokenizer& tok, int64_t count,
                                                      uint64_t seed);

class TrainingSampler {
 public:
  TrainingSampler(const tokenizer::Tokenizer& tok, std::vector<CurriculumStage> curriculum,
                  uint64_t seed, int64_t tokens_per_step, uint64_t passage_percent);

  std::vector<TrainingSequence> next_batch(double progress);

 private:
  const tokenizer::Tokenizer& tok_;
  std::vector<CurriculumStage> curriculum_;
  std::mt19937_64 gen_;
  int64_t tokens_per_step_;
  uint64_t passage_percent_;
};

}  // namespace kvs::demo
