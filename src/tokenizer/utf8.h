// UTF-8 handling shared by the tokenizers, with Python's semantics where the references are Python.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kvs::tokenizer {

// Length of the valid UTF-8 sequence starting at bytes[pos] (1-4), or 0 when the bytes there do
// not start one (stray continuation byte, overlong form, surrogate, past U+10FFFF, truncated).
size_t utf8_sequence_length(std::string_view bytes, size_t pos);

bool is_valid_utf8(std::string_view bytes);

// bytes.decode('utf-8', errors='replace') re-encoded as UTF-8: every maximal invalid subpart
// becomes one U+FFFD, the way CPython (and the Unicode standard's recommended practice) does it.
// A truncated sequence such as F0 9F is one subpart, so it yields a single U+FFFD.
std::string replace_invalid_utf8(std::string_view bytes);

// A text file a measure reads (`perplexity --text`, `fidelity --text`): its contents, or an error
// naming the file when it cannot be read, is not UTF-8 or holds no text (whitespace only).
std::string read_utf8_text_file(const std::string& path);

}  // namespace kvs::tokenizer
