// Chat templates: how a user message becomes the prompt's token ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

enum class ChatTemplate {
  None,     // BOS + the raw text (what the PyramidKV reference does for Mistral on LongBench)
  Mistral,  // BOS + "[INST] " + text + " [/INST]"
};

ChatTemplate parse_chat_template(const std::string& name);  // "none" | "mistral"
std::string chat_template_name(ChatTemplate t);

std::vector<int32_t> build_prompt_ids(const Tokenizer& tokenizer, const std::string& user_text,
                                      ChatTemplate chat_template);

}  // namespace kvs::tokenizer
