// Unicode normalization of the text a tokenizer encodes: NFC, what Qwen's tokenizer.json asks for
// with its {"type": "NFC"} normalizer (HF tokenizers normalizes before it pre-tokenizes). ICU's
// Normalizer2 does the work.
#pragma once

#include <string>
#include <string_view>

namespace kvs::tokenizer {

// The NFC form of valid UTF-8 text. Text already in NFC (all ASCII text is) comes back unchanged.
std::string nfc(std::string_view utf8);

}  // namespace kvs::tokenizer
