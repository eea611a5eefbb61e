#include "longbench/thinking.h"

#include "core/error.h"

namespace kvs::longbench {

Thinking parse_thinking(const std::string& name) {
  if (name == "keep") return Thinking::Keep;
  if (name == "strip") return Thinking::Strip;
  throw Error("unknown thinking rule '" + name + "' (expected keep or strip)");
}

std::string thinking_name(Thinking thinking) {
  return thinking == Thinking::Strip ? "strip" : "keep";
}

std::string scored_text(const std::string& prediction, Thinking thinking) {
  constexpr const char* kClose = "</think>";
  const size_t close = prediction.rfind(kClose);
  if (thinking == Thinking::Keep || close == std::string::npos) return prediction;
  const size_t answer = prediction.find_first_not_of(" \t\r\n", close + std::string(kClose).size());
  return answer == std::string::npos ? std::string() : prediction.substr(answer);
}

}  // namespace kvs::longbench
