#include "longbench/prompt.h"

#include <algorithm>

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

namespace {

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

std::optional<TokenSpan> question_span(const tokenizer::Tokenizer& tok, const std::string& text,
                                       tokenizer::ChatTemplate chat_template,
                                       const std::string& answer_prefix,
                                       const std::string& question,
                                       const std::vector<int32_t>& ids) {
  if (question.empty()) return std::nullopt;
  const size_t qb = text.rfind(question);
  if (qb == std::string::npos) return std::nullopt;
  const size_t qe = qb + question.size();
  tokenizer::TextPiece piece = tokenizer::user_text_piece(chat_template);
  // Without a wrapper the answer prefix is encoded with the text (prompt_ids).
  if (chat_template == tokenizer::ChatTemplate::None) piece.after += answer_prefix;
  const std::vector<int32_t> whole = tok.encode(piece.before + text + piece.after);
  // The piece's place in ids: after the template's opening tokens (a few), the first match.
  size_t at = 0;
  while (at + whole.size() <= ids.size() &&
         !std::equal(whole.begin(), whole.end(), ids.begin() + static_cast<std::ptrdiff_t>(at)))
    ++at;
  if (at + whole.size() > ids.size())
    throw Error("question span: the prompt's text is not one piece of its ids (chat template " +
                tokenizer::chat_template_name(chat_template) + ")");
  const std::vector<int32_t> head = tok.encode(piece.before + text.substr(0, qb));
  const std::vector<int32_t> upto = tok.encode(piece.before + text.substr(0, qe));
  const size_t begin = common_prefix(head, whole);
  size_t end = common_prefix(upto, whole);
  if (end < upto.size())
    end = std::min(end + 1, whole.size());  // the token holding its last character
  return TokenSpan{static_cast<int64_t>(at + begin), static_cast<int64_t>(at + end)};
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
  if (options.question_span)
    prompt.question =
        question_span(tok, text, chat, record.answer_prefix, record.input, prompt.ids);
  prompt.text = text;
  return prompt;
}

}  // namespace kvs::longbench
