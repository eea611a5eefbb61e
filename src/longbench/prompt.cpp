#include "longbench/prompt.h"

#include "core/error.h"
#include "longbench/format.h"

namespace kvs::longbench {

std::map<std::string, std::string> template_fields_of(const Record& record) {
  return {{"context", record.context},  {"input", record.input},
          {"dataset", record.dataset},  {"language", record.language},
          {"_id", record.id},           {"length", std::to_string(record.length)}};
}

std::string fill_prompt(const Config& config, const std::string& dataset, const Record& record) {
  return format_template(config.prompt_template(dataset), template_fields_of(record),
                         "dataset2prompt.json[" + dataset + "]");
}

std::string truncate_middle(const tokenizer::Tokenizer& tok, const std::string& text,
                            int64_t max_length, size_t* untruncated_length) {
  if (max_length < 2)
    throw Error("prompt max length must be at least 2 tokens (got " + std::to_string(max_length) +
                ")");
  const auto ids = tokenizer::build_prompt_ids(tok, text, tokenizer::ChatTemplate::None);
  if (untruncated_length) *untruncated_length = ids.size();
  if (static_cast<int64_t>(ids.size()) <= max_length) return text;
  const auto half = static_cast<size_t>(max_length / 2);
  const std::vector<int32_t> head(ids.begin(), ids.begin() + half);
  const std::vector<int32_t> tail(ids.end() - half, ids.end());
  return tok.decode(head, /*skip_special=*/true) + tok.decode(tail, /*skip_special=*/true);
}

bool applies_chat_template(const std::string& dataset, tokenizer::ChatTemplate chat_template) {
  return chat_template != tokenizer::ChatTemplate::None && !dataset_info(dataset).skips_chat_template;
}

std::vector<int32_t> prompt_ids(const tokenizer::Tokenizer& tok, const std::string& text,
                                tokenizer::ChatTemplate chat_template,
                                const std::string& answer_prefix) {
  if (chat_template == tokenizer::ChatTemplate::None)
    return tokenizer::build_prompt_ids(tok, text + answer_prefix, chat_template);
  auto ids = tokenizer::build_prompt_ids(tok, text, chat_template);
  if (!answer_prefix.empty()) {
    const auto prefix = tok.encode(answer_prefix);
    ids.insert(ids.end(), prefix.begin(), prefix.end());
  }
  return ids;
}

Prompt build_prompt(const tokenizer::Tokenizer& tok, const Config& config,
                    const std::string& dataset, const Record& record,
                    const PromptOptions& options) {
  Prompt prompt;
  const std::string filled = fill_prompt(config, dataset, record);
  const std::string text =
      truncate_middle(tok, filled, options.max_length, &prompt.untruncated_length);
  prompt.truncated = static_cast<int64_t>(prompt.untruncated_length) > options.max_length;
  const auto declared = config.declared_chat_template(dataset);
  const auto chat = declared ? *declared
                    : applies_chat_template(dataset, options.chat_template)
                        ? options.chat_template
                        : tokenizer::ChatTemplate::None;
  prompt.ids = prompt_ids(tok, text, chat, record.answer_prefix);
  prompt.text = text;
  return prompt;
}

}  // namespace kvs::longbench
