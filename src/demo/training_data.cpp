#include "demo/training_data.h"

#include "core/error.h"
#include "core/rng.h"

namespace kvs::demo {

namespace {

void append_answer(const tokenizer::Tokenizer& tok, const std::string& answer, TrainingSequence& seq) {
  std::vector<int32_t> ids = tok.encode(answer);
  ids.push_back(tok.eos_ids().front());
  for (int32_t id : ids) {
    seq.answer_positions.push_back(static_cast<int64_t>(seq.ids.size()));
    seq.ids.push_back(id);
  }
}

void append_text(const tokenizer::Tokenizer& tok, const std::string& text, TrainingSequence& seq) {
  const std::vector<int32_t> ids = tok.encode(text);
  seq.ids.insert(seq.ids.end(), ids.begin(), ids.end());
}

}  // namespace

TrainingSequence encode_training_sequence(const DemoTask& task, const TaskInstance& instance,
                                          const tokenizer::Tokenizer& tok) {
  TrainingSequence seq;
  seq.ids.push_back(tok.bos_id());
  append_text(tok, task.prefix + instance.context + task.question_text(instance.questions[0]), seq);
  append_answer(tok, instance.completions[0], seq);
  for (size_t q = 1; q < instance.questions.size(); ++q) {
    append_text(tok, task.question_text(instance.questions[q]), seq);
    append_answer(tok, instance.completions[q], seq);
  }
  return seq;
}

std::vector<CurriculumStage> default_curriculum() {
  return {
      {0.3, TaskShape{2, 6, 6}, TaskShape{4, 16, 6}},
      {0.6, TaskShape{4, 12, 6}, TaskShape{10, 40, 6}},
      {0.85, TaskShape{8, 25, 6}, TaskShape{25, 80, 6}},
      {1.0, TaskShape{20, 50, 6}, TaskShape{80, 200, 6}},
  };
}

size_t stage_index(const std::vector<CurriculumStage>& curriculum, double progress) {
  if (curriculum.empty()) throw Error("curriculum: no stages");
  for (size_t i = 0; i < curriculum.size(); ++i)
    if (progress < curriculum[i].until) return i;
  return curriculum.size() - 1;
}

TrainingSampler::TrainingSampler(const tokenizer::Tokenizer& tok,
                                 std::vector<CurriculumStage> curriculum, uint64_t seed,
                                 int64_t tokens_per_step, uint64_t passage_percent)
    : tok_(tok),
      curriculum_(std::move(curriculum)),
      gen_(seed),
      tokens_per_step_(tokens_per_step),
      passage_percent_(passage_percent) {
  if (tokens_per_step_ < 1) throw Error("training: tokens per step must be positive");
  if (passage_percent_ > 100) throw Error("training: passage share is a percentage (0-100)");
}

std::vector<TrainingSequence> TrainingSampler::next_batch(double progress) {
  const CurriculumStage& stage = curriculum_[stage_index(curriculum_, progress)];
  const DemoTask& passage = demo_task("demo_passage_retrieval");
  const DemoTask& kv = demo_task("demo_kv_recall");
  std::vector<TrainingSequence> batch;
  int64_t tokens = 0;
  while (batch.empty() || tokens < tokens_per_step_) {
    const bool is_passage = bounded_draw(gen_, 100) < passage_percent_;
    const DemoTask& task = is_passage ? passage : kv;
    const TaskInstance instance =
        task.generate(demo_lexicon(), is_passage ? stage.passage : stage.kv, gen_);
    batch.push_back(encode_training_sequence(task, instance, tok_));
    tokens += static_cast<int64_t>(batch.back().ids.size());
  }
  return batch;
}

std::vector<TrainingSequence> record_shaped_sequences(const DemoTask& task,
                                                      const tokenizer::Tokenizer& tok, int64_t count,
                                                      uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<TrainingSequence> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(
        encode_training_sequence(task, task.generate(demo_lexicon(), task.record_shape, gen), tok));
  return out;
}

}  // namespace kvs::demo
