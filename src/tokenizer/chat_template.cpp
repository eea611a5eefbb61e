#include "tokenizer/chat_template.h"

#include "core/error.h"

namespace kvs::tokenizer {

ChatTemplate parse_chat_template(const std::string& name) {
  if (name == "none") return ChatTemplate::None;
  if (name == "mistral") return ChatTemplate::Mistral;
  throw Error("unknown chat template '" + name + "' (expected none or mistral)");
}

std::string chat_template_name(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::None:
      return "none";
    case ChatTemplate::Mistral:
      return "mistral";
  }
  return "?";
}

std::vector<int32_t> build_prompt_ids(const Tokenizer& tokenizer, const std::string& user_text,
                                      ChatTemplate chat_template) {
  const std::string text =
      chat_template == ChatTemplate::Mistral ? "[INST] " + user_text + " [/INST]" : user_text;
  std::vector<int32_t> ids{tokenizer.bos_id()};
  const auto body = tokenizer.encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

}  // namespace kvs::tokenizer
