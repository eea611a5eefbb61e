// The thinking section of a reasoning model's answer (DeepSeek-R1-Distill, Qwen3: "<think> ...
// </think> answer"), kept in or stripped from the text the scorer sees, as R-KV's and kvpress's
// evaluations strip it.
#pragma once

#include <string>

namespace kvs::longbench {

enum class Thinking {
  Keep,   // the prediction as generated
  Strip,  // what follows the last "</think>", leading whitespace dropped; unchanged without one
};

// "keep" | "strip"; throws naming the accepted ones.
Thinking parse_thinking(const std::string& name);
std::string thinking_name(Thinking thinking);

std::string scored_text(const std::string& prediction, Thinking thinking);

}  // namespace kvs::longbench
