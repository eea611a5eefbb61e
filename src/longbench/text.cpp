#include "longbench/text.h"

#include <algorithm>

#include "core/error.h"
#include "longbench/unicode_tables.h"

namespace kvs::longbench {

namespace unicode {

bool in_table(const RangeTable& table, char32_t c) {
  const Range* end = table.data + table.size;
  const Range* it =
      std::upper_bound(table.data, end, c, [](char32_t x, const Range& r) { return x < r.first; });
  return it != table.data && c <= (it - 1)->last;
}

}  // namespace unicode

namespace {

constexpr char32_t kCapitalSigma = 0x3A3;
constexpr char32_t kSmallSigma = 0x3C3;
constexpr char32_t kFinalSigma = 0x3C2;

// CPython's rule: U+03A3 is final when a cased letter precedes it and none follows it, skipping
// case-ignorable characters in both directions.
bool is_final_sigma(std::u32string_view text, size_t pos) {
  size_t j = pos;
  while (j > 0 && unicode::in_table(unicode::kCaseIgnorable, text[j - 1])) --j;
  if (j == 0 || !unicode::in_table(unicode::kCased, text[j - 1])) return false;
  size_t k = pos + 1;
  while (k < text.size() && unicode::in_table(unicode::kCaseIgnorable, text[k])) ++k;
  return k == text.size() || !unicode::in_table(unicode::kCased, text[k]);
}

Error invalid_utf8(size_t pos) {
  return Error("text: invalid UTF-8 at byte " + std::to_string(pos));
}

}  // namespace

std::u32string utf8_to_utf32(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  size_t i = 0;
  while (i < utf8.size()) {
    const auto lead = static_cast<unsigned char>(utf8[i]);
    size_t extra = 0;
    char32_t c = lead;
    char32_t min_value = 0;
    if (lead >= 0xF0 && lead <= 0xF4) {
      extra = 3, c = lead & 0x07, min_value = 0x10000;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      extra = 2, c = lead & 0x0F, min_value = 0x800;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      extra = 1, c = lead & 0x1F, min_value = 0x80;
    } else if (lead >= 0x80) {
      throw invalid_utf8(i);
    }
    if (utf8.size() - i <= extra) throw invalid_utf8(i);
    for (size_t k = 1; k <= extra; ++k) {
      const auto cont = static_cast<unsigned char>(utf8[i + k]);
      if ((cont & 0xC0) != 0x80) throw invalid_utf8(i);
      c = (c << 6) | (cont & 0x3F);
    }
    if (c < min_value || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) throw invalid_utf8(i);
    out.push_back(c);
    i += extra + 1;
  }
  return out;
}

std::string utf32_to_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

bool py_isspace(char32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  return unicode::in_table(unicode::kWhitespace, c);
}

bool py_is_word_char(char32_t c) {
  if (c < 0x80) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  return unicode::in_table(unicode::kWordChars, c);
}

bool py_isdecimal(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return unicode::in_table(unicode::kDecimalDigits, c);
}

bool is_ascii_punctuation(char32_t c) {
  // string.punctuation: every printable ASCII character that is neither a letter, a digit nor
  // a space.
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

std::u32string py_lower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const unicode::LowerMapping* begin = unicode::kLower.data;
  const unicode::LowerMapping* end = begin + unicode::kLower.size;
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
      continue;
    }
    if (c == kCapitalSigma) {
      out.push_back(is_final_sigma(text, i) ? kFinalSigma : kSmallSigma);
      continue;
    }
    const auto* it = std::lower_bound(
        begin, end, c, [](const unicode::LowerMapping& m, char32_t x) { return m.from < x; });
    if (it == end || it->from != c) {
      out.push_back(c);
      continue;
    }
    for (char32_t m : it->to) {
      if (m == 0) break;
      out.push_back(m);
    }
  }
  return out;
}

std::vector<std::u32string> py_split_whitespace(std::u32string_view text) {
  std::vector<std::u32string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && py_isspace(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !py_isspace(text[i])) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

std::vector<std::string> py_split_on(std::string_view text, char sep) {
  std::vector<std::string> pieces;
  size_t start = 0;
  for (size_t pos = text.find(sep); pos != std::string_view::npos; pos = text.find(sep, start)) {
    pieces.emplace_back(text.substr(start, pos - start));
    start = pos + 1;
  }
  pieces.emplace_back(text.substr(start));
  return pieces;
}

std::vector<std::u32string> find_digit_runs(std::u32string_view text) {
  std::vector<std::u32string> runs;
  size_t i = 0;
  while (i < text.size()) {
    if (!py_isdecimal(text[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < text.size() && py_isdecimal(text[i])) ++i;
    runs.emplace_back(text.substr(start, i - start));
  }
  return runs;
}

std::string first_line(std::string_view text) {
  const size_t start = text.find_first_not_of('\n');
  if (start == std::string_view::npos) return "";
  const size_t end = text.find('\n', start);
  return std::string(text.substr(start, end == std::string_view::npos ? end : end - start));
}

}  // namespace kvs::longbench
