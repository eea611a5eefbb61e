#include "tokenizer/hf_tokenizer_json.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "core/files.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

namespace {

using nlohmann::json;

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

// The pre-tokenizer as the regexes it applies in turn. Each step of a Sequence (or the lone
// step) is Split(Regex, Isolated) (Llama-3), Digits (SmolLM2: individual_digits splits off every
// \p{N}, Rust's char::is_numeric) or ByteLevel, which must come last and applies GPT-2's
// pattern when use_regex is set (the default).
std::vector<std::string> pre_tokenizer_patterns(const json& pre, const Locator& loc) {
  const std::string where = loc.at_key("pre_tokenizer");
  if (!pre.is_object())
    throw error_at(where, "pre_tokenizer must be an object (a byte-level BPE needs one)");
  const std::string type = member(pre, "type", where).get<std::string>();
  std::vector<json> steps = {pre};
  if (type == "Sequence") {
    const json& list = member(pre, "pretokenizers", where);
    if (!list.is_array() || list.empty())
      throw error_at(where, "pre_tokenizer.pretokenizers must be a non-empty array");
    // One by one: assign(begin, end) measures the range with std::distance over json's
    // iterators, which GCC 12 misjudges (-Waggressive-loop-optimizations).
    steps.clear();
    for (const json& step : list) steps.push_back(step);
  }
  std::vector<std::string> patterns;
  for (size_t i = 0; i < steps.size(); ++i) {
    const json& step = steps[i];
    const std::string step_type = member(step, "type", where).get<std::string>();
    const bool last = i + 1 == steps.size();
    if (step_type == "ByteLevel") {
      if (!last) throw error_at(where, "the ByteLevel pre-tokenizer must be the last step");
      if (flag(step, "add_prefix_space"))
        throw error_at(where, "ByteLevel pre-tokenizer with add_prefix_space is not supported");
      if (!step.contains("use_regex") || flag(step, "use_regex")) patterns.push_back(gpt2_pattern());
    } else if (step_type == "Split") {
      if (step.value("behavior", "") != "Isolated" || flag(step, "invert"))
        throw error_at(where, "the Split pre-tokenizer must have behavior Isolated and invert false");
      const json& pattern = member(step, "pattern", where);
      if (!pattern.is_object() || !pattern.contains("Regex") || !pattern.at("Regex").is_string())
        throw error_at(where, "the Split pre-tokenizer must have a {\"Regex\": ...} pattern");
      patterns.push_back(pattern.at("Regex").get<std::string>());
    } else if (step_type == "Digits") {
      patterns.push_back(flag(step, "individual_digits") ? R"(\p{N})" : R"(\p{N}+)");
    } else {
      throw error_at(where, "unsupported pre-tokenizer '" + step_type +
                                "' (supported: Split with a Regex, Digits, ByteLevel)");
    }
    if (last && step_type != "ByteLevel")
      throw error_at(where, "a byte-level BPE's pre-tokenizer must end with ByteLevel");
  }
  if (patterns.empty())
    throw error_at(where, "the pre-tokenizer applies no regex (ByteLevel without use_regex alone)");
  return patterns;
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

// Each merge "a b" (or ["a", "b"]) must join two tokens into a token. With ignore_merges the
// merges must also come in the order of the merged token's id: then merge order and rank order
// are the same thing and tiktoken's rule applies; without it they become the merge list.
void read_merges(const json& model, const Locator& loc, bool ignore_merges, BpeDefinition& def) {
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
    if (!ignore_merges) {
      def.merges.emplace_back(find(left), find(right));
      continue;
    }
    if (merged < previous)
      throw error_at(where, label +
                                " comes after a merge forming a later token: the merges are not "
                                "in rank order, which ignore_merges (tiktoken semantics) needs");
    previous = merged;
  }
  def.ignore_merges = ignore_merges;
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
    for (const char* unsupported : {"lstrip", "rstrip", "single_word"})
      if (flag(token, unsupported))
        throw error_at(
            where, "added token " + content + " sets " + unsupported + ", which is not supported");
    def.special_tokens.emplace_back(content, id.get<int32_t>());
    // Not special (Qwen's <think>): one token as the special ones, but text when decoded.
    if (!flag(token, "special")) def.plain_added_tokens.push_back(id.get<int32_t>());
  }
}

// A token named in tokenizer_config.json: a string, or an AddedToken object with "content".
std::optional<std::string> config_token(const json& config, const char* key,
                                        const std::string& where) {
  if (!config.contains(key) || config.at(key).is_null()) return std::nullopt;
  const json& value = config.at(key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value.at("content").is_string())
    return value.at("content").get<std::string>();
  throw error_at(where, std::string(key) + " is neither a string nor {\"content\": ...}");
}

// Llama-3 vocabularies have their roles by name. Others (GPT-2-style, SmolLM2) name them in the
// tokenizer_config.json beside the file: bos_token, eos_token, add_bos_token (GPT2Tokenizer's
// default: no BOS).
void set_special_roles(const std::string& path, BpeDefinition& def) {
  const bool llama3 = std::any_of(def.special_tokens.begin(), def.special_tokens.end(),
                                  [](const auto& s) { return s.first == "<|begin_of_text|>"; });
  const auto config_path = (std::filesystem::path(path).parent_path() / "tokenizer_config.json");
  if (llama3) {
    set_llama3_roles(def);
    return;
  }
  if (!std::filesystem::is_regular_file(config_path))
    throw error_at(def.special_tokens_where,
                   "no special token <|begin_of_text|> (Llama-3's BOS) and no "
                   "tokenizer_config.json beside the file to name bos_token and eos_token");
  const std::string where = config_path.string();
  json config;
  try {
    config = json::parse(read_file(where, "the tokenizer config"));
  } catch (const json::parse_error& e) {
    throw error_at(where, std::string("invalid JSON: ") + e.what());
  }
  auto id_of = [&](const std::string& text, const char* key) {
    for (const auto& [special, id] : def.special_tokens)
      if (special == text) return id;
    const auto it = std::find(def.tokens.begin(), def.tokens.end(), text);
    if (it == def.tokens.end())
      throw error_at(where, std::string(key) + " '" + text + "' is not a token of " + path);
    return static_cast<int32_t>(it - def.tokens.begin());
  };
  const auto eos = config_token(config, "eos_token", where);
  if (!eos) throw error_at(where, "missing field \"eos_token\"");
  def.eos = {id_of(*eos, "eos_token")};
  if (const auto bos = config_token(config, "bos_token", where)) def.bos = id_of(*bos, "bos_token");
  def.adds_bos = config.contains("add_bos_token") && config.at("add_bos_token").is_boolean() &&
                 config.at("add_bos_token").get<bool>();
}

}  // namespace

BpeDefinition read_hf_tokenizer_json(const std::string& path) {
  const std::string raw = read_file(path, "the tokenizer file");
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
    // NFC alone (Qwen) is read; any other normalizer is refused.
    const bool nfc = root.contains("normalizer") && root.at("normalizer").is_object() &&
                     root.at("normalizer").value("type", "") == "NFC";
    if (root.contains("normalizer") && !root.at("normalizer").is_null() && !nfc)
      throw error_at(loc.at_key("normalizer"), "normalizer " + root.at("normalizer").dump() +
                                                   " is not supported (null or NFC)");
    if (!root.contains("decoder") || root.at("decoder").value("type", "") != "ByteLevel")
      throw error_at(loc.at_key("decoder"), "the decoder must be ByteLevel");

    BpeDefinition def;
    def.source = path;
    def.nfc = nfc;
    def.patterns = pre_tokenizer_patterns(
        root.contains("pre_tokenizer") ? root.at("pre_tokenizer") : json(), loc);
    read_vocab(model, loc, def);
    read_merges(model, loc, flag(model, "ignore_merges"), def);
    read_added_tokens(root, loc, def);
    set_special_roles(path, def);
    return def;
  } catch (const json::exception& e) {
    throw error_at(path, std::string("unexpected JSON content: ") + e.what());
  }
}

std::unique_ptr<Tokenizer> load_hf_tokenizer_json(const std::string& path) {
  return make_bpe_tokenizer(read_hf_tokenizer_json(path));
}

}  // namespace kvs::tokenizer
