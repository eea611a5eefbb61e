#include "tokenizer/utf8.h"

#include <cstdint>

#include "core/error.h"
#include "core/files.h"

namespace kvs::tokenizer {

namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// How a lead byte constrains its sequence: total length and the range of the second byte (which
// excludes overlong forms, surrogates and code points past U+10FFFF). length 0: not a lead byte.
struct LeadByte {
  size_t length;
  uint8_t second_lo;
  uint8_t second_hi;
};

LeadByte lead_byte(uint8_t c) {
  if (c >= 0xC2 && c <= 0xDF) return {2, 0x80, 0xBF};
  if (c == 0xE0) return {3, 0xA0, 0xBF};
  if (c == 0xED) return {3, 0x80, 0x9F};
  if (c >= 0xE1 && c <= 0xEF) return {3, 0x80, 0xBF};
  if (c == 0xF0) return {4, 0x90, 0xBF};
  if (c >= 0xF1 && c <= 0xF3) return {4, 0x80, 0xBF};
  if (c == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Bytes from pos that form a valid sequence or the maximal invalid subpart of one: returns the
// number of bytes examined and sets `valid`.
size_t scan_sequence(std::string_view bytes, size_t pos, bool& valid) {
  const auto c = static_cast<uint8_t>(bytes[pos]);
  valid = false;
  if (c < 0x80) {
    valid = true;
    return 1;
  }
  const LeadByte lead = lead_byte(c);
  if (lead.length == 0) return 1;
  size_t i = pos + 1;
  if (i >= bytes.size()) return 1;
  const auto second = static_cast<uint8_t>(bytes[i]);
  if (second < lead.second_lo || second > lead.second_hi) return 1;
  ++i;
  while (i < pos + lead.length) {
    if (i >= bytes.size()) return i - pos;
    const auto b = static_cast<uint8_t>(bytes[i]);
    if (b < 0x80 || b > 0xBF) return i - pos;
    ++i;
  }
  valid = true;
  return lead.length;
}

}  // namespace

size_t utf8_sequence_length(std::string_view bytes, size_t pos) {
  bool valid = false;
  const size_t n = scan_sequence(bytes, pos, valid);
  return valid ? n : 0;
}

bool is_valid_utf8(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    if (static_cast<uint8_t>(bytes[i]) < 0x80) {  // ASCII fast path
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    bool valid = false;
    const size_t n = scan_sequence(bytes, i, valid);
    if (valid)
      out.append(bytes.data() + i, n);
    else
      out += kReplacement;
    i += n;
  }
  return out;
}

std::string read_utf8_text_file(const std::string& path) {
  std::string text = read_file(path, "the text");
  if (!is_valid_utf8(text)) throw error_at(path, "is not UTF-8 text");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw error_at(path, "is empty: no text to measure");
  return text;
}

}  // namespace kvs::tokenizer
