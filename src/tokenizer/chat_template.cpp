#include "tokenizer/chat_template.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/gguf.h"

namespace kvs::tokenizer {

namespace {

int32_t required_special(const Tokenizer& tokenizer, const std::string& text,
                         ChatTemplate chat_template) {
  const auto id = tokenizer.special_token_id(text);
  if (!id)
    throw Error("chat template " + chat_template_name(chat_template) + " needs the special token " +
                text + ", which this " + tokenizer.kind() + " tokenizer does not have");
  return *id;
}

std::vector<int32_t> prompt_start(const Tokenizer& tokenizer) {
  if (tokenizer.adds_bos()) return {tokenizer.bos_id()};
  return {};
}

void append(std::vector<int32_t>& ids, const std::vector<int32_t>& more) {
  ids.insert(ids.end(), more.begin(), more.end());
}

std::vector<int32_t> llama3_prompt(const Tokenizer& tokenizer, const std::string& user_text) {
  const int32_t start_header = required_special(tokenizer, "<|start_header_id|>", ChatTemplate::Llama3);
  const int32_t end_header = required_special(tokenizer, "<|end_header_id|>", ChatTemplate::Llama3);
  const int32_t end_of_turn = required_special(tokenizer, "<|eot_id|>", ChatTemplate::Llama3);
  auto header = [&](std::vector<int32_t>& ids, const std::string& role) {
    ids.push_back(start_header);
    append(ids, tokenizer.encode(role));
    ids.push_back(end_header);
    append(ids, tokenizer.encode("\n\n"));
  };
  std::vector<int32_t> ids = prompt_start(tokenizer);
  header(ids, "user");
  append(ids, tokenizer.encode(user_text));
  ids.push_back(end_of_turn);
  header(ids, "assistant");
  return ids;
}

constexpr const char* kSmolLM2System =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
constexpr const char* kQwen25System =
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

// Each turn is <|im_start|> role "\n" content <|im_end|> "\n"; the text parts are encoded on their
// own, as the special tokens split the rendered template into them.
std::vector<int32_t> chatml_prompt(const Tokenizer& tokenizer, const std::string& user_text,
                                   ChatTemplate chat_template) {
  const int32_t start = required_special(tokenizer, "<|im_start|>", chat_template);
  const int32_t end = required_special(tokenizer, "<|im_end|>", chat_template);
  std::vector<int32_t> ids = prompt_start(tokenizer);
  auto turn = [&](const std::string& role, const std::string& content) {
    ids.push_back(start);
    append(ids, tokenizer.encode(role + "\n" + content));
    ids.push_back(end);
    append(ids, tokenizer.encode("\n"));
  };
  if (chat_template == ChatTemplate::SmolLM2) turn("system", kSmolLM2System);
  if (chat_template == ChatTemplate::Qwen25) turn("system", kQwen25System);
  turn("user", user_text);
  ids.push_back(start);
  append(ids, tokenizer.encode("assistant\n"));
  if (chat_template == ChatTemplate::Qwen3NoThinking) {
    ids.push_back(required_special(tokenizer, "<think>", chat_template));
    append(ids, tokenizer.encode("\n\n"));
    ids.push_back(required_special(tokenizer, "</think>", chat_template));
    append(ids, tokenizer.encode("\n\n"));
  }
  return ids;
}

// BOS (always: the template writes it), <｜User｜> text <｜Assistant｜> <think> "\n".
std::vector<int32_t> deepseek_r1_prompt(const Tokenizer& tokenizer, const std::string& user_text) {
  const ChatTemplate t = ChatTemplate::DeepSeekR1;
  if (tokenizer.bos_id() < 0)
    throw Error("chat template deepseek-r1 starts with BOS, which this tokenizer does not have");
  std::vector<int32_t> ids = {tokenizer.bos_id(), required_special(tokenizer, "<｜User｜>", t)};
  append(ids, tokenizer.encode(user_text));
  ids.push_back(required_special(tokenizer, "<｜Assistant｜>", t));
  ids.push_back(required_special(tokenizer, "<think>", t));
  append(ids, tokenizer.encode("\n"));
  return ids;
}

}  // namespace

ChatTemplate parse_chat_template(const std::string& name) {
  if (name == "none") return ChatTemplate::None;
  if (name == "mistral") return ChatTemplate::Mistral;
  if (name == "llama3") return ChatTemplate::Llama3;
  if (name == "chatml") return ChatTemplate::ChatML;
  if (name == "smollm2") return ChatTemplate::SmolLM2;
  if (name == "qwen2.5") return ChatTemplate::Qwen25;
  if (name == "qwen3-no-think") return ChatTemplate::Qwen3NoThinking;
  if (name == "deepseek-r1") return ChatTemplate::DeepSeekR1;
  throw Error(
      "unknown chat template '" + name +
      "' (expected auto, none, mistral, llama3, chatml, smollm2, qwen2.5, qwen3-no-think or "
      "deepseek-r1)");
}

std::string chat_template_name(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::None:
      return "none";
    case ChatTemplate::Mistral:
      return "mistral";
    case ChatTemplate::Llama3:
      return "llama3";
    case ChatTemplate::ChatML:
      return "chatml";
    case ChatTemplate::SmolLM2:
      return "smollm2";
    case ChatTemplate::Qwen25:
      return "qwen2.5";
    case ChatTemplate::Qwen3NoThinking:
      return "qwen3-no-think";
    case ChatTemplate::DeepSeekR1:
      return "deepseek-r1";
  }
  return "?";
}

ChatTemplate recognise_chat_template(const std::string& template_text, const std::string& where) {
  auto has = [&](const char* part) { return template_text.find(part) != std::string::npos; };
  if (has("<｜User｜>") && has("<｜Assistant｜>")) return ChatTemplate::DeepSeekR1;
  if (has("<|im_start|>") && has("<|im_end|>"))
    return has(kSmolLM2System)  ? ChatTemplate::SmolLM2
           : has(kQwen25System) ? ChatTemplate::Qwen25
                                : ChatTemplate::ChatML;
  if (has("<|start_header_id|>") && has("<|eot_id|>")) return ChatTemplate::Llama3;
  if (has("[INST]") && has("[/INST]")) return ChatTemplate::Mistral;
  throw error_at(where,
                 "chat_template: not a known chat template (known: smollm2, qwen2.5, chatml, "
                 "deepseek-r1, llama3, mistral); pass --chat-template with one of them or none");
}

namespace {

struct TemplateText {
  std::string text;
  std::string where;  // the file holding it
};

std::optional<TemplateText> find_template_text(const std::string& model_arg) {
  const Checkpoint checkpoint = resolve_checkpoint(model_arg);
  if (checkpoint.kind == CheckpointKind::gguf) {
    const auto text = gguf::File::open(checkpoint.path).find_string("tokenizer.chat_template");
    if (!text) return std::nullopt;
    return TemplateText{*text, checkpoint.path};
  }
  const auto config_path = std::filesystem::path(checkpoint.path) / "tokenizer_config.json";
  if (!std::filesystem::is_regular_file(config_path)) return std::nullopt;
  const std::string where = config_path.string();
  std::ifstream in(config_path);
  const auto config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) throw error_at(where, "invalid JSON");
  if (!config.contains("chat_template") || config.at("chat_template").is_null()) return std::nullopt;
  const auto& value = config.at("chat_template");
  if (value.is_string()) return TemplateText{value.get<std::string>(), where};
  if (value.is_array())
    for (const auto& entry : value)
      if (entry.is_object() && entry.value("name", "") == "default" &&
          entry.contains("template") && entry.at("template").is_string())
        return TemplateText{entry.at("template").get<std::string>(), where};
  throw error_at(where, "chat_template: neither a string nor a list with a \"default\" template");
}

}  // namespace

ChatTemplate resolve_chat_template(const std::string& name, const std::string& model_arg,
                                   ChatTemplate without_template) {
  if (name != "auto") return parse_chat_template(name);
  const auto found = find_template_text(model_arg);
  if (!found) return without_template;
  return recognise_chat_template(found->text, found->where);
}

std::vector<int32_t> build_prompt_ids(const Tokenizer& tokenizer, const std::string& user_text,
                                      ChatTemplate chat_template) {
  if (chat_template == ChatTemplate::Llama3) return llama3_prompt(tokenizer, user_text);
  if (chat_template == ChatTemplate::ChatML || chat_template == ChatTemplate::SmolLM2 ||
      chat_template == ChatTemplate::Qwen25 || chat_template == ChatTemplate::Qwen3NoThinking)
    return chatml_prompt(tokenizer, user_text, chat_template);
  if (chat_template == ChatTemplate::DeepSeekR1) return deepseek_r1_prompt(tokenizer, user_text);
  const std::string text =
      chat_template == ChatTemplate::Mistral ? "[INST] " + user_text + " [/INST]" : user_text;
  std::vector<int32_t> ids = prompt_start(tokenizer);
  append(ids, tokenizer.encode(text));
  return ids;
}

TextPiece user_text_piece(ChatTemplate chat_template) {
  switch (chat_template) {
    case ChatTemplate::Mistral:
      return {"[INST] ", " [/INST]"};
    case ChatTemplate::ChatML:
    case ChatTemplate::SmolLM2:
    case ChatTemplate::Qwen25:
    case ChatTemplate::Qwen3NoThinking:
      return {"user\n", ""};
    default:
      return {"", ""};  // None, Llama3: the text alone
  }
}

}  // namespace kvs::tokenizer
