#include "tokenizer/byte_token_table.h"

#include <cstring>

namespace kvs::tokenizer {

uint64_t ByteTokenTable::hash(std::string_view bytes) {
  // Eight bytes per multiply-rotate round, then a final avalanche (splitmix64's finaliser).
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = bytes.size() * kMul;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * kMul;
    h = (h << 29) | (h >> 35);
  }
  if (i < bytes.size()) {
    uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, bytes.size() - i);
    h = (h ^ word) * kMul;
  }
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 31;
  return h;
}

ByteTokenTable::ByteTokenTable(const std::vector<std::string>& tokens) {
  size_t total = 0;
  for (const auto& t : tokens) total += t.size();
  arena_.reserve(total);
  offsets_.reserve(tokens.size() + 1);
  offsets_.push_back(0);
  for (const auto& t : tokens) {
    arena_ += t;
    offsets_.push_back(static_cast<uint32_t>(arena_.size()));
  }
  // Load factor at most 1/2 keeps probe chains short.
  size_t capacity = 16;
  while (capacity < 2 * tokens.size()) capacity *= 2;
  slots_.assign(capacity, Slot{0, -1});
  mask_ = capacity - 1;
  for (int32_t id = 0; id < size(); ++id) {
    const uint64_t h = hash(token(id));
    size_t slot = h & mask_;
    while (slots_[slot].id >= 0) slot = (slot + 1) & mask_;
    slots_[slot] = Slot{static_cast<uint32_t>(h >> 32), id};
  }
}

}  // namespace kvs::tokenizer
