// Python string semantics the official LongBench scorer relies on, on code points: str.lower()
// (full mappings and the final sigma), str.split() without arguments, the re module's \w and \d
// for str patterns, and string.punctuation. Scorer inputs are UTF-8; these helpers work on UTF-32
// so that lengths and positions count code points as Python does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvs::longbench {

// Valid UTF-8 to code points; throws kvs::Error on malformed input (JSON loading rejects it first).
std::u32string utf8_to_utf32(std::string_view utf8);
std::string utf32_to_utf8(std::u32string_view text);

bool py_isspace(char32_t c);       // str.isspace()
bool py_is_word_char(char32_t c);  // re \w: str.isalnum() or '_'
bool py_isdecimal(char32_t c);     // re \d: str.isdecimal()
bool is_ascii_punctuation(char32_t c);  // a character of string.punctuation

// str.lower(), including U+03A3 becoming the final sigma at the end of a word.
std::u32string py_lower(std::u32string_view text);

// str.split(): runs of whitespace separate words, leading and trailing whitespace yields nothing.
std::vector<std::u32string> py_split_whitespace(std::u32string_view text);

// str.split(sep) for one separator character: always at least one piece, empty pieces kept.
std::vector<std::string> py_split_on(std::string_view text, char sep);

// re.findall(r"\d+", text) (decimal digits of any script).
std::vector<std::u32string> find_digit_runs(std::u32string_view text);

// text.lstrip('\n').split('\n')[0]: the first line after leading newlines.
std::string first_line(std::string_view text);

}  // namespace kvs::longbench
