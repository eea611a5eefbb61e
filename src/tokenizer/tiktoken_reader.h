// Meta's tiktoken-format tokenizer.model (Llama-3): one "<base64 token bytes> <rank>" per line.
// The file holds only the mergeable tokens; the pre-tokenizer pattern and the special tokens are
// defined in Meta's tokenizer.py, and are reproduced here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"

namespace kvs::tokenizer {

// The Llama-3 pre-tokenizer pattern (tokenizer.py's pat_str).
const std::string& llama3_pattern();

// Meta's Llama-3.1 special tokens in id order (they follow the last rank): 11 named ones, then
// <|reserved_special_token_2|> ... up to 256 in all.
std::vector<std::string> llama3_special_tokens();

// Ranks must be 0..N-1, each once, tokens distinct; empty lines are skipped (as tiktoken's
// loader does). Errors name the file and line.
BpeDefinition read_tiktoken_bpe(const std::string& path);

// Whether the first bytes of a file look like the tiktoken format (base64, space, digits).
bool looks_like_tiktoken(std::string_view head);

}  // namespace kvs::tokenizer
