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

// The files one row of a generation writes (each empty: not written).
struct GenerationOutputs {
  std::string logits;  // float32 [prompt + generated - 1, vocab] .npy: every position's logits
  // The policy's kept positions (selection_io.h JSON): the prompt's, or under a decoding schedule
  // or a teacher the positions held after the last step (prompt and generated).
  std::string kept;
  // Every decode-time compression's held positions, one JSON line each {"step", "seen", "layers",
  // "counts"} (a decoding schedule).
  std::string trace;
};

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
  // Teacher forcing: decode these tokens instead of greedy ones (decode_time.h).
  std::vector<int32_t> teacher_ids;
  // Each evicts its own copy of the prompt's cache, all from one prefill and on one shared decode
  // (policy_decode.h, decode_time.h); none: the full cache.
  std::vector<evict::Policy> policies;
  bool full_cache = false;  // also the full cache's row, after the policies' (always, without any)
  // Per row (each policy in order, then the full cache's): the files it writes; empty: none.
  std::vector<GenerationOutputs> outputs;
  model::LoadOptions load;
};

// One row's generation: a policy's, or the full cache's.
struct TextGenerationRow {
  std::vector<int32_t> generated_ids;  // the stop token included when one was generated
  std::string text;                    // generated text, special tokens skipped
  // Under a prefill-time policy: prompt entries kept (summed over layers and cache heads), the
  // bytes of keys and values its cache holds for them, and what the uniform layout at the same
  // mean budget would hold.
  int64_t kept_entries = 0;
  int64_t cache_bytes = 0;
  int64_t uniform_cache_bytes = 0;
  // Through the decode-time path: the most entries one KV head of one layer held, the
  // compressions, and per step -log p(token) under teacher forcing.
  int64_t largest_cache = 0;
  int64_t compressions = 0;
  std::vector<double> nll;
};

struct TextGenerationResult {
  std::vector<int32_t> prompt_ids;
  std::string device,
      dtype;  // what the model ran on and in (Transformer::device_label, dtype_label)
  std::optional<longbench::TokenSpan> question_span;  // a record's prompt only
  // Through the decode-time path (a decoding schedule on any policy, or a teacher).
  bool decode_time = false;
  std::vector<TextGenerationRow> rows;  // per policy in order, then the full cache's
};

// Each row's files from the paths given on the command line: for one row, the paths themselves
// (unless one names an existing directory); for several, each given path is a directory holding
// one file per row, named by the row's name (NAME.npy, NAME.kept.json, NAME.trace.jsonl), so the
// names must be distinct. generate_text creates the directories once the rows are computed.
std::vector<GenerationOutputs> per_row_outputs(const GenerationOutputs& given,
                                               const std::vector<std::string>& names);

TextGenerationResult generate_text(const TextGenerationRequest& request);

}  // namespace kvs::search
