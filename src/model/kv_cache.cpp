#include "model/kv_cache.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/error.h"

namespace kvs::model {

namespace {

int64_t padding_of(const LayerCache& layer, int64_t i) {
  return layer.head_padding.empty() ? 0 : layer.head_padding[static_cast<size_t>(i)];
}

// The last `held` filled slots of row b's head h, {keys, values} views [held, head_dim] (they must
// not reach into the head's padding).
std::pair<at::Tensor, at::Tensor> head_tail(const LayerCache& layer, int64_t b, int64_t h,
                                            int64_t held) {
  const int64_t i = b * layer.heads + h;
  if (held > layer.used - padding_of(layer, i))
    throw Error("last_entries: " + std::to_string(held) + " entries of head " + std::to_string(h) +
                " reach into its padding");
  if (!layer.segmented())
    return {layer.keys[b][h].narrow(0, layer.used - held, held),
            layer.values[b][h].narrow(0, layer.used - held, held)};
  const int64_t from = layer.segment_base[static_cast<size_t>(i)] + layer.used - held;
  return {layer.keys.narrow(0, from, held), layer.values.narrow(0, from, held)};
}

// A segmented layer re-laid with `capacity` slots per (row, head), keeping the given rows (in
// order): each segment's filled slots are copied, its reserved ones left unwritten.
void relay_segments(LayerCache& layer, const std::vector<int64_t>& rows, int64_t capacity) {
  const int64_t heads = layer.heads;
  std::vector<int64_t> padding, base;
  int64_t total = 0;
  for (int64_t r : rows)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t pad = padding_of(layer, r * heads + h);
      padding.push_back(pad);
      base.push_back(total - pad);
      total += capacity - pad;
    }
  at::Tensor keys = at::empty({total, layer.keys.size(1)}, layer.keys.options());
  at::Tensor values = at::empty_like(keys);
  for (size_t j = 0; j < rows.size(); ++j)
    for (int64_t h = 0; h < heads; ++h) {
      const size_t to = j * static_cast<size_t>(heads) + static_cast<size_t>(h);
      const int64_t from = rows[j] * heads + h, pad = padding[to];
      const int64_t filled = layer.used - pad;
      if (filled <= 0) continue;
      const int64_t src = layer.segment_base[static_cast<size_t>(from)] + pad;
      keys.narrow(0, base[to] + pad, filled).copy_(layer.keys.narrow(0, src, filled));
      values.narrow(0, base[to] + pad, filled).copy_(layer.values.narrow(0, src, filled));
    }
  layer.keys = std::move(keys);
  layer.values = std::move(values);
  layer.segment_base = std::move(base);
  layer.capacity = capacity;
}

// The additive mask over the slots that some (row, head) pads, rebuilt from head_padding at a
// width of `width` slots.
void mask_padding(LayerCache& layer, int64_t width) {
  const auto options = at::TensorOptions().dtype(at::kLong);
  const at::Tensor pads =
      at::tensor(layer.head_padding, options).view({layer.batch, layer.heads, 1, 1});
  const at::Tensor slots = at::arange(width, options).view({1, 1, 1, width});
  layer.prefix_mask = at::zeros({layer.batch, layer.heads, 1, width}, at::kFloat)
                          .masked_fill_(slots.lt(pads), -std::numeric_limits<float>::infinity())
                          .to(layer.keys.device());
  layer.prefix_len = width;
}

}  // namespace

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
  auto held = [&](size_t b, int64_t h) {
    return head_counts.empty() ? rows[b].first.size(1) : head_counts[b][static_cast<size_t>(h)];
  };
  std::vector<int64_t> padding;  // per (row, head)
  for (size_t b = 0; b < rows.size(); ++b)
    for (int64_t h = 0; h < heads; ++h) padding.push_back(longest - held(b, h));
  LayerCache cache;
  cache.batch = batch;
  cache.heads = heads;
  cache.capacity = longest + extra_capacity;
  cache.prefix_len = longest;
  cache.used = longest;
  if (std::none_of(padding.begin(), padding.end(), [](int64_t pad) { return pad > 0; })) {
    cache.keys = at::empty({batch, heads, cache.capacity, head_dim}, first.options());
    cache.values = at::empty_like(cache.keys);
    for (int64_t b = 0; b < batch; ++b) {
      cache.keys[b].narrow(1, 0, longest).copy_(rows[static_cast<size_t>(b)].first);
      cache.values[b].narrow(1, 0, longest).copy_(rows[static_cast<size_t>(b)].second);
    }
    return cache;
  }
  // Segmented: each (row, head) its held entries, then its reserved slots.
  int64_t total = 0;
  for (int64_t pad : padding) {
    cache.segment_base.push_back(total - pad);
    total += cache.capacity - pad;
  }
  cache.keys = at::empty({total, head_dim}, first.options());
  cache.values = at::empty_like(cache.keys);
  for (size_t b = 0; b < rows.size(); ++b) {
    const auto& [k, v] = rows[b];
    for (int64_t h = 0; h < heads; ++h) {
      const size_t i = b * static_cast<size_t>(heads) + static_cast<size_t>(h);
      const int64_t count = held(b, h), at = cache.segment_base[i] + padding[i];
      cache.keys.narrow(0, at, count).copy_(k[h].narrow(0, k.size(1) - count, count));
      cache.values.narrow(0, at, count).copy_(v[h].narrow(0, v.size(1) - count, count));
    }
  }
  cache.head_padding = std::move(padding);
  mask_padding(cache, longest);
  return cache;
}

void append_entries(LayerCache& layer, const at::Tensor& keys, const at::Tensor& values) {
  const int64_t t = keys.size(2);
  if (layer.used + t > layer.capacity)
    throw Error("append_entries: " + std::to_string(t) + " tokens past the layer's " +
                std::to_string(layer.capacity) + " reserved slots");
  if (!layer.segmented()) {
    layer.keys.narrow(2, layer.used, t).copy_(keys);
    layer.values.narrow(2, layer.used, t).copy_(values);
  } else {
    // Every (row, head)'s t slots in one index: segment_base[i] + used + j, in keys' row order.
    std::vector<int64_t> slots;
    slots.reserve(layer.segment_base.size() * static_cast<size_t>(t));
    for (int64_t base : layer.segment_base)
      for (int64_t j = 0; j < t; ++j) slots.push_back(base + layer.used + j);
    const at::Tensor index =
        at::tensor(slots, at::TensorOptions().dtype(at::kLong)).to(layer.keys.device());
    const int64_t d = layer.keys.size(1);
    layer.keys.index_copy_(0, index, keys.reshape({-1, d}).to(layer.keys.scalar_type()));
    layer.values.index_copy_(0, index, values.reshape({-1, d}).to(layer.values.scalar_type()));
  }
  layer.used += t;
}

std::pair<at::Tensor, at::Tensor> last_entries(const LayerCache& layer, int64_t b, int64_t count) {
  if (!layer.segmented())
    return {layer.keys[b].narrow(1, layer.used - count, count),
            layer.values[b].narrow(1, layer.used - count, count)};
  std::vector<at::Tensor> keys, values;
  for (int64_t h = 0; h < layer.heads; ++h) {
    auto [k, v] = head_tail(layer, b, h, count);
    keys.push_back(k);
    values.push_back(v);
  }
  return {at::stack(keys), at::stack(values)};
}

std::pair<at::Tensor, at::Tensor> last_entries(const LayerCache& layer, int64_t b, int64_t count,
                                               const std::vector<int64_t>& counts) {
  if (static_cast<int64_t>(counts.size()) != layer.heads)
    throw Error("last_entries: counts must give one count per cache head");
  if (std::all_of(counts.begin(), counts.end(), [&](int64_t c) { return c == count; }))
    return last_entries(layer, b, count);
  at::Tensor keys = at::zeros({layer.heads, count, layer.keys.size(-1)}, layer.keys.options());
  at::Tensor values = at::zeros_like(keys);
  for (int64_t h = 0; h < layer.heads; ++h) {
    const int64_t held = counts[static_cast<size_t>(h)];
    if (held < 0 || held > count)
      throw Error("last_entries: head " + std::to_string(h) + " holds " + std::to_string(held) +
                  " of " + std::to_string(count) + " slots");
    const auto [k, v] = head_tail(layer, b, h, held);
    keys[h].narrow(0, count - held, held).copy_(k);
    values[h].narrow(0, count - held, held).copy_(v);
  }
  return {keys, values};
}

std::pair<at::Tensor, at::Tensor> dense_entries(const LayerCache& layer) {
  if (!layer.segmented())
    return {layer.keys.narrow(2, 0, layer.used), layer.values.narrow(2, 0, layer.used)};
  const int64_t d = layer.keys.size(1);
  at::Tensor keys = at::zeros({layer.batch, layer.heads, layer.used, d}, layer.keys.options());
  at::Tensor values = at::zeros_like(keys);
  for (int64_t b = 0; b < layer.batch; ++b)
    for (int64_t h = 0; h < layer.heads; ++h) {
      const int64_t i = b * layer.heads + h, pad = padding_of(layer, i);
      const int64_t from = layer.segment_base[static_cast<size_t>(i)] + pad;
      keys[b][h]
          .narrow(0, pad, layer.used - pad)
          .copy_(layer.keys.narrow(0, from, layer.used - pad));
      values[b][h]
          .narrow(0, pad, layer.used - pad)
          .copy_(layer.values.narrow(0, from, layer.used - pad));
    }
  return {keys, values};
}

void replace_row_entries(LayerCache& layer, int64_t b, const at::Tensor& keys,
                         const at::Tensor& values, const std::vector<int64_t>& counts) {
  if (!layer.segmented()) throw Error("replace_row_entries: the layer is not segmented");
  if (b < 0 || b >= layer.batch)
    throw Error("replace_row_entries: row " + std::to_string(b) + " of a batch of " +
                std::to_string(layer.batch));
  if (keys.dim() != 3 || keys.size(0) != layer.heads || !keys.sizes().equals(values.sizes()))
    throw Error("replace_row_entries: keys and values must be [cache_heads, kept, head_dim]");
  if (!counts.empty() && static_cast<int64_t>(counts.size()) != layer.heads)
    throw Error("replace_row_entries: counts must give one count per cache head");
  const int64_t kept = keys.size(1);
  if (layer.head_padding.empty()) layer.head_padding.assign(layer.segment_base.size(), 0);
  int64_t widest = 0;  // the largest padding of this row
  for (int64_t h = 0; h < layer.heads; ++h) {
    const size_t i = static_cast<size_t>(b * layer.heads + h);
    const int64_t count = counts.empty() ? kept : counts[static_cast<size_t>(h)];
    if (count < 0 || count > kept || count > layer.used - padding_of(layer, int64_t(i)))
      throw Error("replace_row_entries: head " + std::to_string(h) + " of row " +
                  std::to_string(b) + " cannot keep " + std::to_string(count) + " entries");
    const int64_t to = layer.segment_base[i] + layer.used - count;
    layer.keys.narrow(0, to, count).copy_(keys[h].narrow(0, kept - count, count));
    layer.values.narrow(0, to, count).copy_(values[h].narrow(0, kept - count, count));
    layer.head_padding[i] = layer.used - count;
    widest = std::max(widest, layer.used - count);
  }
  const bool per_head = layer.prefix_mask.defined() && layer.prefix_mask.size(1) == layer.heads;
  if (!per_head || widest > layer.prefix_len) {
    mask_padding(layer, std::max(widest, layer.prefix_len));
    return;
  }
  for (int64_t h = 0; h < layer.heads; ++h)
    layer.prefix_mask[b][h]
        .narrow(1, 0, layer.head_padding[static_cast<size_t>(b * layer.heads + h)])
        .fill_(-std::numeric_limits<float>::infinity());
}

int64_t cache_bytes(const LayerCache& layer) {
  return static_cast<int64_t>(layer.keys.nbytes() + layer.values.nbytes());
}

void reserve_decode_slots(DecodeCache& cache, int64_t extra) {
  for (LayerCache& layer : cache.layers) {
    if (layer.capacity - layer.used >= extra) continue;
    const int64_t grown = std::max(layer.used + extra, layer.capacity * 3 / 2);
    if (layer.segmented()) {
      std::vector<int64_t> all(static_cast<size_t>(layer.batch));
      for (int64_t b = 0; b < layer.batch; ++b) all[static_cast<size_t>(b)] = b;
      relay_segments(layer, all, grown);
      continue;
    }
    auto grow = [&](const at::Tensor& t) {
      at::Tensor bigger = at::zeros({t.size(0), t.size(1), grown, t.size(3)}, t.options());
      bigger.narrow(2, 0, layer.used).copy_(t.narrow(2, 0, layer.used));
      return bigger;
    };
    layer.keys = grow(layer.keys);
    layer.values = grow(layer.values);
    layer.capacity = grown;
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
      if (layer.segmented()) {
        relay_segments(layer, rows, layer.capacity);
      } else {
        layer.keys = layer.keys.index_select(0, index);
        layer.values = layer.values.index_select(0, index);
      }
      if (layer.prefix_mask.defined()) layer.prefix_mask = layer.prefix_mask.index_select(0, index);
      if (!layer.head_padding.empty()) {
        std::vector<int64_t> kept_padding;
        for (int64_t r : rows)
          for (int64_t h = 0; h < layer.heads; ++h)
            kept_padding.push_back(layer.head_padding[static_cast<size_t>(r * layer.heads + h)]);
        layer.head_padding = std::move(kept_padding);
      }
      layer.batch = static_cast<int64_t>(rows.size());
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
