#include "tokenizer/tiktoken_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <unordered_map>

#include "core/error.h"
#include "core/files.h"
#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

namespace {

constexpr int kNumSpecialTokens = 256;

// Value of each base64 character, -1 for characters outside the alphabet.
std::array<int8_t, 256> base64_values() {
  std::array<int8_t, 256> v{};
  v.fill(-1);
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) v[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return v;
}

// Standard base64 with '=' padding; false if `text` is not that.
bool decode_base64(std::string_view text, std::string& out) {
  static const auto values = base64_values();
  out.clear();
  if (text.empty() || text.size() % 4 != 0) return false;
  size_t padding = 0;
  if (text.back() == '=') ++padding;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++padding;
  const size_t data_chars = text.size() - padding;
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < data_chars; ++i) {
    const int8_t v = values[static_cast<uint8_t>(text[i])];
    if (v < 0) return false;
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return !out.empty();
}

std::string printable(std::string_view line) {
  constexpr size_t kMax = 60;
  std::string out;
  for (char c : line.substr(0, kMax)) out += (c >= 0x20 && c < 0x7F) ? c : '?';
  if (line.size() > kMax) out += "...";
  return out;
}

}  // namespace

const std::string& llama3_pattern() {
  static const std::string pattern =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  return pattern;
}

std::vector<std::string> llama3_special_tokens() {
  std::vector<std::string> names = {
      "<|begin_of_text|>",
      "<|end_of_text|>",
      "<|reserved_special_token_0|>",
      "<|reserved_special_token_1|>",
      "<|finetune_right_pad_id|>",
      "<|step_id|>",
      "<|start_header_id|>",
      "<|end_header_id|>",
      "<|eom_id|>",
      "<|eot_id|>",
      "<|python_tag|>",
  };
  const int named = static_cast<int>(names.size());
  for (int i = 0; i < kNumSpecialTokens - named; ++i)
    names.push_back("<|reserved_special_token_" + std::to_string(2 + i) + "|>");
  return names;
}

bool looks_like_tiktoken(std::string_view head) {
  static const auto values = base64_values();
  const size_t space = head.find(' ');
  if (space == 0 || space == std::string_view::npos) return false;
  for (size_t i = 0; i < space; ++i)
    if (values[static_cast<uint8_t>(head[i])] < 0 && head[i] != '=') return false;
  size_t i = space + 1;
  const size_t digits_start = i;
  while (i < head.size() && head[i] >= '0' && head[i] <= '9') ++i;
  return i > digits_start && (i == head.size() || head[i] == '\n' || head[i] == '\r');
}

BpeDefinition read_tiktoken_bpe(const std::string& path) {
  const std::string data = read_file(path, "the tokenizer file");
  BpeDefinition def;
  def.source = path;
  def.special_tokens_where = path;
  def.patterns = {llama3_pattern()};

  // Ranks index a vector: bound them by the number of lines before any resize.
  const auto max_lines = static_cast<int64_t>(std::count(data.begin(), data.end(), '\n')) + 1;
  std::vector<int64_t> line_of_rank;  // 0: rank not given (yet)
  std::string bytes;
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < data.size()) {
    size_t end = data.find('\n', pos);
    if (end == std::string::npos) end = data.size();
    std::string_view line(data.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no);

    const size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos)
      throw error_at(where, "expected '<base64 token> <rank>', got '" + printable(line) + "'");
    const std::string_view token_text = line.substr(0, space);
    const std::string_view rank_text = line.substr(space + 1);
    if (!decode_base64(token_text, bytes))
      throw error_at(where, "'" + printable(token_text) + "' is not a base64 token");
    int64_t rank = -1;
    const auto parsed =
        std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
    if (parsed.ec != std::errc() || parsed.ptr != rank_text.data() + rank_text.size() || rank < 0 ||
        rank >= INT32_MAX - kNumSpecialTokens)
      throw error_at(where, "rank '" + printable(rank_text) + "' is not a non-negative integer");
    if (rank >= max_lines)
      throw error_at(where, "rank " + std::to_string(rank) + " is past the number of lines (" +
                                std::to_string(max_lines) + "): ranks must run 0..N-1");

    if (rank >= static_cast<int64_t>(line_of_rank.size())) {
      line_of_rank.resize(rank + 1, 0);
      def.tokens.resize(rank + 1);
    }
    if (line_of_rank[rank] != 0)
      throw error_at(where, "rank " + std::to_string(rank) + " already given on line " +
                                std::to_string(line_of_rank[rank]));
    line_of_rank[rank] = line_no;
    def.tokens[rank] = bytes;
  }
  if (def.tokens.empty()) throw error_at(path, "no tokens in the tokenizer file");
  for (size_t rank = 0; rank < line_of_rank.size(); ++rank)
    if (line_of_rank[rank] == 0)
      throw error_at(path, "rank " + std::to_string(rank) + " is missing: ranks must run 0.." +
                               std::to_string(line_of_rank.size() - 1) + " without gaps");

  std::unordered_map<std::string_view, size_t> rank_of_token;
  rank_of_token.reserve(def.tokens.size());
  for (size_t rank = 0; rank < def.tokens.size(); ++rank) {
    const auto [it, inserted] = rank_of_token.emplace(def.tokens[rank], rank);
    if (!inserted)
      throw error_at(path + ":" + std::to_string(line_of_rank[rank]),
                     "the token of rank " + std::to_string(rank) + " repeats the token of line " +
                         std::to_string(line_of_rank[it->second]));
  }

  // As Meta's tokenizer.py: the special tokens take the ids right after the last rank.
  const auto first_special = static_cast<int32_t>(def.tokens.size());
  const auto names = llama3_special_tokens();
  for (size_t i = 0; i < names.size(); ++i)
    def.special_tokens.emplace_back(names[i], first_special + static_cast<int32_t>(i));
  set_llama3_roles(def);
  return def;
}

std::unique_ptr<Tokenizer> load_tiktoken(const std::string& path) {
  return make_bpe_tokenizer(read_tiktoken_bpe(path));
}

}  // namespace kvs::tokenizer
