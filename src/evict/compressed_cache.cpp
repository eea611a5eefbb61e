#include "evict/compressed_cache.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "core/error.h"
#include "core/strfmt.h"
#include "evict/layer_selection.h"
#include "evict/method.h"

namespace kvs::evict {

std::pair<at::Tensor, at::Tensor> gather_kept(const at::Tensor& keys, const at::Tensor& values,
                                              const at::Tensor& kept) {
  const int64_t kv_heads = keys.size(0), n = keys.size(1), d = keys.size(2);
  const int64_t rows = kept.size(0), count = kept.size(1);
  if (kv_heads == 0 || rows % kv_heads != 0) {
    throw error_at("gather_kept", strfmt("%lld cache heads are not a multiple of %lld KV heads",
                                         (long long)rows, (long long)kv_heads));
  }
  const at::Tensor head =
      at::arange(rows, kept.options()).div(rows / kv_heads, "floor").unsqueeze(1);
  const at::Tensor padded = kept.lt(0);
  const bool ragged = padded.any().item<bool>();
  const at::Tensor flat = (head * n + (ragged ? kept.clamp_min(0) : kept)).reshape({-1});
  at::Tensor k = keys.reshape({kv_heads * n, d}).index_select(0, flat).view({rows, count, d});
  at::Tensor v = values.reshape({kv_heads * n, d}).index_select(0, flat).view({rows, count, d});
  if (ragged) {
    const at::Tensor pad = padded.unsqueeze(-1);
    k.masked_fill_(pad, 0);
    v.masked_fill_(pad, 0);
  }
  return {k, v};
}

CompressingObserver::CompressingObserver(std::vector<Policy> policies, int64_t num_layers,
                                         int64_t decode_capacity)
    : policies_(std::move(policies)),
      num_layers_(num_layers),
      decode_capacity_(decode_capacity),
      seen_(static_cast<size_t>(std::max<int64_t>(num_layers, 0)), false),
      footprints_(policies_.size()),
      kept_positions_(policies_.size(), std::vector<at::Tensor>(seen_.size())),
      pending_(seen_.size()) {
  if (policies_.empty()) throw Error("compressed cache: no policy given");
  if (num_layers < 1)
    throw Error(strfmt("compressed cache: num_layers %lld < 1", (long long)num_layers));
  if (decode_capacity < 0) throw Error("compressed cache: negative decode capacity");
  const Policy& first = policies_.front();
  std::optional<int64_t> statistics;  // the first window-statistics window
  window_ = 0;
  for (size_t p = 0; p < policies_.size(); ++p) {
    const Policy& policy = policies_[p];
    policy.validate(strfmt("policy %zu", p));
    const std::string where = strfmt("policy %zu (%s)", p, policy.name.c_str());
    if (policy.cache_per_query_head() != first.cache_per_query_head())
      throw error_at(where, "granularity must equal policy 0's: one cache layout per batch");
    if (const auto own = policy.statistics_window()) {
      if (statistics && *statistics != *own)
        throw error_at(where, "its window statistics' window differs from the batch's first");
      statistics = own;
    }
    window_ = std::max(window_, policy.observation_window());  // each reads its own last rows
    if (policy.method->info().layer_budgets) defers_ = true;
  }
  for (const Policy& policy : policies_) {
    const uint32_t needs = policy.needs();
    if (needs & kNeedsColumnSums) signals_ |= model::kSignalColumnSums;
    if (needs & kNeedsPreRopeQueries) signals_ |= model::kSignalPreRopeQueries;
    if (needs & kNeedsOutputProjection) signals_ |= model::kSignalOutputProjection;
  }
  cache_.layers.resize(static_cast<size_t>(num_layers));
  cache_.batch = static_cast<int64_t>(policies_.size());
}

void CompressingObserver::on_layer(const model::PrefillLayer& layer) {
  if (layer.layer < 0 || layer.layer >= num_layers_) {
    throw Error(strfmt("compressed cache: layer %lld outside [0, %lld)", (long long)layer.layer,
                       (long long)num_layers_));
  }
  PendingLayer& pending = pending_[static_cast<size_t>(layer.layer)];
  pending.kept = select_layer(layer, policies_, num_layers_, pending.candidates);
  pending.rows.clear();
  for (const at::Tensor& kept : pending.kept)
    pending.rows.push_back(gather_kept(layer.keys, layer.values, kept));
  // Bytes of one slot of keys and values in the cache.
  slot_bytes_ = 2 * layer.keys.size(2) * int64_t(layer.keys.element_size());
  cache_.next_position = layer.keys.size(1);
  seen_[static_cast<size_t>(layer.layer)] = true;
  if (!defers_) return assemble(static_cast<size_t>(layer.layer));
  if (std::all_of(seen_.begin(), seen_.end(), [](bool b) { return b; })) finish_layer_budgets();
}

void CompressingObserver::finish_layer_budgets() {
  for (size_t p = 0; p < policies_.size(); ++p) {
    if (!pending_.front().candidates[p].positions.defined()) continue;  // not a layer-budget one
    std::vector<LayerCandidates> layers;
    for (PendingLayer& pending : pending_) layers.push_back(std::move(pending.candidates[p]));
    const LayerBudgetChoice choice = evict::finish_layer_budgets(policies_[p], layers);
    for (size_t l = 0; l < pending_.size(); ++l) {
      PendingLayer& pending = pending_[l];
      auto& [k, v] = pending.rows[p];
      const at::Tensor chosen = choice.chosen[l].to(k.device());
      const at::Tensor slots = chosen.unsqueeze(-1).expand({-1, -1, k.size(2)});
      k = k.gather(1, slots);
      v = v.gather(1, slots);
      pending.kept[p] = pending.kept[p].gather(1, chosen.to(pending.kept[p].device()));
    }
  }
  for (size_t l = 0; l < pending_.size(); ++l) assemble(l);
}

void CompressingObserver::assemble(size_t layer) {
  PendingLayer& pending = pending_[layer];
  std::vector<std::vector<int64_t>> head_counts;
  bool ragged = false;
  for (size_t p = 0; p < pending.kept.size(); ++p) {
    const at::Tensor& kept = pending.kept[p];
    head_counts.push_back(kept_counts(kept));
    const int64_t heads = kept.size(0), longest = kept.size(1);
    int64_t total = 0;
    for (int64_t c : head_counts.back()) {
      total += c;
      ragged = ragged || c != longest;
    }
    Footprint& f = footprints_[p];
    f.counts.resize(seen_.size());
    f.counts[layer] = head_counts.back();
    f.kept_entries += total;
    f.held_bytes += total * slot_bytes_;
    f.uniform_bytes += heads * ((total + heads - 1) / std::max<int64_t>(heads, 1)) * slot_bytes_;
    kept_positions_[p][layer] = kept;
  }
  cache_.layers[layer] = model::assemble_layer_cache(
      pending.rows, decode_capacity_, ragged ? head_counts : std::vector<std::vector<int64_t>>{});
  pending_[layer] = PendingLayer{};
}

std::vector<int64_t> CompressingObserver::kept_entries() const {
  std::vector<int64_t> out;
  for (const Footprint& f : footprints_) out.push_back(f.kept_entries);
  return out;
}

model::DecodeCache CompressingObserver::take_cache() {
  for (size_t l = 0; l < seen_.size(); ++l) {
    if (!seen_[l]) throw Error(strfmt("compressed cache: layer %zu was never observed", l));
  }
  model::DecodeCache out = std::move(cache_);
  cache_ = model::DecodeCache{};
  cache_.layers.resize(seen_.size());
  cache_.batch = out.batch;
  seen_.assign(seen_.size(), false);
  pending_.assign(seen_.size(), PendingLayer{});
  return out;
}

}  // namespace kvs::evict
