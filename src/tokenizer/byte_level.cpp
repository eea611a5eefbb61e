#include "tokenizer/byte_level.h"

#include <array>
#include <cstdint>

#include "tokenizer/utf8.h"

namespace kvs::tokenizer {

namespace {

// bytes_to_unicode inverted: code point -> byte, -1 where no byte maps there.
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

}  // namespace

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

}  // namespace kvs::tokenizer
