// Fixtures of the tokenizer tests: the real tokenizers in KVS_FIXTURES_DIR and scratch files.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/fixtures.h"
#include "common/scratch_dir.h"
#include "tokenizer/tokenizer.h"

namespace kvs::test {

inline std::string llama3_model_path() {
  return fixtures_dir() + "/tokenizers/llama-3.1/tokenizer.model";
}
inline std::string mistral_model_path() {
  return fixtures_dir() + "/tokenizers/mistral-7b-v0.1/tokenizer.model";
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

// Loaded once per test binary: the Llama-3 file has 128000 lines.
inline const tokenizer::Tokenizer& llama3() {
  static const auto tok = tokenizer::load_tiktoken(llama3_model_path());
  return *tok;
}

inline const tokenizer::Tokenizer& mistral() {
  static const auto tok = tokenizer::load_sentencepiece(mistral_model_path());
  return *tok;
}

// Standard base64 with padding (to write tiktoken files in tests).
inline std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v =
        (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += alphabet[(v >> s) & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += std::string{alphabet[(v >> 18) & 63], alphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += std::string{alphabet[(v >> 18) & 63], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63],
                       '='};
  }
  return out;
}

// A small tiktoken file: the 256 single bytes (rank = byte value), then `merged` in rank order.
inline std::string small_tiktoken(const std::vector<std::string>& merged) {
  std::string text;
  for (int b = 0; b < 256; ++b)
    text += base64(std::string(1, char(b))) + " " + std::to_string(b) + "\n";
  for (size_t i = 0; i < merged.size(); ++i)
    text += base64(merged[i]) + " " + std::to_string(256 + i) + "\n";
  return text;
}

// The message of the kvs::Error that f throws ("" if it throws none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace kvs::test
