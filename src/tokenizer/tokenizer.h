// One interface for the tokenizers a checkpoint can bring: SentencePiece (Mistral, Llama-2) and
// byte-level BPE (Llama-3, tiktoken semantics; GPT-2-style merge lists, SmolLM2), from their own
// files or from a GGUF file's metadata. Torch-free: the LongBench module uses it for
// truncation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kvs::tokenizer {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Plain text to ids, without BOS or EOS. Text that looks like a special token ("<|eot_id|>",
  // "</s>") is encoded as ordinary text. The BPE encodes invalid UTF-8 in the input as U+FFFD
  // (as Python would have read it with errors='replace').
  virtual std::vector<int32_t> encode(const std::string& text) const = 0;
  // Like encode(), but special-token text in the input becomes that token's id (tiktoken's
  // allowed_special="all", HF's default). SentencePiece models parse no special tokens in text:
  // for them this is encode().
  virtual std::vector<int32_t> encode_with_special(const std::string& text) const {
    return encode(text);
  }
  // Ids to text. skip_special drops BOS/EOS/control tokens; otherwise they are rendered as text.
  // A byte sequence that is not valid UTF-8 (a character cut between tokens) becomes U+FFFD the way
  // Python's bytes.decode('utf-8', errors='replace') does.
  virtual std::string decode(const std::vector<int32_t>& ids, bool skip_special = true) const = 0;
  // The id of a special (control) token by its text ("<|eot_id|>", "</s>"), if there is one.
  virtual std::optional<int32_t> special_token_id(const std::string& text) const = 0;
  virtual int32_t bos_id() const = 0;
  // Whether prompts start with BOS (GGUF's tokenizer.ggml.add_bos_token; SmolLM2: no).
  virtual bool adds_bos() const { return true; }
  virtual const std::vector<int32_t>& eos_ids() const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual std::string kind() const = 0;  // "sentencepiece" or "bpe"
};

// SentencePiece model file (tokenizer.model in Mistral/Llama-2 checkpoints).
std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path);

// Meta's tiktoken-format tokenizer.model (Llama-3: "<base64 bytes> <rank>" per line) with the
// Llama-3 pre-tokenizer and Meta's 256 special tokens after the last rank.
std::unique_ptr<Tokenizer> load_tiktoken(const std::string& path);

// Hugging Face tokenizer.json holding a byte-level BPE (Llama-3's, GPT-2-style ones).
std::unique_ptr<Tokenizer> load_hf_tokenizer_json(const std::string& path);

// The tokenizer in a GGUF file's metadata: tokenizer.ggml.model "gpt2" (byte-level BPE with the
// pre-tokenizer tokenizer.ggml.pre: smollm, llama-bpe, gpt2, default) or "llama" (SentencePiece).
// Control tokens are the specials; add_bos_token is honoured; eos_ids() holds EOS and the
// end-of-turn tokens. Errors name the file and the field.
std::unique_ptr<Tokenizer> load_gguf_tokenizer(const std::string& path);

// One tokenizer file, its format told by content: GGUF, tokenizer.json (JSON), tiktoken text, or
// SentencePiece protobuf.
std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path);

// The tokenizer file of a --model argument (core/checkpoint.h's resolve_checkpoint): the .gguf
// file itself, or in a checkpoint directory, in this order: tokenizer.model (SentencePiece or
// tiktoken), tokenizer.json (byte-level BPE), original/tokenizer.model (where HF's Llama-3
// checkpoints keep Meta's tiktoken file).
std::string find_tokenizer_file(const std::string& model_arg);

// load_tokenizer_file(find_tokenizer_file(model_arg)).
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_arg);

}  // namespace kvs::tokenizer
