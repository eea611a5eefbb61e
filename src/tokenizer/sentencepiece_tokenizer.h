// A SentencePiece model given by its pieces rather than a tokenizer.model file, as GGUF files of
// Llama/Mistral checkpoints carry it (tokenizer.ggml.model = "llama": tokens, scores, token types).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace kvs::tokenizer {

struct SentencePieceDefinition {
  struct Piece {
    std::string text;  // with U+2581 for spaces, as in the model
    float score = 0;
    int32_t type = 1;  // SentencePiece's (and GGUF's) types: 1 normal, 2 unknown, 3 control,
                       // 4 user-defined, 5 unused, 6 byte
  };
  std::string source;  // for error messages
  std::vector<Piece> pieces;
  int32_t unk = 0, bos = 1, eos = 2;
  bool adds_bos = true;
  bool add_dummy_prefix = true;  // GGUF's tokenizer.ggml.add_space_prefix
};

// The model Llama and Mistral ship: a BPE merging by piece score, byte fallback when the
// vocabulary has byte pieces, no normalization besides spaces becoming U+2581.
std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(const SentencePieceDefinition& definition);

}  // namespace kvs::tokenizer
