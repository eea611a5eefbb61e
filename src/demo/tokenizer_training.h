// The demo's SentencePiece tokenizer, trained on generated task text with the sentencepiece
// trainer: BPE with byte fallback, identity normalization, unk 0 / BOS 1 / EOS 2 like Mistral's.
// Unlike Mistral's, digits are not split, so "Paragraph 17" ends in one number piece.
#pragma once

#include <cstdint>
#include <string>

namespace kvs::demo {

struct TokenizerTrainingOptions {
  std::string model_path;     // where tokenizer.model is written
  int64_t vocab_size = 2000;  // includes the 3 special and 256 byte pieces
  int64_t corpus_examples = 200;  // generated examples per task
  uint64_t seed = 0;          // of the generated corpus
};

// Trains and writes the model; returns the number of corpus lines it was trained on.
int64_t train_demo_tokenizer(const TokenizerTrainingOptions& options);

}  // namespace kvs::demo
