#include "search/questions.h"

#include "core/error.h"
#include "core/strfmt.h"
#include "tokenizer/chat_template.h"

namespace kvs::search {

QuestionSet build_questions(const tokenizer::Tokenizer& tok, const longbench::Config& config,
                            const std::string& dataset,
                            const std::vector<longbench::Record>& records,
                            const std::vector<size_t>& indices,
                            const longbench::PromptOptions& prompt_options) {
  QuestionSet set;
  set.dataset = dataset;
  set.generation = longbench::generation_settings(config, dataset, tok);
  for (size_t index : indices) {
    if (index >= records.size())
      throw Error("question index " + std::to_string(index) + " outside the " +
                  std::to_string(records.size()) + " records of " + dataset);
    const longbench::Record& r = records[index];
    Question q;
    q.record_index = index;
    q.id = r.id;
    q.length = r.length;
    if (longbench::is_text_metric(longbench::dataset_info(dataset).metric)) {
      const int64_t prompt = config.prompt_tokens_for(dataset);
      const int64_t fed = set.generation.max_new_tokens;
      std::vector<int32_t> ids =
          tokenizer::build_prompt_ids(tok, r.context, tokenizer::ChatTemplate::None);
      if (static_cast<int64_t>(ids.size()) < prompt + fed)
        throw Error(
            strfmt("%s: text '%s' has %zu tokens; the dataset reads %lld (%lld prompt, %lld fed)",
                   dataset.c_str(), r.id.c_str(), ids.size(), static_cast<long long>(prompt + fed),
                   static_cast<long long>(prompt), static_cast<long long>(fed)));
      q.prompt_ids.assign(ids.begin(), ids.begin() + prompt);
      q.continuation_ids.assign(ids.begin() + prompt, ids.begin() + prompt + fed);
      set.questions.push_back(std::move(q));
      continue;
    }
    longbench::PromptOptions options = prompt_options;
    options.question_span = true;  // the ids are unchanged; the span is found beside them
    longbench::Prompt prompt = longbench::build_prompt(tok, config, dataset, r, options);
    q.prompt_ids = std::move(prompt.ids);
    q.question_span = prompt.question;
    q.answers = r.answers;
    if (r.all_classes) q.all_classes = *r.all_classes;
    set.questions.push_back(std::move(q));
  }
  return set;
}

namespace {

bool is_llama3(const model::ModelConfig& config) {
  return config.model_type == "llama" && config.vocab_size >= 128000;
}

}  // namespace

longbench::PromptOptions model_prompt_options(const model::ModelConfig& config, int64_t max_length,
                                              const std::string& chat_template,
                                              const std::string& model_arg) {
  longbench::PromptOptions o;
  if (max_length > 0) o.max_length = max_length;
  else if (config.model_type == "mistral") o.max_length = longbench::kMistralMaxLength;
  else if (is_llama3(config)) o.max_length = longbench::kLlama3MaxLength;
  // Llama-2's 4k context gets the reference's 3950; a longer-context Llama (SmolLM2: 8192, whose
  // RULER prompts are fitted to it) keeps prompts up to its own context.
  else if (config.max_position_embeddings > 4096) o.max_length = config.max_position_embeddings;
  else o.max_length = longbench::kLlama2MaxLength;
  const auto without_template =
      is_llama3(config) ? tokenizer::ChatTemplate::Llama3 : tokenizer::ChatTemplate::None;
  // Mistral keeps the reference's raw prompt even where its checkpoint carries an [INST] template.
  const bool rule_only = model_arg.empty() || config.model_type == "mistral";
  o.chat_template = chat_template == "auto" && rule_only
                        ? without_template
                        : tokenizer::resolve_chat_template(chat_template, model_arg, without_template);
  return o;
}

SplitData load_split_data(const std::string& longbench_dir, const std::string& dataset, uint64_t seed) {
  SplitData d;
  d.config = longbench::load_config(longbench_dir);
  d.records = longbench::load_dataset(longbench_dir, dataset);
  d.split = longbench::dataset_split(dataset, d.records.size(), seed);
  return d;
}

}  // namespace kvs::search
