// Text in, text out: the whole `generate` path (tokenize, chat template, prefill, optional
// eviction, greedy decode, detokenize, optional logit dump) behind a torch-free header. It sits
// above both the runner and eviction and answers through decode_with_policies, the path the
// search evaluator uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evict/policy.h"
#include "longbench/prompt.h"
#include "model/runtime.h"

namespace kvs::search {

struct TextGenerationRequest {
  std::string model_dir;
  std::string prompt_text;          // used when prompt_ids is empty and no record is named
  std::vector<int32_t> prompt_ids;  // raw ids, used as given (no BOS added)
  // A data record's prompt instead (the search's prompt rules, chat template "auto"), with its
  // question span, which the question and context observation protocols need.
  std::string longbench_dir;
  std::string dataset;  // set: the prompt of record `record` of this dataset
  size_t record = 0;
  int64_t max_new_tokens = 32;
  std::string chat_template = "none";
  std::string dump_logits_path;         // float32 [prompt + generated - 1, vocab] .npy when set
  // The policy's kept positions (selection_io.h JSON) when set: the prompt's, or under a decoding
  // schedule or a teacher the positions held after the last step (prompt and generated).
  std::string dump_kept_path;
  // Every decode-time compression's held positions, one JSON line each {"step", "seen", "layers",
  // "counts"} (a decoding schedule).
  std::string trace_kept_path;
  // Teacher forcing: decode these tokens instead of greedy ones (decode_time.h).
  std::vector<int32_t> teacher_ids;
  std::optional<evict::Policy> policy;  // evicts the prompt's cache; unset: the full cache
  model::LoadOptions load;
};

struct TextGenerationResult {
  std::vector<int32_t> prompt_ids;
  std::string device,
      dtype;  // what the model ran on and in (Transformer::device_label, dtype_label)
  std::optional<longbench::TokenSpan> question_span;  // a record's prompt only
  std::vector<int32_t> generated_ids;  // the stop token included when one was generated
  std::string text;                    // generated text, special tokens skipped
  // Under a policy: prompt entries kept (summed over layers and cache heads), the bytes of keys
  // and values its cache holds for them (ragged heads padded to each layer's longest), and what
  // the uniform layout at the same mean budget would hold.
  int64_t kept_entries = 0;
  int64_t cache_bytes = 0;
  int64_t uniform_cache_bytes = 0;
  // Through the decode-time path (a decoding schedule or a teacher): the most entries one KV head
  // of one layer held, the compressions, and per step -log p(token) under teacher forcing.
  bool decode_time = false;
  int64_t largest_cache = 0;
  int64_t compressions = 0;
  std::vector<double> nll;
};

TextGenerationResult generate_text(const TextGenerationRequest& request);

}  // namespace kvs::search
