// The vocabulary of a byte-level BPE: token id -> bytes, and bytes -> id through an open-addressing
// hash table keyed by string_view, so the merge loop looks up substrings of a piece without
// building strings. In a rank-ordered (tiktoken-style) BPE an id is also the token's merge rank.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvs::tokenizer {

class ByteTokenTable {
 public:
  ByteTokenTable() = default;
  // tokens[id] = the bytes of token `id`. The strings must be distinct (the readers check that
  // with line numbers before building the table).
  explicit ByteTokenTable(const std::vector<std::string>& tokens);

  // The id of the token with exactly these bytes, or -1. Most lookups in the merge loop miss:
  // a slot's fingerprint (high hash bits) settles those without touching the token bytes.
  int32_t find(std::string_view bytes) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash(bytes);
    const auto fingerprint = static_cast<uint32_t>(h >> 32);
    for (size_t slot = h & mask_;; slot = (slot + 1) & mask_) {
      const Slot& s = slots_[slot];
      if (s.id < 0) return -1;
      if (s.fingerprint == fingerprint && token(s.id) == bytes) return s.id;
    }
  }

  std::string_view token(int32_t id) const {
    return std::string_view(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  int32_t size() const { return static_cast<int32_t>(offsets_.size()) - 1; }

  static uint64_t hash(std::string_view bytes);

 private:
  std::string arena_;              // every token's bytes, back to back
  std::vector<uint32_t> offsets_;  // token id's bytes: arena_[offsets_[id], offsets_[id+1])
  struct Slot {
    uint32_t fingerprint;
    int32_t id;  // -1: empty
  };
  std::vector<Slot> slots_;  // open addressing, linear probing
  size_t mask_ = 0;
};

}  // namespace kvs::tokenizer
