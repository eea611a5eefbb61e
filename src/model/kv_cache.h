// The decode-time KV cache: a batch of rows (one per eviction policy, or one row for plain
// generation) over the same prompt. Per layer, each (row, cache head) holds its kept prompt
// entries, LEFT-padded to the longest (row, head) of that layer, followed by the tokens decoded so
// far, which all rows and heads append at the same slot. Heads of one row may keep different
// counts (ragged budgets, e.g. adakv): a row then holds, per layer, cache_heads x (its longest
// head) prompt slots, i.e. (longest - count_h) padding slots for head h; the attention reads none
// of them. The transformer knows nothing of eviction: it only reads this layout.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace kvs::model {

struct LayerCache {
  at::Tensor keys;         // [batch, cache_heads, capacity, head_dim], post-RoPE
  at::Tensor values;       // [batch, cache_heads, capacity, head_dim]
  // Additive 0 / -inf over the prompt slots, [batch, cache_heads, 1, prefix_len] (or
  // [batch, 1, 1, prefix_len]: the same for every head); undefined: no padding.
  at::Tensor prefix_mask;
  int64_t prefix_len = 0;  // slots holding prompt entries
  // Per (row, cache head), row-major (index b * cache_heads + h): the leading prompt slots that
  // are padding (zero keys and values, masked); empty when nothing is padded. Decode attention
  // passes over blocks of slots that are all padding.
  std::vector<int64_t> head_padding;
  int64_t used = 0;        // slots filled: prefix_len + tokens decoded
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
// [cache_heads, kept_b, head_dim]. Rows may keep different counts; shorter rows are left-padded
// and masked. head_counts (empty, or one list of cache_heads counts per row): the entries each
// head of a row really holds, the LAST head_counts[b][h] of its kept_b slots (the slots before
// them are padding: zeroed and masked); empty: every head holds all kept_b. extra_capacity
// reserves slots for the tokens still to be decoded (left unwritten: a slot is read only once a
// token fills it).
LayerCache assemble_layer_cache(const std::vector<std::pair<at::Tensor, at::Tensor>>& rows,
                                int64_t extra_capacity,
                                const std::vector<std::vector<int64_t>>& head_counts = {});

// Grows every layer so that at least `extra` more tokens fit (copying when needed).
void reserve_decode_slots(DecodeCache& cache, int64_t extra);

// Keeps only the given rows (ascending indices into the batch), in that order: rows that have
// finished decoding leave the batch so that the steps left cost only the rows still running.
void keep_rows(DecodeCache& cache, const std::vector<int64_t>& rows);

}  // namespace kvs::model
