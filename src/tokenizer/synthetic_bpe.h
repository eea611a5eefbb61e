// A deterministic byte-level BPE vocabulary of Llama-3's shape, for test checkpoints that cannot
// ship Meta's tokenizer: 128000 ranks (the 256 bytes, then lowercase strings with and without a
// leading space, shortest first, so every token is reachable by merges), written in Meta's
// tiktoken format. Loaded like the real one, its 256 special tokens take ids 128000..128255.
#pragma once

#include <string>

namespace kvs::tokenizer {

constexpr int kLlama3Ranks = 128000;

void write_synthetic_tiktoken(const std::string& path);

}  // namespace kvs::tokenizer
