// What every evaluation of one dataset on one model needs, loaded once and only when first asked
// for: the model's config, tokenizer and weights, the dataset's records and dev/test split, and
// the question sets built from them. `kvsearch run`, `replay` and the experiment jobs
// all evaluate through a Session and its Evaluator (evaluator.h), so the prompt rules,
// stop ids and split of a question are the same whichever command asks. Torch-free header.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "longbench/thinking.h"
#include "model/config.h"
#include "model/runtime.h"
#include "search/questions.h"

namespace kvs::model {
class Transformer;
}

namespace kvs::search {

class Evaluator;

struct SessionSettings {
  std::string model_dir;
  std::string longbench_dir;
  std::string dataset;
  uint64_t split_seed = 42;
  int64_t max_length = 0;              // prompt truncation; 0: by model type (questions.h)
  std::string chat_template = "auto";  // auto | none | a name (tokenizer/chat_template.h)
  // What the scorer sees of an answer: all of it, or what follows its thinking section
  // (longbench/thinking.h: reasoning models such as DeepSeek-R1-Distill and Qwen3).
  longbench::Thinking thinking = longbench::Thinking::Keep;
  model::LoadOptions load;
};

enum class SplitPart { Dev, Test };

class Session {
 public:
  explicit Session(SessionSettings settings);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionSettings& settings() const { return settings_; }
  // config.json alone: no weights are read.
  const model::ModelConfig& config();
  const tokenizer::Tokenizer& tokenizer();
  const model::Transformer& model();
  const SplitData& data();
  // The first `limit` questions of a split (0: all of them), in split order; built once.
  const QuestionSet& questions(SplitPart part, int64_t limit = 0);
  // The evaluator of this session's model and tokenizer (loads both).
  const Evaluator& evaluator();

 private:
  SessionSettings settings_;
  std::unique_ptr<model::ModelConfig> config_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::unique_ptr<model::Transformer> model_;
  std::unique_ptr<SplitData> data_;
  std::unique_ptr<Evaluator> evaluator_;
  std::map<std::pair<SplitPart, int64_t>, QuestionSet> questions_;
};

}  // namespace kvs::search
