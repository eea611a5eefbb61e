// The one path from a prompt to answers under eviction: prefill once with full attention, build
// every policy's compressed cache during that prefill (layer by layer, through the runner's one
// observer seam, model/prefill_observer.h), then greedy-decode all policies as batches, one batch
// per cache layout (granularity and window), plus the uncompressed cache when asked. The
// evaluator (search questions) and `kvsearch generate` answer through it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "evict/compressed_cache.h"
#include "evict/policy.h"
#include "model/generate.h"

namespace kvs::model {
class Transformer;
}

namespace kvs::search {

struct PolicyDecodeOptions {
  model::GreedyOptions greedy;  // collect_logits needs exactly one row (one policy or full cache)
  bool full_cache = false;      // also decode from the uncompressed cache, answered last
};

struct PolicyDecodes {
  std::vector<std::vector<int32_t>> tokens;  // per policy in order, then the full cache if asked
  double prefill_seconds = 0;
  double decode_seconds = 0;
  // With greedy.collect_logits: every prompt position's logits [n, vocab] and the one row's
  // decode steps [steps, 1, vocab] (greedy_decode's step_logits), float32.
  at::Tensor prompt_logits;
  at::Tensor step_logits;
  // Per policy in order: per layer, the prompt positions it kept, [cache_heads, k] int64 (ragged
  // heads left-padded with -1).
  std::vector<std::vector<at::Tensor>> kept_positions;
  // Per policy in order: the entries it kept and the bytes its cache row holds for the prompt,
  // beside the uniform layout's at the same mean budget (compressed_cache.h).
  std::vector<evict::CompressingObserver::Footprint> footprints;
};

PolicyDecodes decode_with_policies(const model::Transformer& model, const std::vector<int32_t>& prompt_ids,
                                   const std::vector<evict::Policy>& policies,
                                   const PolicyDecodeOptions& options);

}  // namespace kvs::search
