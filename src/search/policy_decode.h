// The one path from a prompt to answers under eviction: prefill once with full attention, build
// every policy's compressed cache during that prefill (layer by layer, through the runner's one
// observer seam, model/prefill_observer.h), then greedy-decode all policies as batches, one batch
// per cache layout (granularity, window and observation anchor), plus the uncompressed cache when
// asked. The evaluator (search questions) and `kvsearch generate` answer through it.
//
// Observation protocols (Policy::observe): one prefill per point where the compressed part of
// the prompt ends. prompt_end: the whole prompt, observed by its last W rows. question: the prompt
// through the question's last token, observed by the question's last W rows, then the rest (chat
// suffix, answer prefix) extends every row uncompressed, positions continuing. context (kvpress's
// default): the ids before the question, observed by the context's last W rows, then the rest
// (question, suffix, answer prefix) the same way. Each prefill is causal as it stands: no
// observer row sees a key after it. The full-cache row always comes from the whole prompt's
// prefill: without eviction, prefill-then-extend computes the same attention (up to rounding).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "evict/compressed_cache.h"
#include "evict/policy.h"
#include "longbench/prompt.h"
#include "model/generate.h"
#include "search/decode_time.h"

namespace kvs::model {
class Transformer;
}

namespace kvs::search {

struct PolicyDecodeOptions {
  model::GreedyOptions greedy;  // collect_logits: every row's logits (PolicyDecodes)
  bool full_cache = false;      // also decode from the uncompressed cache, answered last
  // The question's tokens in the prompt ids; the question and context protocols need it.
  std::optional<longbench::TokenSpan> question;
  // Decode-time policies of the same prompt (the evaluator's): the whole prompt's prefill serves
  // them too (their observer beside this one's, the cache kept), and their decode runs from it
  // (PolicyDecodes::scheduled) before this one's; null: none.
  ScheduledDecode* scheduled = nullptr;
};

struct PolicyDecodes {
  std::vector<std::vector<int32_t>> tokens;  // per policy in order, then the full cache if asked
  int64_t prefills = 0;  // prefills run: one per point where a protocol ends the compressed part
  double prefill_seconds = 0;  // context protocol: its prefill and the extension by the rest
  double decode_seconds = 0;
  // With greedy.collect_logits, per row (policy order, then the full cache): every prompt
  // position's logits [n, vocab] (the rows of one prefill share one tensor; under the question and
  // context protocols the positions after the split are the row's own extension, on its
  // compressed cache) and its decode steps [tokens, vocab] (step s's logits chose token s),
  // float32.
  std::vector<at::Tensor> prompt_logits;
  std::vector<at::Tensor> step_logits;
  // Per policy in order: per layer, the prompt positions it kept, [cache_heads, k] int64 (ragged
  // heads left-padded with -1).
  std::vector<std::vector<at::Tensor>> kept_positions;
  // Per policy in order: the entries it kept and the bytes its cache row holds for the prompt,
  // beside the uniform layout's at the same mean budget (compressed_cache.h).
  std::vector<evict::CompressingObserver::Footprint> footprints;
  // With options.scheduled: its decode, from the whole prompt's prefill (its prefill_seconds 0:
  // the prefill is counted above).
  std::optional<DecodeTimeResult> scheduled;
};

PolicyDecodes decode_with_policies(const model::Transformer& model, const std::vector<int32_t>& prompt_ids,
                                   const std::vector<evict::Policy>& policies,
                                   const PolicyDecodeOptions& options);

}  // namespace kvs::search
