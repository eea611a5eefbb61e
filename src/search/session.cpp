#include "search/session.h"

#include <filesystem>

#include "core/error.h"
#include "model/transformer.h"
#include "search/evaluator.h"

namespace kvs::search {

Session::Session(SessionSettings settings) : settings_(std::move(settings)) {}

Session::~Session() = default;

const model::ModelConfig& Session::config() {
  if (!config_)
    config_ = std::make_unique<model::ModelConfig>(
        model::load_model_config(settings_.model_dir));
  return *config_;
}

const tokenizer::Tokenizer& Session::tokenizer() {
  if (!tokenizer_) tokenizer_ = tokenizer::load_tokenizer(settings_.model_dir);
  return *tokenizer_;
}

const model::Transformer& Session::model() {
  if (!model_)
    model_ = std::make_unique<model::Transformer>(model::Transformer::load(settings_.model_dir, settings_.load));
  return *model_;
}

const SplitData& Session::data() {
  if (!data_)
    data_ = std::make_unique<SplitData>(
        load_split_data(settings_.longbench_dir, settings_.dataset, settings_.split_seed));
  return *data_;
}

const QuestionSet& Session::questions(SplitPart part, int64_t limit) {
  const auto key = std::make_pair(part, limit > 0 ? limit : int64_t{0});
  auto found = questions_.find(key);
  if (found != questions_.end()) return found->second;
  const SplitData& d = data();
  std::vector<size_t> indices = part == SplitPart::Dev ? d.split.dev : d.split.test;
  if (indices.empty())
    throw Error("dataset '" + settings_.dataset + "' has no " +
                (part == SplitPart::Dev ? "dev" : "test") + " questions (of " +
                std::to_string(d.records.size()) +
                "; a declared set's dev count is in config/dataset2dev.json)");
  if (limit > 0 && static_cast<size_t>(limit) < indices.size()) indices.resize(static_cast<size_t>(limit));
  QuestionSet set =
      build_questions(tokenizer(), d.config, settings_.dataset, d.records, indices,
                      model_prompt_options(config(), settings_.max_length, settings_.chat_template,
                                           settings_.model_dir));
  return questions_.emplace(key, std::move(set)).first->second;
}

const Evaluator& Session::evaluator() {
  if (!evaluator_) evaluator_ = std::make_unique<Evaluator>(model(), tokenizer());
  return *evaluator_;
}

}  // namespace kvs::search
