#include "model/kv_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/error.h"

namespace kvs::model {

LayerCache assemble_layer_cache(const std::vector<std::pair<at::Tensor, at::Tensor>>& rows,
                                int64_t extra_capacity) {
  if (rows.empty()) throw Error("assemble_layer_cache: no rows");
  const at::Tensor& first = rows.front().first;
  const int64_t heads = first.size(0), head_dim = first.size(2);
  int64_t longest = 0;
  for (const auto& [k, v] : rows) {
    if (k.dim() != 3 || k.size(0) != heads || k.size(2) != head_dim || !k.sizes().equals(v.sizes()))
      throw Error("assemble_layer_cache: rows disagree in heads or head_dim");
    longest = std::max(longest, k.size(1));
  }
  const int64_t batch = static_cast<int64_t>(rows.size());
  LayerCache cache;
  cache.keys = at::empty({batch, heads, longest + extra_capacity, head_dim}, first.options());
  cache.values = at::empty_like(cache.keys);
  cache.prefix_len = longest;
  cache.used = longest;
  std::vector<int64_t> padding;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t kept = rows[b].first.size(1), pad = longest - kept;
    if (pad > 0) {
      cache.keys[b].narrow(1, 0, pad).zero_();
      cache.values[b].narrow(1, 0, pad).zero_();
    }
    cache.keys[b].narrow(1, pad, kept).copy_(rows[b].first);
    cache.values[b].narrow(1, pad, kept).copy_(rows[b].second);
    padding.push_back(pad);
  }
  if (std::any_of(padding.begin(), padding.end(), [](int64_t pad) { return pad > 0; })) {
    cache.prefix_mask = at::zeros({batch, 1, 1, longest}, first.options().dtype(at::kFloat));
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t pad = padding[static_cast<size_t>(b)];
      if (pad > 0)
        cache.prefix_mask[b].narrow(2, 0, pad).fill_(-std::numeric_limits<float>::infinity());
    }
    cache.row_padding = std::move(padding);
  }
  return cache;
}

void reserve_decode_slots(DecodeCache& cache, int64_t extra) {
  for (LayerCache& layer : cache.layers) {
    const int64_t capacity = layer.keys.size(2);
    if (capacity - layer.used >= extra) continue;
    const int64_t grown = std::max(layer.used + extra, capacity * 3 / 2);
    auto grow = [&](const at::Tensor& t) {
      at::Tensor bigger = at::zeros({t.size(0), t.size(1), grown, t.size(3)}, t.options());
      bigger.narrow(2, 0, layer.used).copy_(t.narrow(2, 0, layer.used));
      return bigger;
    };
    layer.keys = grow(layer.keys);
    layer.values = grow(layer.values);
  }
}

void keep_rows(DecodeCache& cache, const std::vector<int64_t>& rows) {
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || rows[i] >= cache.batch || (i > 0 && rows[i] <= rows[i - 1]))
      throw Error("keep_rows: rows must be ascending indices below the batch of " +
                  std::to_string(cache.batch));
  if (static_cast<int64_t>(rows.size()) != cache.batch && !cache.layers.empty()) {
    // One index for every layer: all layers live on one device.
    const at::Tensor index = at::tensor(rows, at::TensorOptions().dtype(at::kLong))
                                 .to(cache.layers.front().keys.device());
    for (LayerCache& layer : cache.layers) {
      layer.keys = layer.keys.index_select(0, index);
      layer.values = layer.values.index_select(0, index);
      if (layer.prefix_mask.defined()) layer.prefix_mask = layer.prefix_mask.index_select(0, index);
      if (!layer.row_padding.empty()) {
        std::vector<int64_t> kept_padding;
        for (int64_t r : rows) kept_padding.push_back(layer.row_padding[static_cast<size_t>(r)]);
        layer.row_padding = std::move(kept_padding);
      }
    }
  }
  cache.batch = static_cast<int64_t>(rows.size());
}

}  // namespace kvs::model
