#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/log.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/byte_token_table.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode_normalize.h"
#include "tokenizer/utf8.h"

namespace kvs::tokenizer {

namespace {

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeDefinition def)
      : source_(def.source),
        table_(def.tokens),
        rule_(def.merges.empty() ? MergeRule(table_)
                                 : MergeRule(table_, def.merges, def.ignore_merges)),
        pretokenizer_(def.patterns, def.source),
        base_size_(static_cast<int32_t>(def.tokens.size())),
        bos_(def.bos),
        adds_bos_(def.adds_bos),
        eos_(def.eos),
        nfc_(def.nfc),
        plain_added_(def.plain_added_tokens.begin(), def.plain_added_tokens.end()) {
    // tiktoken's rule needs every byte; a merge list may lack some (they are dropped).
    for (int b = 0; b < 256 && def.merges.empty(); ++b) {
      const char byte = static_cast<char>(b);
      if (table_.find(std::string_view(&byte, 1)) < 0)
        throw error_at(source_, strfmt("no token for the single byte 0x%02X: a byte-level BPE "
                                       "needs all 256",
                                       b));
    }
    vocab_size_ = base_size_;
    std::vector<std::string> texts;
    for (const auto& [text, id] : def.special_tokens) {
      if (text.empty()) throw error_at(def.special_tokens_where, "a special token has empty text");
      if (id < 0)
        throw error_at(def.special_tokens_where, "special token " + text + " has a negative id");
      // A special token may also be a vocabulary token (GPT-2's <|endoftext|>) if the bytes agree.
      if (id < base_size_ && table_.token(id) != text)
        throw error_at(def.special_tokens_where,
                       strfmt("special token %s has id %d, which is the vocabulary token '%s'",
                              text.c_str(), id, std::string(table_.token(id)).c_str()));
      if (!special_text_.emplace(id, text).second)
        throw error_at(def.special_tokens_where,
                       strfmt("two special tokens share id %d (%s and %s)", id,
                              special_text_[id].c_str(), text.c_str()));
      texts.push_back(text);
      special_ids_.push_back(id);
      vocab_size_ = std::max(vocab_size_, id + 1);
      special_first_byte_[static_cast<uint8_t>(text[0])] = true;
      special_lengths_.push_back(text.size());
    }
    specials_ = ByteTokenTable(texts);
    for (int32_t i = 0; i < specials_.size(); ++i)
      if (specials_.find(specials_.token(i)) != i)
        throw error_at(def.special_tokens_where,
                       "special token " + std::string(specials_.token(i)) + " is defined twice");
    // Longest first: where special texts nest, the longer one wins.
    std::sort(special_lengths_.begin(), special_lengths_.end(), std::greater<>());
    special_lengths_.erase(std::unique(special_lengths_.begin(), special_lengths_.end()),
                           special_lengths_.end());

    if (adds_bos_ && bos_ < 0) throw error_at(source_, "prompts start with BOS, but none is set");
    if (bos_ >= vocab_size_)
      throw error_at(source_, strfmt("the BOS id %d is outside the vocabulary (%d ids)", bos_,
                                     vocab_size_));
    if (eos_.empty()) throw error_at(source_, "no EOS token is set");
    for (const int32_t id : eos_)
      if (id < 0 || id >= vocab_size_)
        throw error_at(source_, strfmt("the EOS id %d is outside the vocabulary (%d ids)", id,
                                       vocab_size_));
  }

  std::vector<int32_t> encode(const std::string& text) const override {
    std::vector<int32_t> ids;
    with_valid_utf8(text, [&](std::string_view valid) { encode_ordinary(valid, ids); });
    return ids;
  }

  std::vector<int32_t> encode_with_special(const std::string& text) const override {
    std::vector<int32_t> ids;
    with_valid_utf8(text, [&](std::string_view valid) {
      size_t segment_start = 0;
      size_t pos = 0;
      while (pos < valid.size()) {
        const auto [found, length] = special_at(valid, pos);
        if (found < 0) {
          ++pos;
          continue;
        }
        encode_ordinary(valid.substr(segment_start, pos - segment_start), ids);
        ids.push_back(found);
        pos += length;
        segment_start = pos;
      }
      encode_ordinary(valid.substr(segment_start), ids);
    });
    return ids;
  }

  std::string decode(const std::vector<int32_t>& ids, bool skip_special) const override {
    std::string bytes;
    for (int32_t id : ids) {
      const auto special = special_text_.find(id);
      if (special != special_text_.end()) {
        if (!skip_special || plain_added_.count(id)) bytes += special->second;
      } else if (id >= 0 && id < base_size_) {
        bytes += table_.token(id);
      } else {
        throw Error(strfmt("tokenizer: id %d is not in the vocabulary of %s (%d ids)", id,
                           source_.c_str(), vocab_size_));
      }
    }
    // Tokens are byte strings: a character may span tokens, and a sequence cut mid-character
    // decodes the way the reference (Python's errors='replace') does.
    return is_valid_utf8(bytes) ? bytes : replace_invalid_utf8(bytes);
  }

  std::optional<int32_t> special_token_id(const std::string& text) const override {
    const int32_t index = specials_.find(text);
    if (index < 0) return std::nullopt;
    return special_ids_[index];
  }

  int32_t bos_id() const override { return bos_; }
  bool adds_bos() const override { return adds_bos_; }
  const std::vector<int32_t>& eos_ids() const override { return eos_; }
  int32_t vocab_size() const override { return vocab_size_; }
  std::string kind() const override { return "bpe"; }

 private:
  // Runs f on the text, or on a copy with invalid UTF-8 replaced (as Python would have read it):
  // the regex needs valid UTF-8.
  template <typename F>
  void with_valid_utf8(const std::string& text, F&& f) const {
    if (is_valid_utf8(text)) {
      f(std::string_view(text));
      return;
    }
    log::debug("tokenizer: input is not valid UTF-8; invalid bytes encode as U+FFFD");
    const std::string valid = replace_invalid_utf8(text);
    f(std::string_view(valid));
  }

  void encode_ordinary(std::string_view raw, std::vector<int32_t>& ids) const {
    const std::string normalized = nfc_ ? nfc(raw) : std::string();
    const std::string_view text = nfc_ ? std::string_view(normalized) : raw;
    std::vector<std::string_view> pieces;
    pretokenizer_.split(text, pieces);
    ids.reserve(ids.size() + text.size() / 3);
    // Pieces that need merging (rare words, names, identifiers) recur in long texts: each is
    // merged once per call and its ids copied after that. The cache lives for one call, so encode()
    // stays thread-safe and its memory is bounded by the text.
    std::unordered_map<std::string_view, std::pair<size_t, size_t>> merged;  // piece -> ids range
    for (const auto piece : pieces) {
      if (rule_.keeps_whole_tokens()) {
        const int32_t whole = table_.find(piece);
        if (whole >= 0) {
          ids.push_back(whole);
          continue;
        }
      }
      const auto cached = merged.find(piece);
      if (cached != merged.end()) {
        for (size_t k = cached->second.first; k < cached->second.second; ++k) {
          const int32_t id = ids[k];
          ids.push_back(id);
        }
        continue;
      }
      const size_t begin = ids.size();
      bpe_encode_piece(rule_, piece, ids);
      merged.emplace(piece, std::make_pair(begin, ids.size()));
    }
  }

  // The special token (id, length) whose text starts at pos, longest first; (-1, 0) if none.
  std::pair<int32_t, size_t> special_at(std::string_view text, size_t pos) const {
    if (!special_first_byte_[static_cast<uint8_t>(text[pos])]) return {-1, 0};
    for (size_t length : special_lengths_) {
      if (pos + length > text.size()) continue;
      const int32_t index = specials_.find(text.substr(pos, length));
      if (index >= 0) return {special_ids_[index], length};
    }
    return {-1, 0};
  }

  std::string source_;
  ByteTokenTable table_;
  MergeRule rule_;
  PreTokenizer pretokenizer_;
  int32_t base_size_;
  int32_t vocab_size_ = 0;
  ByteTokenTable specials_;                                // special texts, by index
  std::vector<int32_t> special_ids_;                       // index -> token id
  std::unordered_map<int32_t, std::string> special_text_;  // token id -> text
  std::array<bool, 256> special_first_byte_{};
  std::vector<size_t> special_lengths_;
  int32_t bos_;
  bool adds_bos_;
  std::vector<int32_t> eos_;
  bool nfc_;
  std::unordered_set<int32_t> plain_added_;  // added tokens decoded even when skipping specials
};

}  // namespace

void set_llama3_roles(BpeDefinition& definition) {
  auto find = [&](const std::string& text) -> int32_t {
    for (const auto& [special, id] : definition.special_tokens)
      if (special == text) return id;
    return -1;
  };
  auto required = [&](const std::string& text, const char* role) {
    const int32_t id = find(text);
    if (id < 0)
      throw error_at(definition.special_tokens_where,
                     "no special token " + text + " (" + role + ")");
    return id;
  };
  definition.bos = required("<|begin_of_text|>", "the BOS token");
  definition.adds_bos = true;
  definition.eos = {required("<|end_of_text|>", "an EOS token")};
  if (const int32_t eom = find("<|eom_id|>"); eom >= 0) definition.eos.push_back(eom);
  definition.eos.push_back(required("<|eot_id|>", "an EOS token"));
}

std::unique_ptr<Tokenizer> make_bpe_tokenizer(BpeDefinition definition) {
  return std::make_unique<BpeTokenizer>(std::move(definition));
}

}  // namespace kvs::tokenizer
