#include "tokenizer/chat_template.h"

#include "core/error.h"

namespace kvs::tokenizer {

namespace {

int32_t required_special(const Tokenizer& tokenizer, const std::string& text) {
  const auto id = tokenizer.special_token_id(text);
  if (!id)
    throw Error("chat template llama3 needs the special token " + text + ", which this " +
                tokenizer.kind() + " tokenizer does not have");
  return *id;
}

void append(std::vector<int32_t>& ids, const std::vector<int32_t>& more) {
  ids.insert(ids.end(), more.begin(), more.end());
}

std::vector<int32_t> llama3_prompt(const Tokenizer& tokenizer, const std::string& user_text) {
  const int32_t start_header = required_special(tokenizer, "<|start_header_id|>");
  const int32_t end_header = required_special(tokenizer, "<|end_header_id|>");
  const int32_t end_of_turn = required_special(tokenizer, "<|eot_id|>");
  auto header = [&](std::vector<int32_t>& ids, const std::string& role) {
    ids.push_back(start_header);
    append(ids, tokenizer.encode(role));
    ids.push_back(end_header);
    append(ids, tokenizer.encode("\n\n"));
  };
  std::vector<int32_t> ids{tokenizer.bos_id()};
  header(ids, "user");
  append(ids, tokenizer.encode(user_text));
  ids.push_back(end_of_turn);
  header(ids, "assistant");
  return ids;
}

}  // namespace

ChatTemplate parse_chat_template(const std::string& name) {
  if (name == "none") return ChatTemplate::None;
  if (name == "mistral") return ChatTemplate::Mistral;
  if (name == "llama3") return ChatTemplate::Llama3;
  throw Error("unknown chat template '" + name + "' (expected none, mistral or llama3)");
}

std::string chat_template_name(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::None:
      return "none";
    case ChatTemplate::Mistral:
      return "mistral";
    case ChatTemplate::Llama3:
      return "llama3";
  }
  return "?";
}

std::vector<int32_t> build_prompt_ids(const Tokenizer& tokenizer, const std::string& user_text,
                                      ChatTemplate chat_template) {
  if (chat_template == ChatTemplate::Llama3) return llama3_prompt(tokenizer, user_text);
  const std::string text =
      chat_template == ChatTemplate::Mistral ? "[INST] " + user_text + " [/INST]" : user_text;
  std::vector<int32_t> ids{tokenizer.bos_id()};
  append(ids, tokenizer.encode(text));
  return ids;
}

}  // namespace kvs::tokenizer
