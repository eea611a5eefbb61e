// Eviction while decoding: every policy of a prompt on one shared decode. One prefill with full
// attention compresses the prompt for the policies that have a budget (their prefill-time
// selection, layout_groups.h) and keeps it whole for the decode-only ones; then all policies
// decode as the rows of one batch, the weights read once per step for all of them. After each
// step, a policy whose decoding schedule (evict/decoding.h) is due compresses its own row: its
// method scores the row's cache (keys and values in position order, the buffered steps' queries)
// and keeps `target` entries per KV head and layer. A kept entry keeps the position it was
// written at; the next token's position is the count of tokens seen.
//
// Each row keeps its own cache, of its own length: rows of different lengths are stored in
// segments (model/kv_cache.h: no padding held; the attention masks it). A row that compresses
// rewrites its own entries in place (model::replace_row_entries), the other rows untouched, while
// the layers hold the slots to the next compression; else every layer is re-laid, reserving them. A
// head-wise row (adakv, mixkv on its adakv host) holds different counts per KV head; its
// compressions score each head over its own entries (model::PrefillLayer::head_counts) and share
// the layer's target out between the heads again. The full cache, when asked for, decodes as a
// batch of its own, so that the policies' batch stays bounded; each policy's next-token
// distribution is then compared with the full cache's at every step (KL divergence, top-1
// agreement).
//
// Steps: step s feeds token s (1-based) of the continuation, a teacher's or the row's own greedy
// choice, and its logits predict token s + 1; token 1 is predicted by the prefill's last
// position, which every row shares. Per-step measures belong to the prediction of token s.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "evict/policy.h"
#include "model/transformer.h"

namespace kvs::search {

struct DecodeTimeOptions {
  int64_t max_new_tokens = 32;  // tokens each row generates (greedy); ignored with a teacher
  // Non-empty: teacher forcing, every row is fed these tokens (its own choices are ignored).
  std::vector<int32_t> teacher;
  std::set<int32_t> stop_ids;  // greedy only: a row stops after one of these
  // Greedy only: the stop ids cannot be chosen before a row has this many tokens (the answer's
  // minimum length, as model::GreedyOptions).
  int64_t min_new_tokens = 0;
  bool full_cache = false;     // also decode the uncompressed cache, its row last
  bool trace = false;          // record every compression's kept positions
};

// One compression of one row: the positions each KV head of each layer holds after it.
struct CompressionRecord {
  int64_t step = 0;              // the step after which it ran (1-based)
  int64_t seen = 0;              // tokens seen: the prompt and the steps fed
  std::vector<at::Tensor> held;  // per layer: [kv_heads, k] int64 positions, ascending
};

struct DecodeTimeRow {
  std::vector<int32_t> tokens;   // the continuation: the teacher's, or greedy (stop id included)
  std::vector<at::Tensor> held;  // per layer: [kv_heads, k] positions held after the last step
  // The most entries a KV head of one layer held at any point (before a compression evicts); a
  // head-wise row's heads hold different counts: their mean, rounded up (what its memory holds).
  int64_t largest_cache = 0;
  // Per step: the entries a head holds after the step (the largest over layers; a head-wise row's
  // heads: their mean).
  std::vector<int64_t> cache_size;
  int64_t compressions = 0;
  std::vector<double> nll;    // per step: -log p(fed token s) (teacher forcing)
  std::vector<double> kl;     // per step: KL(full cache || this row) (full_cache)
  std::vector<uint8_t> top1;  // per step: this row's argmax equals the full cache's (full_cache)
  std::vector<CompressionRecord> trace;  // with options.trace
};

struct DecodeTimeResult {
  std::vector<DecodeTimeRow> rows;  // per policy in order, then the full cache when asked
  int64_t steps = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;    // the steps' forwards
  double compress_seconds = 0;  // the compressions (scoring, gathering, re-laying the rows)
  // The most bytes of keys and values the policies' batch cache held at once (the slots reserved
  // for the steps to the next re-lay included), and the full cache's.
  int64_t peak_cache_bytes = 0;
  int64_t full_cache_bytes = 0;
  int64_t entry_bytes = 0;  // one cache entry's key and value (the policies' cache dtype)
};

// Per layer and KV head, the entries a row holds after its last step (a head-wise row's padding
// left out).
std::vector<std::vector<int64_t>> held_counts(const DecodeTimeRow& row);

// The mean of a row's per-step measures (throws kvs::Error when there are none), and their means
// over consecutive blocks of `block` steps (the last block may be shorter).
double step_mean(const std::vector<double>& values);
std::vector<double> block_means(const std::vector<double>& values, int64_t block);

// The shared decode in two halves around the prompt's prefill, so that a caller whose own prefill
// of the same prompt serves other policies (the evaluator's prefill-time ones) runs one prefill:
// construct it (the policies are checked here), prefill the whole prompt with prefill_options()
// (its observer fanned in beside the caller's, its cache kept), then run() on that result. The
// prompt ids, policies and options must outlive it.
class ScheduledDecode {
 public:
  ScheduledDecode(const model::Transformer& model, const std::vector<int32_t>& prompt_ids,
                  const std::vector<evict::Policy>& policies, const DecodeTimeOptions& options);
  ~ScheduledDecode();
  // What the whole prompt's prefill must do for it: its observer (null: none), whether the cache
  // is kept (the decode-only rows start from it) and the slots the full cache's row reserves.
  model::PrefillOptions prefill_options();
  // The decode from that prefill (once). Reads pre.cache; with options.full_cache takes it for the
  // full cache's row. prefill_seconds is left 0: the caller timed its prefill.
  DecodeTimeResult run(model::PrefillResult& pre);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Policies may have a budget (prefill compression), a decoding schedule, or both; each must suit
// the decode-time cache (evict::check_decoding) and observe at the prompt's end.
DecodeTimeResult decode_with_schedules(const model::Transformer& model,
                                       const std::vector<int32_t>& prompt_ids,
                                       const std::vector<evict::Policy>& policies,
                                       const DecodeTimeOptions& options);

// The full cache's own greedy continuation of the prompt, `steps` tokens (no stop token): what
// fidelity teacher-forces every policy on. Its decode's timings go to `timing` where given.
std::vector<int32_t> full_cache_continuation(const model::Transformer& model,
                                             const std::vector<int32_t>& prompt_ids, int64_t steps,
                                             DecodeTimeResult* timing = nullptr);

}  // namespace kvs::search
