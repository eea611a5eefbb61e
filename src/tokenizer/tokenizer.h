// One interface for the tokenizers a checkpoint can bring (SentencePiece now, byte-level BPE for
// Llama-3 later). Torch-free: the LongBench module uses it for truncation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvs::tokenizer {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Plain text to ids, without BOS or EOS.
  virtual std::vector<int32_t> encode(const std::string& text) const = 0;
  // Ids to text. skip_special drops BOS/EOS/control tokens; otherwise they are rendered as text.
  virtual std::string decode(const std::vector<int32_t>& ids, bool skip_special = true) const = 0;
  virtual int32_t bos_id() const = 0;
  virtual const std::vector<int32_t>& eos_ids() const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual std::string kind() const = 0;  // "sentencepiece", ...
};

// SentencePiece model file (tokenizer.model in Mistral/Llama-2 checkpoints).
std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path);

// The tokenizer a checkpoint directory holds (tokenizer.model for now).
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir);

}  // namespace kvs::tokenizer
