// The tokenizer of a GGUF file, from its tokenizer.ggml.* metadata (docs/gguf.md §5):
// "gpt2" is a byte-level BPE with a merge list and one of llama.cpp's pre-tokenizers; "llama" is
// a SentencePiece model given by its pieces, scores and types.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "core/gguf.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tiktoken_reader.h"
#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

namespace {

constexpr char kTokens[] = "tokenizer.ggml.tokens";
constexpr char kTypes[] = "tokenizer.ggml.token_type";
constexpr char kMerges[] = "tokenizer.ggml.merges";
constexpr char kScores[] = "tokenizer.ggml.scores";
constexpr char kPre[] = "tokenizer.ggml.pre";

// GGUF's token types (the same numbers as SentencePiece's).
constexpr int32_t kNormal = 1;
constexpr int32_t kControl = 3;
constexpr int32_t kUserDefined = 4;
constexpr int32_t kUnused = 5;

// The texts of end-of-turn tokens llama.cpp also stops generation on (its end-of-generation set),
// besides the file's EOS and EOT ids.
const char* const kEndOfTurnTexts[] = {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|eom_id|>",
                                       "<|end_of_text|>", "<end_of_turn>", "<|end|>", "</s>"};

std::string field(const std::string& key, size_t index) {
  return key + "[" + std::to_string(index) + "]";
}

// llama.cpp's pre-tokenizers by tokenizer.ggml.pre: the regexes it applies in turn.
std::vector<std::string> pre_tokenizer_patterns(const gguf::File& file, const std::string& pre) {
  if (pre == "smollm") return {R"(\p{N})", gpt2_pattern()};
  if (pre == "gpt2") return {gpt2_pattern()};
  if (pre == "default")
    return {R"([\p{P}\$\+<=>\^~\|]+)", gpt2_pattern(), R"(\p{N}+)", "[0-9][0-9][0-9]"};
  if (pre == "llama-bpe") return {llama3_pattern()};
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return {qwen2_pattern()};
  throw error_at(file.path(),
                 std::string(kPre) + ": unknown pre-tokenizer '" + pre +
                     "' (supported: smollm, llama-bpe, qwen2, deepseek-r1-qwen, gpt2, default)");
}

std::vector<int32_t> token_types(const gguf::File& file, size_t count) {
  if (!file.has(kTypes)) return std::vector<int32_t>(count, kNormal);
  const std::vector<int64_t> types = file.get_int_array(kTypes);
  if (types.size() != count)
    throw error_at(file.path(), std::string(kTypes) + ": " + std::to_string(types.size()) +
                                    " types for " + std::to_string(count) + " tokens");
  return {types.begin(), types.end()};
}

std::optional<int32_t> token_id(const gguf::File& file, const std::string& key, size_t count) {
  const auto id = file.find_int(key);
  if (!id) return std::nullopt;
  if (*id < 0 || *id >= static_cast<int64_t>(count))
    throw error_at(file.path(), key + ": id " + std::to_string(*id) + " is outside the " +
                                    std::to_string(count) + " tokens");
  return static_cast<int32_t>(*id);
}

// EOS, then EOT/EOM, then the control tokens named like end-of-turn markers: SmolLM2 stops on
// <|im_end|> (2) and <|endoftext|> (0).
std::vector<int32_t> end_of_generation_ids(const gguf::File& file,
                                           const std::vector<std::string>& texts,
                                           const std::vector<int32_t>& types) {
  std::vector<int32_t> ids;
  auto add = [&](int32_t id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  const auto eos = token_id(file, "tokenizer.ggml.eos_token_id", texts.size());
  if (!eos) throw error_at(file.path(), "tokenizer.ggml.eos_token_id: missing");
  add(*eos);
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"})
    if (const auto id = token_id(file, key, texts.size())) add(*id);
  for (size_t id = 0; id < texts.size(); ++id)
    if (types[id] == kControl)
      for (const char* text : kEndOfTurnTexts)
        if (texts[id] == text) add(static_cast<int32_t>(id));
  return ids;
}

std::unique_ptr<Tokenizer> gpt2_tokenizer(const gguf::File& file) {
  const std::string& path = file.path();
  BpeDefinition def;
  def.source = path;
  def.special_tokens_where = path + ": " + kTypes;
  const std::vector<std::string> texts = file.get_string_array(kTokens);
  if (texts.empty()) throw error_at(path, std::string(kTokens) + ": no tokens");
  const std::vector<int32_t> types = token_types(file, texts.size());

  // Control and user-defined tokens are their raw text (llama.cpp renders them as is); the rest
  // are written in GPT-2's byte-level alphabet.
  std::unordered_map<std::string, int32_t> id_of;
  def.tokens.resize(texts.size());
  for (size_t id = 0; id < texts.size(); ++id) {
    const bool raw = types[id] == kControl || types[id] == kUserDefined || types[id] == kUnused;
    if (raw)
      def.tokens[id] = texts[id];
    else if (!byte_level_to_bytes(texts[id], def.tokens[id]))
      throw error_at(path, field(kTokens, id) + ": '" + texts[id] +
                               "' is not in GPT-2's byte-level alphabet");
    if (def.tokens[id].empty()) throw error_at(path, field(kTokens, id) + ": empty token");
    const auto [it, inserted] = id_of.emplace(def.tokens[id], static_cast<int32_t>(id));
    if (!inserted)
      throw error_at(path, field(kTokens, id) + ": repeats " + field(kTokens, it->second));
    if (types[id] == kControl) def.special_tokens.emplace_back(texts[id], static_cast<int32_t>(id));
  }

  // Each merge is "left right", split at the first space after the first byte (llama.cpp's rule);
  // its rank is its index.
  const std::vector<std::string> merges = file.get_string_array(kMerges);
  def.merges.reserve(merges.size());
  std::string left, right;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
    if (space == std::string::npos)
      throw error_at(path, field(kMerges, rank) + ": '" + merge + "' has no space");
    const bool known = byte_level_to_bytes(merge.substr(0, space), left) &&
                       byte_level_to_bytes(merge.substr(space + 1), right);
    const auto l = id_of.find(left), r = id_of.find(right), joined = id_of.find(left + right);
    if (!known || l == id_of.end() || r == id_of.end())
      throw error_at(path, field(kMerges, rank) + ": '" + merge + "' names a token that is not in " +
                               kTokens);
    if (joined == id_of.end())
      throw error_at(path, field(kMerges, rank) + ": '" + merge + "' forms a token that is not in " +
                               kTokens);
    def.merges.emplace_back(l->second, r->second);
  }

  const std::string pre = file.find_string(kPre).value_or("default");
  def.patterns = pre_tokenizer_patterns(file, pre);
  def.ignore_merges = pre == "llama-bpe";  // llama.cpp keeps whole-token pieces for Llama-3 only
  def.bos = token_id(file, "tokenizer.ggml.bos_token_id", texts.size()).value_or(-1);
  def.adds_bos = file.find_bool("tokenizer.ggml.add_bos_token").value_or(false);
  def.eos = end_of_generation_ids(file, texts, types);
  return make_bpe_tokenizer(std::move(def));
}

std::unique_ptr<Tokenizer> llama_tokenizer(const gguf::File& file) {
  const std::string& path = file.path();
  const std::vector<std::string> texts = file.get_string_array(kTokens);
  if (texts.empty()) throw error_at(path, std::string(kTokens) + ": no tokens");
  const std::vector<int32_t> types = token_types(file, texts.size());
  const std::vector<double> scores = file.get_float_array(kScores);
  if (scores.size() != texts.size())
    throw error_at(path, std::string(kScores) + ": " + std::to_string(scores.size()) +
                             " scores for " + std::to_string(texts.size()) + " tokens");
  SentencePieceDefinition def;
  def.source = path;
  def.pieces.resize(texts.size());
  for (size_t id = 0; id < texts.size(); ++id)
    def.pieces[id] = {texts[id], static_cast<float>(scores[id]), types[id]};
  def.unk = token_id(file, "tokenizer.ggml.unknown_token_id", texts.size()).value_or(0);
  def.bos = token_id(file, "tokenizer.ggml.bos_token_id", texts.size()).value_or(1);
  def.eos = token_id(file, "tokenizer.ggml.eos_token_id", texts.size()).value_or(2);
  def.adds_bos = file.find_bool("tokenizer.ggml.add_bos_token").value_or(true);
  def.add_dummy_prefix = file.find_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  return make_sentencepiece_tokenizer(def);
}

}  // namespace

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const std::string& path) {
  const gguf::File file = gguf::File::open(path);
  const std::string model = file.get_string("tokenizer.ggml.model");
  if (model == "gpt2") return gpt2_tokenizer(file);
  if (model == "llama") return llama_tokenizer(file);
  throw error_at(path, "tokenizer.ggml.model: unsupported tokenizer model '" + model +
                           "' (supported: gpt2, llama)");
}

}  // namespace kvs::tokenizer
