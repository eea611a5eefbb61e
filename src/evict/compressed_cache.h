// Eviction during prefill. CompressingObserver plugs into Transformer::prefill as its
// PrefillObserver and, for a BATCH of policies over one prompt, turns each layer's full K/V into
// one compressed cache row per policy: the window statistics are computed once per layer, each
// policy selects (layer_selection.h), and the kept entries are gathered and assembled into that
// layer's LayerCache (row b = policies[b]). The full K/V of the layer is not retained.
//
// Usage (the search evaluator, `generate --policy`):
//   CompressingObserver observer(policies, config.num_hidden_layers, max_new_tokens);
//   options.observer = &observer; options.keep_cache = false;
//   auto result = model.prefill(ids, options);        // first token from full attention
//   model::DecodeCache cache = observer.take_cache();  // then greedy_decode(model, cache, ...)
//
// Layout: kept entries in ascending position order, the W window tokens last; decode tokens are
// appended, never evicted; a ragged policy's (adakv's) heads keep different counts, and policies
// of one batch may keep different budgets: the layer is then stored in segments, each (row, head)
// holding its own count and no padding (model/kv_cache.h; footprints() gives the bytes beside the
// uniform layout's); next_position =
// the prompt length (RoPE continues from the original prompt, kept keys keep their rotation). A
// prompt shorter than a policy's budget keeps everything. A policy whose budgets move between
// layers (cake) is decided once every layer is seen: until then the observer holds each layer's
// candidates for it (LayerCandidates: at most layer_budget_cap() entries per KV head) and every
// policy's gathered rows, and assembles all layers at the last one. All policies of one batch share
// the granularity, so every row has the same cache_heads: num_attention_heads (query_head, K/V
// repeated per query head) or num_key_value_heads (kv_head), and the window of their window
// statistics (Policy::statistics_window); the prefill exposes the widest observation window and
// each policy reads its own last rows of it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "model/kv_cache.h"
#include "model/prefill_observer.h"

namespace kvs::evict {

class CompressingObserver final : public model::PrefillObserver {
 public:
  // num_layers: the model's layer count (pyramid budgets and profiles depend on it).
  // decode_capacity: slots reserved in every layer for the tokens still to be decoded.
  CompressingObserver(std::vector<Policy> policies, int64_t num_layers, int64_t decode_capacity);

  int64_t window() const override { return window_; }
  // What the policies' methods read beyond keys, values and the window (model::PrefillSignal).
  uint32_t signals() const override { return signals_; }
  void on_layer(const model::PrefillLayer& layer) override;

  // The assembled cache once every layer was seen (throws otherwise); leaves the observer empty.
  model::DecodeCache take_cache();

  // What one policy's row of the cache holds for the prompt, summed over the layers seen.
  struct Footprint {
    int64_t kept_entries = 0;   // prompt entries kept, summed over the cache heads
    int64_t held_bytes = 0;     // keys + values of its kept entries: the layer stores no padding
    int64_t uniform_bytes = 0;  // the same mean budget, uniform: cache_heads x ceil(mean) slots
    std::vector<std::vector<int64_t>> counts;  // per layer seen, per cache head: entries kept
  };

  const std::vector<Policy>& policies() const { return policies_; }
  // Per policy: prompt entries kept, summed over the cache heads and the layers seen.
  std::vector<int64_t> kept_entries() const;
  const std::vector<Footprint>& footprints() const { return footprints_; }
  // Per layer: the prompt positions policy `p` kept, [cache_heads, k] int64 (window last; ragged
  // heads left-padded with -1, as select_layer gives them).
  const std::vector<at::Tensor>& kept_positions(size_t p) const { return kept_positions_.at(p); }

 private:
  std::vector<Policy> policies_;
  int64_t num_layers_;
  int64_t decode_capacity_;
  int64_t window_;
  uint32_t signals_ = model::kSignalNone;
  model::DecodeCache cache_;
  std::vector<bool> seen_;
  std::vector<Footprint> footprints_;
  std::vector<std::vector<at::Tensor>> kept_positions_;  // [policy][layer]

  // A layer's selection, held until the layer is assembled (at once, or once every layer is seen
  // where some policy moves its budget between layers).
  struct PendingLayer {
    std::vector<at::Tensor> kept;                         // per policy, as select_layer gave it
    std::vector<std::pair<at::Tensor, at::Tensor>> rows;  // per policy: its kept keys, values
    std::vector<LayerCandidates> candidates;              // per policy (layer-budget ones)
  };
  std::vector<PendingLayer> pending_;
  bool defers_ = false;  // some policy moves its budget between layers
  int64_t slot_bytes_ = 0;

  void finish_layer_budgets();
  void assemble(size_t layer);
};

// The kept entries of one row: keys/values [kv_heads, n, d], kept [cache_heads, k] positions
// (cache head h reads KV head h / (cache_heads / kv_heads)) -> two [cache_heads, k, d] tensors;
// a -1 position (ragged padding) gives zero keys and values.
std::pair<at::Tensor, at::Tensor> gather_kept(const at::Tensor& keys, const at::Tensor& values,
                                              const at::Tensor& kept);

}  // namespace kvs::evict
