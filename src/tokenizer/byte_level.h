// GPT-2's byte-to-unicode alphabet, in which byte-level BPE vocabularies (HF tokenizer.json,
// GGUF tokenizer.ggml.tokens/merges) write their tokens: printable bytes stand for themselves,
// the other 68 take the code points from U+0100 on, in byte order (space is 'Ġ', '\n' is 'Ċ').
#pragma once

#include <string>

namespace kvs::tokenizer {

// The raw bytes a byte-level token text stands for; false if it is empty or holds a character
// outside the alphabet.
bool byte_level_to_bytes(const std::string& text, std::string& out);

}  // namespace kvs::tokenizer
