// The decode-time KV cache: a batch of rows (one per eviction policy, or one row for plain
// generation) over the same prompt. Per layer, each (row, cache head) holds its kept prompt
// entries followed by the tokens decoded so far. In slot terms (the attention's view) every
// (row, head) is LEFT-padded to the longest (row, head) of the layer, so that the decoded tokens of
// all rows and heads share slot indices; the attention reads none of the padding. Storage:
//  - dense, where no (row, head) is padded (a plain cache, a policy alone with uniform heads):
//    [batch, cache_heads, capacity, head_dim];
//  - segmented, where rows or heads keep different counts (policies of several budgets in one
//    batch, ragged budgets such as adakv's): one [slots, head_dim] tensor in which each (row, head)
//    has a segment of its own entries and its slots reserved for decoding, and no padding is
//    stored. A (row, head) keeping c entries holds c + reserved slots, so a head-wise allocator's
//    cache holds the sum of its kept entries, no more than the uniform layout at the same mean
//    budget.
// The transformer knows nothing of eviction: it only reads this layout.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace kvs::model {

struct LayerCache {
  at::Tensor keys;    // post-RoPE; dense [batch, cache_heads, capacity, head_dim], segmented
                      // [slots, head_dim]
  at::Tensor values;  // the same layout
  int64_t batch = 0;
  int64_t heads = 0;     // cache heads
  int64_t capacity = 0;  // slots per (row, head) in the attention's view: prompt slots + reserved
  // Additive 0 / -inf over the prompt slots, [batch, cache_heads, 1, prefix_len] (or
  // [batch, 1, 1, prefix_len]: the same for every head); undefined: no padding.
  at::Tensor prefix_mask;
  int64_t prefix_len = 0;  // slots holding prompt entries
  // Per (row, cache head), row-major (index b * cache_heads + h): the leading prompt slots that
  // are padding (masked; never stored in the segmented layout, zero in the dense one); empty when
  // nothing is padded. Decode attention passes over blocks of slots that are all padding.
  std::vector<int64_t> head_padding;
  int64_t used = 0;        // slots filled: prefix_len + tokens decoded
  // Segmented layout: per (row, cache head), the row of keys / values that its slot 0 would take,
  // so that its slot s (s >= its padding) is keys[segment_base[i] + s]; empty: dense.
  std::vector<int64_t> segment_base;
  bool segmented() const { return !segment_base.empty(); }
};

// cache_heads is num_key_value_heads (plain cache, or eviction per KV head) or
// num_attention_heads (eviction per query head, the SnapKV reference default).
struct DecodeCache {
  std::vector<LayerCache> layers;
  int64_t batch = 0;
  int64_t next_position = 0;  // RoPE position of the next token: prompt length + decoded tokens
  // Per row, the RoPE position of its next token where rows differ (a decode-time cache whose
  // positions are those within the cache, evict/decoding.h); empty: next_position for every row.
  std::vector<int64_t> row_positions;
};

// Builds one layer's cache from per-row kept entries: rows[b] = {keys, values}, each
// [cache_heads, kept_b, head_dim]. Rows may keep different counts. head_counts (empty, or one list
// of cache_heads counts per row): the entries each head of a row really holds, the LAST
// head_counts[b][h] of its kept_b slots; empty: every head holds all kept_b. extra_capacity
// reserves slots for the tokens still to be decoded (left unwritten: a slot is read only once a
// token fills it). Dense where nothing is padded, else segmented.
LayerCache assemble_layer_cache(const std::vector<std::pair<at::Tensor, at::Tensor>>& rows,
                                int64_t extra_capacity,
                                const std::vector<std::vector<int64_t>>& head_counts = {});

// Writes t new tokens' keys and values, each [batch, cache_heads, t, head_dim], into slots
// used .. used + t - 1 of every (row, head) and advances `used` (the slots must be reserved).
void append_entries(LayerCache& layer, const at::Tensor& keys, const at::Tensor& values);

// Row b's last `count` entries of every head, {keys, values} each [cache_heads, count, head_dim]
// (count must not reach into any head's padding).
std::pair<at::Tensor, at::Tensor> last_entries(const LayerCache& layer, int64_t b, int64_t count);

// Row b's last `count` slots of every head where head h holds only its last counts[h] of them
// (a ragged row: the rest is padding, zero here), {keys, values} each [cache_heads, count,
// head_dim]: what assemble_layer_cache takes back with these head counts.
std::pair<at::Tensor, at::Tensor> last_entries(const LayerCache& layer, int64_t b, int64_t count,
                                               const std::vector<int64_t>& counts);

// The filled slots as dense [batch, cache_heads, used, head_dim] tensors, padding zero: the
// layout itself where dense, a copy where segmented (the attention's path off the CPU kernels).
std::pair<at::Tensor, at::Tensor> dense_entries(const LayerCache& layer);

// A compression of row b in place (a segmented layer): its entries become keys / values, each
// [cache_heads, kept, head_dim], head h holding the last counts[h] of them (empty: all kept),
// written in the slots that end at `used`, where its entries end now; the slots before them become
// padding (masked; their storage is reclaimed at the next re-lay). The other rows are not touched.
// A compression only evicts: no head may keep more entries than it holds.
void replace_row_entries(LayerCache& layer, int64_t b, const at::Tensor& keys,
                         const at::Tensor& values, const std::vector<int64_t>& counts = {});

// Bytes of keys and values the layer holds (reserved slots included).
int64_t cache_bytes(const LayerCache& layer);

// Grows every layer so that at least `extra` more tokens fit (copying when needed).
void reserve_decode_slots(DecodeCache& cache, int64_t extra);

// Keeps only the given rows (ascending indices into the batch), in that order: rows that have
// finished decoding leave the batch so that the steps left cost only the rows still running.
void keep_rows(DecodeCache& cache, const std::vector<int64_t>& rows);

}  // namespace kvs::model
