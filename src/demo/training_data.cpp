#include "demo/training_data.h"

#include "core/error.h"
#include "core/rng.h"
#include "demo/words.h"

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

TrainingSequence make_copy_sequence(const CopyShape& shape, const tokenizer::Tokenizer& tok,
                                    std::mt19937_64& gen) {
  const std::vector<std::string>& lexicon = demo_lexicon();
  if (shape.lexicon_words < 1 || shape.lexicon_words > static_cast<int64_t>(lexicon.size()) ||
      shape.min_words < 1 || shape.max_words < shape.min_words)
    throw Error("copy sequences: need 1 <= lexicon words <= " + std::to_string(lexicon.size()) +
                " and 1 <= min words <= max words");
  const std::vector<std::string> part(lexicon.begin(), lexicon.begin() + shape.lexicon_words);
  const std::vector<std::string> words =
      draw_words(part, static_cast<size_t>(draw_between(gen, shape.min_words, shape.max_words)), gen);
  const std::string text = join_words(words, 0, words.size());
  TrainingSequence seq;
  seq.ids.push_back(tok.bos_id());
  append_text(tok, text + "\n", seq);
  append_answer(tok, text, seq);
  return seq;
}

std::vector<CurriculumStage> default_curriculum() {
  const TaskShape no_task{1, 1, 1};  // unused: the copy-only stages draw no task
  const int64_t all = static_cast<int64_t>(demo_lexicon().size());
  const int64_t questions = 20;
  return {
      {0.04, CopyShape{100, all, 3, 6}, no_task, no_task},
      {0.08, CopyShape{100, all, 6, 12}, no_task, no_task},
      {0.12, CopyShape{100, all, 10, 25}, no_task, no_task},
      {0.16, CopyShape{100, all, 20, 50}, no_task, no_task},
      {0.20, CopyShape{100, all, 20, 80}, no_task, no_task},
      {0.32, CopyShape{30, all, 20, 120}, TaskShape{2, 6, questions}, TaskShape{4, 16, questions}},
      {0.48, CopyShape{30, all, 20, 120}, TaskShape{6, 15, questions}, TaskShape{10, 40, questions}},
      {0.68, CopyShape{20, all, 20, 120}, TaskShape{15, 30, questions}, TaskShape{40, 100, questions}},
      {1.0, CopyShape{10, all, 20, 120}, TaskShape{25, 50, questions}, TaskShape{100, 200, questions}},
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
    if (bounded_draw(gen_, 100) < stage.copy.percent) {
      batch.push_back(make_copy_sequence(stage.copy, tok_, gen_));
      tokens += static_cast<int64_t>(batch.back().ids.size());
      continue;
    }
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
