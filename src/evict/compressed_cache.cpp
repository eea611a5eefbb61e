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
  const at::Tensor flat = (head * n + kept).reshape({-1});
  return {keys.reshape({kv_heads * n, d}).index_select(0, flat).view({rows, count, d}),
          values.reshape({kv_heads * n, d}).index_select(0, flat).view({rows, count, d})};
}

CompressingObserver::CompressingObserver(std::vector<Policy> policies, int64_t num_layers,
                                         int64_t decode_capacity)
    : policies_(std::move(policies)),
      num_layers_(num_layers),
      decode_capacity_(decode_capacity),
      seen_(static_cast<size_t>(std::max<int64_t>(num_layers, 0)), false),
      kept_entries_(policies_.size(), 0),
      kept_positions_(policies_.size(), std::vector<at::Tensor>(seen_.size())) {
  if (policies_.empty()) throw Error("compressed cache: no policy given");
  if (num_layers < 1)
    throw Error(strfmt("compressed cache: num_layers %lld < 1", (long long)num_layers));
  if (decode_capacity < 0) throw Error("compressed cache: negative decode capacity");
  const Policy& first = policies_.front();
  for (size_t p = 0; p < policies_.size(); ++p) {
    policies_[p].validate(strfmt("policy %zu", p));
    if (policies_[p].observation_window() != first.observation_window() ||
        policies_[p].granularity != first.granularity) {
      throw error_at(strfmt("policy %zu (%s)", p, policies_[p].name.c_str()),
                     "window and granularity must equal policy 0's: one cache layout per batch");
    }
  }
  window_ = first.observation_window();
  for (const Policy& policy : policies_) {
    const uint32_t needs = policy_needs(policy);
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
  const std::vector<at::Tensor> kept = select_layer(layer, policies_, num_layers_);
  std::vector<std::pair<at::Tensor, at::Tensor>> rows;
  rows.reserve(kept.size());
  for (size_t p = 0; p < kept.size(); ++p) {
    rows.push_back(gather_kept(layer.keys, layer.values, kept[p]));
    kept_entries_[p] += kept[p].size(1);
    kept_positions_[p][static_cast<size_t>(layer.layer)] = kept[p];
  }
  cache_.layers[static_cast<size_t>(layer.layer)] =
      model::assemble_layer_cache(rows, decode_capacity_);
  cache_.next_position = layer.keys.size(1);
  seen_[static_cast<size_t>(layer.layer)] = true;
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
  return out;
}

}  // namespace kvs::evict
