// The decode-time KV cache: a batch of rows (one per eviction policy, or one row for plain
// generation) over the same prompt. Per layer, each row holds its kept prompt entries, LEFT-padded
// to the longest row of that layer, followed by the tokens decoded so far, which all rows append
// at the same slot. The transformer knows nothing of eviction: it only reads this layout.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace kvs::model {

struct LayerCache {
  at::Tensor keys;         // [batch, cache_heads, capacity, head_dim], post-RoPE
  at::Tensor values;       // [batch, cache_heads, capacity, head_dim]
  at::Tensor prefix_mask;  // [batch, 1, 1, prefix_len] additive 0 / -inf; undefined: no padding
  int64_t prefix_len = 0;  // slots holding prompt entries
  // Per row, the leading prompt slots that are padding (zero keys and values, masked); empty
  // when no row is padded. Decode attention passes over blocks of slots that are all padding.
  std::vector<int64_t> row_padding;
  int64_t used = 0;        // slots filled: prefix_len + tokens decoded
};

// cache_heads is num_key_value_heads (plain cache, or eviction per KV head) or
// num_attention_heads (eviction per query head, the SnapKV reference default).
struct DecodeCache {
  std::vector<LayerCache> layers;
  int64_t batch = 0;
  int64_t next_position = 0;  // RoPE position of the next token: prompt length + decoded tokens
};

// Builds one layer's cache from per-row kept entries: rows[b] = {keys, values}, each
// [cache_heads, kept_b, head_dim]. Rows may keep different counts; shorter rows are left-padded
// and masked. extra_capacity reserves slots for the tokens still to be decoded (left unwritten:
// a slot is read only once a token fills it).
LayerCache assemble_layer_cache(const std::vector<std::pair<at::Tensor, at::Tensor>>& rows,
                                int64_t extra_capacity);

// Grows every layer so that at least `extra` more tokens fit (copying when needed).
void reserve_decode_slots(DecodeCache& cache, int64_t extra);

// Keeps only the given rows (ascending indices into the batch), in that order: rows that have
// finished decoding leave the batch so that the steps left cost only the rows still running.
void keep_rows(DecodeCache& cache, const std::vector<int64_t>& rows);

}  // namespace kvs::model
