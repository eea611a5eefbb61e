#include "model/kv_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/error.h"

namespace kvs::model {

LayerCache assemble_layer_cache(const std::vector<std::pair<at::Tensor, at::Tensor>>& rows,
                                int64_t extra_capacity,
                                const std::vector<std::vector<int64_t>>& head_counts) {
  if (rows.empty()) throw Error("assemble_layer_cache: no rows");
  const at::Tensor& first = rows.front().first;
  const int64_t heads = first.size(0), head_dim = first.size(2);
  if (!head_counts.empty() && head_counts.size() != rows.size())
    throw Error("assemble_layer_cache: head_counts must give one list per row");
  int64_t longest = 0;
  for (size_t b = 0; b < rows.size(); ++b) {
    const auto& [k, v] = rows[b];
    if (k.dim() != 3 || k.size(0) != heads || k.size(2) != head_dim || !k.sizes().equals(v.sizes()))
      throw Error("assemble_layer_cache: rows disagree in heads or head_dim");
    if (!head_counts.empty()) {
      const std::vector<int64_t>& counts = head_counts[b];
      if (static_cast<int64_t>(counts.size()) != heads ||
          std::any_of(counts.begin(), counts.end(),
                      [&](int64_t c) { return c < 0 || c > k.size(1); }))
        throw Error("assemble_layer_cache: head_counts must give each head a count <= its row's");
    }
    longest = std::max(longest, k.size(1));
  }
  const int64_t batch = static_cast<int64_t>(rows.size());
  LayerCache cache;
  cache.keys = at::empty({batch, heads, longest + extra_capacity, head_dim}, first.options());
  cache.values = at::empty_like(cache.keys);
  cache.prefix_len = longest;
  cache.used = longest;
  std::vector<int64_t> padding;  // per (row, head)
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t kept = rows[b].first.size(1), pad = longest - kept;
    if (pad > 0) {
      cache.keys[b].narrow(1, 0, pad).zero_();
      cache.values[b].narrow(1, 0, pad).zero_();
    }
    cache.keys[b].narrow(1, pad, kept).copy_(rows[b].first);
    cache.values[b].narrow(1, pad, kept).copy_(rows[b].second);
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t held = head_counts.empty() ? kept : head_counts[b][static_cast<size_t>(h)];
      if (held < kept) {  // the head's own padding inside the row's slots: zero, as above
        cache.keys[b][h].narrow(0, pad, kept - held).zero_();
        cache.values[b][h].narrow(0, pad, kept - held).zero_();
      }
      padding.push_back(longest - held);
    }
  }
  if (std::any_of(padding.begin(), padding.end(), [](int64_t pad) { return pad > 0; })) {
    cache.prefix_mask = at::zeros({batch, heads, 1, longest}, first.options().dtype(at::kFloat));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t pad = padding[static_cast<size_t>(b * heads + h)];
        if (pad > 0)
          cache.prefix_mask[b][h].narrow(1, 0, pad).fill_(-std::numeric_limits<float>::infinity());
      }
    cache.head_padding = std::move(padding);
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
      if (!layer.head_padding.empty()) {
        const int64_t heads = layer.keys.size(1);
        std::vector<int64_t> kept_padding;
        for (int64_t r : rows)
          for (int64_t h = 0; h < heads; ++h)
            kept_padding.push_back(layer.head_padding[static_cast<size_t>(r * heads + h)]);
        layer.head_padding = std::move(kept_padding);
      }
    }
  }
  if (!cache.row_positions.empty()) {
    std::vector<int64_t> kept;
    for (int64_t r : rows) kept.push_back(cache.row_positions[static_cast<size_t>(r)]);
    cache.row_positions = std::move(kept);
  }
  cache.batch = static_cast<int64_t>(rows.size());
}

}  // namespace kvs::model
