// Text in, text out: the whole `generate` path (tokenize, chat template, prefill, greedy decode,
// detokenize, optional logit dump) behind a torch-free header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/runtime.h"

namespace kvs::model {

struct TextGenerationRequest {
  std::string model_dir;
  std::string prompt_text;          // used when prompt_ids is empty
  std::vector<int32_t> prompt_ids;  // raw ids, used as given (no BOS added)
  int64_t max_new_tokens = 32;
  std::string chat_template = "none";
  std::string dump_logits_path;  // float32 [prompt + generated - 1, vocab] .npy when set
  LoadOptions load;
};

struct TextGenerationResult {
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> generated_ids;  // the stop token included when one was generated
  std::string text;                    // generated text, special tokens skipped
};

TextGenerationResult generate_text(const TextGenerationRequest& request);

}  // namespace kvs::model
