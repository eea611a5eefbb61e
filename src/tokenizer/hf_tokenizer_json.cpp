#include "tokenizer/hf_tokenizer_json.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace kvs::tokenizer {

namespace {

using nlohmann::json;

// GPT-2's pre-tokenizer pattern: what a ByteLevel pre-tokenizer with use_regex applies.
constexpr char kGpt2Pattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// GPT-2's bytes_to_unicode, inverted: code point -> byte, -1 where no byte maps there. Printable
// bytes stand for themselves; the other 68 take the code points from U+0100 on, in byte order.
std::array<int16_t, 0x144> unicode_to_byte() {
  std::array<int16_t, 0x144> table{};
  table.fill(-1);
  int next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    table[printable ? b : next++] = static_cast<int16_t>(b);
  }
  return table;
}

// The raw bytes a vocab entry stands for; false if it holds a character outside the alphabet.
bool byte_level_to_bytes(const std::string& text, std::string& out) {
  static const auto table = unicode_to_byte();
  out.clear();
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0 || n > 2) return false;  // every byte-level character is below U+0800
    uint32_t cp = static_cast<uint8_t>(text[i]);
    if (n == 2) cp = ((cp & 0x1F) << 6) | (static_cast<uint8_t>(text[i + 1]) & 0x3F);
    if (cp >= table.size() || table[cp] < 0) return false;
    out += static_cast<char>(table[cp]);
    i += n;
  }
  return !out.empty();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_at(path, "cannot open the tokenizer file");
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

// Errors about a JSON field point at the line of its key (pretty-printed files have one per
// line), or name the file only when the key is absent.
class Locator {
 public:
  Locator(const std::string& path, const std::string& raw) : path_(path), raw_(raw) {}
  std::string at_key(const std::string& key) const {
    const size_t pos = raw_.find("\"" + key + "\"");
    if (pos == std::string::npos) return path_;
    return at_byte(pos);
  }
  std::string at_byte(size_t pos) const {
    pos = std::min(pos, raw_.size());
    const auto line =
        std::count(raw_.begin(), raw_.begin() + static_cast<std::ptrdiff_t>(pos), '\n') + 1;
    return path_ + ":" + std::to_string(line);
  }
  const std::string& path() const { return path_; }

 private:
  const std::string& path_;
  const std::string& raw_;
};

const json& member(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    throw error_at(where, std::string("missing field \"") + key + "\"");
  return object.at(key);
}

bool flag(const json& object, const char* key) {
  return object.contains(key) && object.at(key).is_boolean() && object.at(key).get<bool>();
}

bool null_or_empty(const json& object, const char* key) {
  if (!object.contains(key) || object.at(key).is_null()) return true;
  return object.at(key).is_string() && object.at(key).get<std::string>().empty();
}

// The pre-tokenizer regex: Sequence[Split(Regex, Isolated), ByteLevel(use_regex false)] as in
// Llama-3, or a lone ByteLevel(use_regex true), which applies GPT-2's pattern.
std::string pre_tokenizer_pattern(const json& pre, const Locator& loc) {
  const std::string where = loc.at_key("pre_tokenizer");
  auto check_byte_level = [&](const json& byte_level, bool regex_expected) {
    if (flag(byte_level, "add_prefix_space"))
      throw error_at(where, "ByteLevel pre-tokenizer with add_prefix_space is not supported");
    const bool use_regex = !byte_level.contains("use_regex") || flag(byte_level, "use_regex");
    if (use_regex != regex_expected)
      throw error_at(where, regex_expected ? "a lone ByteLevel pre-tokenizer must apply its regex"
                                           : "ByteLevel after a Split must have use_regex false");
  };
  if (!pre.is_object())
    throw error_at(where, "pre_tokenizer must be an object (a byte-level BPE needs one)");
  const std::string type = member(pre, "type", where).get<std::string>();
  if (type == "ByteLevel") {
    check_byte_level(pre, true);
    return kGpt2Pattern;
  }
  if (type != "Sequence") throw error_at(where, "unsupported pre_tokenizer type '" + type + "'");
  const json& steps = member(pre, "pretokenizers", where);
  if (!steps.is_array() || steps.size() != 2 || steps[0].value("type", "") != "Split" ||
      steps[1].value("type", "") != "ByteLevel")
    throw error_at(where, "expected the pre-tokenizer sequence [Split, ByteLevel]");
  const json& split = steps[0];
  if (split.value("behavior", "") != "Isolated" || flag(split, "invert"))
    throw error_at(where, "the Split pre-tokenizer must have behavior Isolated and invert false");
  const json& pattern = member(split, "pattern", where);
  if (!pattern.is_object() || !pattern.contains("Regex") || !pattern.at("Regex").is_string())
    throw error_at(where, "the Split pre-tokenizer must have a {\"Regex\": ...} pattern");
  check_byte_level(steps[1], false);
  return pattern.at("Regex").get<std::string>();
}

void read_vocab(const json& model, const Locator& loc, BpeDefinition& def) {
  const std::string where = loc.at_key("vocab");
  const json& vocab = member(model, "vocab", where);
  if (!vocab.is_object() || vocab.empty())
    throw error_at(where, "model.vocab must be a non-empty object");
  def.tokens.assign(vocab.size(), std::string());
  std::vector<bool> seen(vocab.size(), false);
  std::string bytes;
  for (const auto& [text, id_json] : vocab.items()) {
    if (!id_json.is_number_integer())
      throw error_at(where, "model.vocab[\"" + text + "\"] is not an integer id");
    const auto id = id_json.get<int64_t>();
    if (id < 0 || id >= static_cast<int64_t>(vocab.size()))
      throw error_at(where, "model.vocab[\"" + text + "\"] = " + std::to_string(id) +
                                ": ids must run 0.." + std::to_string(vocab.size() - 1));
    if (seen[id]) throw error_at(where, "model.vocab gives id " + std::to_string(id) + " twice");
    if (!byte_level_to_bytes(text, bytes))
      throw error_at(where, "model.vocab[\"" + text + "\"] is not in the byte-level alphabet");
    seen[id] = true;
    def.tokens[id] = bytes;
  }
}

// Each merge "a b" (or ["a", "b"]) must join two tokens into a token, and merges must come in the
// order of the merged token's id: then merge order and rank order are the same thing.
void check_merges(const json& model, const Locator& loc, const BpeDefinition& def) {
  const std::string where = loc.at_key("merges");
  const json& merges = member(model, "merges", where);
  if (!merges.is_array()) throw error_at(where, "model.merges must be an array");
  std::unordered_map<std::string_view, int32_t> id_of;
  id_of.reserve(def.tokens.size());
  for (size_t id = 0; id < def.tokens.size(); ++id)
    id_of.emplace(def.tokens[id], static_cast<int32_t>(id));
  auto find = [&](const std::string& bytes) {
    const auto it = id_of.find(bytes);
    return it == id_of.end() ? -1 : it->second;
  };

  int32_t previous = -1;
  std::string left, right;
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    std::string a, b;
    if (m.is_string()) {
      const auto text = m.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos)
        throw error_at(where,
                       "model.merges[" + std::to_string(i) + "] \"" + text + "\" is not \"a b\"");
      a = text.substr(0, space);
      b = text.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      throw error_at(where,
                     "model.merges[" + std::to_string(i) + "] is neither \"a b\" nor [a, b]");
    }
    const std::string label = "model.merges[" + std::to_string(i) + "] (" + a + " " + b + ")";
    if (!byte_level_to_bytes(a, left) || !byte_level_to_bytes(b, right) || find(left) < 0 ||
        find(right) < 0)
      throw error_at(where, label + " names a token that is not in model.vocab");
    const int32_t merged = find(left + right);
    if (merged < 0) throw error_at(where, label + " forms a token that is not in model.vocab");
    if (merged < previous)
      throw error_at(where, label +
                                " comes after a merge forming a later token: the merges are not "
                                "in rank order, which kvsearch's BPE (tiktoken semantics) needs");
    previous = merged;
  }
}

void read_added_tokens(const json& root, const Locator& loc, BpeDefinition& def) {
  def.special_tokens_where = loc.at_key("added_tokens");
  if (!root.contains("added_tokens")) return;
  const json& added = root.at("added_tokens");
  if (!added.is_array()) throw error_at(def.special_tokens_where, "added_tokens must be an array");
  for (const json& token : added) {
    const std::string where = def.special_tokens_where;
    const auto content = member(token, "content", where).get<std::string>();
    const json& id = member(token, "id", where);
    if (!id.is_number_integer())
      throw error_at(where, "added token " + content + " has no integer id");
    if (!flag(token, "special"))
      throw error_at(where, "added token " + content +
                                " is not special; only special added tokens are supported");
    for (const char* unsupported : {"lstrip", "rstrip", "single_word"})
      if (flag(token, unsupported))
        throw error_at(
            where, "added token " + content + " sets " + unsupported + ", which is not supported");
    def.special_tokens.emplace_back(content, id.get<int32_t>());
  }
}

}  // namespace

BpeDefinition read_hf_tokenizer_json(const std::string& path) {
  const std::string raw = read_file(path);
  const Locator loc(path, raw);
  json root;
  try {
    root = json::parse(raw);
  } catch (const json::parse_error& e) {
    throw error_at(loc.at_byte(e.byte > 0 ? e.byte - 1 : 0),
                   std::string("invalid JSON: ") + e.what());
  }
  if (!root.is_object()) throw error_at(path, "a tokenizer.json must hold a JSON object");
  try {
    const std::string model_where = loc.at_key("model");
    const json& model = member(root, "model", model_where);
    const std::string type = model.value("type", "");
    if (type != "BPE")
      throw error_at(model_where, "model type '" + type +
                                      "' is not a BPE (for SentencePiece models, "
                                      "use their tokenizer.model)");
    if (flag(model, "byte_fallback"))
      throw error_at(loc.at_key("byte_fallback"),
                     "a BPE with byte_fallback is SentencePiece-style, "
                     "not byte-level: use the checkpoint's tokenizer.model");
    if (!null_or_empty(model, "continuing_subword_prefix") ||
        !null_or_empty(model, "end_of_word_suffix"))
      throw error_at(model_where,
                     "subword prefixes/suffixes are not supported in a byte-level BPE");
    if (!flag(model, "ignore_merges"))
      throw error_at(loc.at_key("ignore_merges"),
                     "model.ignore_merges must be true (a piece that is a token stays whole, as in "
                     "tiktoken); HF's bottom-up merging without it is not supported");
    if (root.contains("normalizer") && !root.at("normalizer").is_null())
      throw error_at(loc.at_key("normalizer"), "normalizers are not supported in a byte-level BPE");
    if (!root.contains("decoder") || root.at("decoder").value("type", "") != "ByteLevel")
      throw error_at(loc.at_key("decoder"), "the decoder must be ByteLevel");

    BpeDefinition def;
    def.source = path;
    def.pattern = pre_tokenizer_pattern(
        root.contains("pre_tokenizer") ? root.at("pre_tokenizer") : json(), loc);
    read_vocab(model, loc, def);
    check_merges(model, loc, def);
    read_added_tokens(root, loc, def);
    return def;
  } catch (const json::exception& e) {
    throw error_at(path, std::string("unexpected JSON content: ") + e.what());
  }
}

std::unique_ptr<Tokenizer> load_hf_tokenizer_json(const std::string& path) {
  return make_bpe_tokenizer(read_hf_tokenizer_json(path));
}

}  // namespace kvs::tokenizer
