// Hugging Face tokenizer.json holding a byte-level BPE (Llama-3's, GPT-2-style ones such as
// SmolLM2's, Qwen2's): model.vocab (tokens in GPT-2's byte-to-unicode alphabet), model.merges,
// added_tokens, and the pre-tokenizer (Split, Digits, ByteLevel).
#pragma once

#include <string>

#include "tokenizer/bpe_tokenizer.h"

namespace kvs::tokenizer {

// Every merge must join two tokens into a token. With ignore_merges (tiktoken-converted files,
// Llama-3) the merges must come in the order of the merged token's id, so a token's id is its
// rank; without it (GPT-2 style) they are the merge list, applied bottom-up from the bytes as HF
// does. The normalizer may be null or NFC (Qwen's). Added tokens that are not special (Qwen's
// <think>) are parsed out of text as special ones are but decode as text. Rejects what it cannot
// reproduce exactly (other normalizers, prefix spaces, byte fallback, lstrip/rstrip added tokens),
// with the file and the field. BOS/EOS: Llama-3's by name, else bos_token, eos_token and
// add_bos_token of the tokenizer_config.json beside the file.
BpeDefinition read_hf_tokenizer_json(const std::string& path);

}  // namespace kvs::tokenizer
