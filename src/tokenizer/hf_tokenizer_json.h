// Hugging Face tokenizer.json holding a byte-level BPE (Llama-3's): model.vocab (tokens in GPT-2's
// byte-to-unicode alphabet), model.merges, added_tokens, and the Split regex of the pre-tokenizer.
#pragma once

#include <string>

#include "tokenizer/bpe_tokenizer.h"

namespace kvs::tokenizer {

// Reads the file into the rank table the BPE merges by: a token's id is its rank. That is how
// tiktoken-converted files (Llama-3) are built; the reader checks it (every merge joins two
// tokens into a token, merges come in the order of the merged token's id, ignore_merges is set)
// and rejects what it cannot reproduce exactly (normalizers, prefix spaces, byte fallback,
// lstrip/rstrip added tokens), with the file and the field.
BpeDefinition read_hf_tokenizer_json(const std::string& path);

}  // namespace kvs::tokenizer
