// Training sequences for the demo model. A sequence is exactly the prompt the runner will see,
//   BOS + prompt(context, question 1), answer 1 + EOS,
// followed (training only) by further question blocks of the same context, each with its answer
// + EOS. The loss is taken on the answer tokens (and their EOS). A curriculum first teaches plain
// copying (copy sequences over a growing part of the lexicon), then asks the tasks on contexts
// that grow up to the shape of the shipped records.
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

// Copy sequences: BOS, words drawn from the first `lexicon_words` words of the lexicon, a newline,
// the same words again; the repeat is supervised like an answer. They teach the copying (induction)
// that both tasks are made of. Short copies over the whole lexicon first, then longer ones: with
// 64-wide heads the model learns to copy any of the 384 words in a few hundred steps this way
// (growing the vocabulary instead made each new word start over; data/demo/README.md).
struct CopyShape {
  uint64_t percent = 0;       // share of the stage's sequences
  int64_t lexicon_words = 0;  // words drawn from the lexicon's first lexicon_words
  int64_t min_words = 0;
  int64_t max_words = 0;
};

struct CurriculumStage {
  double until;       // the stage lasts until this fraction of the steps
  CopyShape copy;
  TaskShape passage;  // demo_passage_retrieval contexts
  TaskShape kv;       // demo_kv_recall contexts
};

// Copying 3-6, then up to 80 words over the whole lexicon (a fifth of the steps), then the tasks
// from a handful of items up to the records' shape (20 questions per context) with some copying
// kept in the mix.
std::vector<CurriculumStage> default_curriculum();

TrainingSequence make_copy_sequence(const CopyShape& shape, const tokenizer::Tokenizer& tok,
                                    std::mt19937_64& gen);

// The index of the stage that covers `progress` in [0, 1].
size_t stage_index(const std::vector<CurriculumStage>& curriculum, double progress);

// Instances of the records' shape (one question each) from their own stream, for monitoring.
std::vector<TrainingSequence> record_shaped_sequences(const DemoTask& task,
                                                      const tokenizer::Tokenizer& tok, int64_t count,
                                                      uint64_t seed);

// Draws training batches: sequences of the current stage until the batch holds tokens_per_step
// tokens (at least one sequence): copy sequences at the stage's share, of the rest
// passage_percent passage retrieval and the others kv recall.
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
