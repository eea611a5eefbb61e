// Text in, text out: the whole `generate` path (tokenize, chat template, prefill, greedy decode,
// detokenize, optional logit dump) behind a torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/runtime.h"

namespace kvs::model {

class PrefillObserver;
struct DecodeCache;

// Eviction plugs in here (evict/generation_policy.h): the compressor watches the prefill layer by
// layer and hands over the compressed cache that decoding then reads instead of the full one.
class CacheCompressor {
 public:
  virtual ~CacheCompressor() = default;
  virtual PrefillObserver& observer() = 0;
  virtual DecodeCache take_cache() = 0;
};
using CacheCompressorFactory =
    std::function<std::unique_ptr<CacheCompressor>(int64_t num_layers, int64_t decode_capacity)>;

struct TextGenerationRequest {
  std::string model_dir;
  std::string prompt_text;          // used when prompt_ids is empty
  std::vector<int32_t> prompt_ids;  // raw ids, used as given (no BOS added)
  int64_t max_new_tokens = 32;
  std::string chat_template = "none";
  std::string dump_logits_path;  // float32 [prompt + generated - 1, vocab] .npy when set
  CacheCompressorFactory compressor;  // unset: decode from the full cache
  LoadOptions load;
};

struct TextGenerationResult {
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> generated_ids;  // the stop token included when one was generated
  std::string text;                    // generated text, special tokens skipped
};

TextGenerationResult generate_text(const TextGenerationRequest& request);

}  // namespace kvs::model
