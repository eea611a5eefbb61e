#include "tokenizer/synthetic_bpe.h"

#include <fstream>
#include <functional>
#include <vector>

#include "core/error.h"

namespace kvs::tokenizer {

namespace {

std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += alphabet[(v >> shift) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

void write_synthetic_tiktoken(const std::string& path) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  // Length by length: " " + (length - 1) letters, then `length` letters, in lexicographic order.
  std::function<void(std::string, int)> letters = [&](std::string prefix, int left) {
    if (static_cast<int>(tokens.size()) == kLlama3Ranks) return;
    if (left == 0) {
      tokens.push_back(prefix);
      return;
    }
    for (char c = 'a'; c <= 'z'; ++c) letters(prefix + c, left - 1);
  };
  for (int length = 2; static_cast<int>(tokens.size()) < kLlama3Ranks; ++length) {
    letters(" ", length - 1);
    letters("", length);
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw error_at(path, "cannot write the tokenizer");
  for (size_t rank = 0; rank < tokens.size(); ++rank) out << base64(tokens[rank]) << ' ' << rank << '\n';
  if (!out.flush()) throw error_at(path, "write failed");
}

}  // namespace kvs::tokenizer
