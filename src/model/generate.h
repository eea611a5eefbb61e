// Greedy decoding over a batch of cache rows that share one prompt.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <set>
#include <vector>

#include "model/kv_cache.h"

namespace kvs::model {

class Transformer;

struct GreedyOptions {
  int64_t max_new_tokens = 32;
  int64_t min_new_tokens = 0;      // stop ids are masked out until this many tokens exist
  std::set<int32_t> stop_ids;      // EOS ids, plus e.g. the newline token for samsum
  bool collect_logits = false;     // keep every step's logits (generate --dump-logits)
};

struct GreedyResult {
  std::vector<std::vector<int32_t>> tokens;  // per row, including the stop token when one was hit
                                             // (as the reference's generate output does)
  at::Tensor step_logits;  // [steps, batch, vocab] float32 when collected: step s chose token s
  int64_t steps = 0;
};

// The logits a greedy step chooses from, [rows, vocab]: `logits` with the stop ids at -inf while
// the rows hold fewer than `min_new_tokens` generated tokens (`generated`: the count before this
// choice), else `logits` itself. The one rule of an answer's minimum length (greedy_decode, and the
// decode-time shared decode).
at::Tensor without_early_stops(const at::Tensor& logits, int64_t generated, int64_t min_new_tokens,
                               const std::set<int32_t>& stop_ids);

// first_logits [batch, vocab]: the logits that choose each row's first new token (from the
// prefill, shared by all rows). Always produces at least one token per row; a row stops at a stop
// id or max_new_tokens; the loop ends when every row has stopped. A stopped row leaves the batch
// (keep_rows), so afterwards `cache` holds only the rows that ran longest, unless collect_logits
// keeps the whole batch to the end.
GreedyResult greedy_decode(const Transformer& model, DecodeCache& cache,
                           const at::Tensor& first_logits, const GreedyOptions& options);

}  // namespace kvs::model
