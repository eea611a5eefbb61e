#include "demo/tokenizer_training.h"

#include <sentencepiece_trainer.h>

#include <fstream>
#include <random>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "demo/tasks.h"

namespace kvs::demo {

namespace {

class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return index_ >= lines_.size(); }
  void Next() override { ++index_; }
  const std::string& value() const override { return lines_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  size_t index_ = 0;
};

void append_lines(const std::string& text, std::vector<std::string>& lines) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

int64_t train_demo_tokenizer(const TokenizerTrainingOptions& options) {
  std::vector<std::string> lines;
  std::mt19937_64 gen(options.seed);
  for (const DemoTask& task : demo_tasks()) {
    for (int64_t i = 0; i < options.corpus_examples; ++i) {
      const TaskInstance instance = task.generate(demo_lexicon(), task.record_shape, gen);
      append_lines(task.prefix + instance.context + task.question_text(instance.questions[0]) +
                       " " + instance.answers[0],
                   lines);
    }
  }
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"character_coverage", "1.0"},
      {"byte_fallback", "true"},
      {"split_digits", "false"},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "true"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      {"num_threads", "1"},
      {"minloglevel", "2"},
      {"hard_vocab_limit", "true"},
  };
  LineIterator iterator(lines);
  std::string serialized;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &iterator, &serialized);
  if (!status.ok())
    throw error_at(options.model_path, "SentencePiece training failed: " + status.ToString());
  std::ofstream out(options.model_path, std::ios::binary | std::ios::trunc);
  out << serialized;
  if (!out) throw error_at(options.model_path, "cannot write the tokenizer model");
  return static_cast<int64_t>(lines.size());
}

}  // namespace kvs::demo
