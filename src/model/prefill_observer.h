// The one seam between the runner and eviction: Transformer::prefill hands each layer's post-RoPE
// K/V and its last W query rows to an observer (evict::CompressingObserver builds the compressed
// caches from them), and, only where the observer asks for them (signals()), what some methods
// read beyond those: every query's attention summed per key, the queries before RoPE, the output
// projection. A header of its own so that eviction code needs no more of the transformer.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace kvs::model {

// What an observer may ask of the prefill beyond keys, values and the window's queries.
enum PrefillSignal : uint32_t {
  kSignalNone = 0,
  kSignalColumnSums = 1u << 0,      // attention summed over every query, per key
  kSignalPreRopeQueries = 1u << 1,  // every position's queries before RoPE
  kSignalOutputProjection = 1u << 2,
};

// What one layer's prefill exposes. Tensors are in the run dtype, on the run device, and only
// valid during the call; the optional ones are undefined unless the observer asked for them.
struct PrefillLayer {
  PrefillLayer(int64_t layer, const at::Tensor& keys, const at::Tensor& values,
               const at::Tensor& window_queries)
      : layer(layer), keys(keys), values(values), window_queries(window_queries) {}
  // It holds references: a temporary's would dangle once the constructor returns.
  PrefillLayer(int64_t, const at::Tensor&, const at::Tensor&, at::Tensor&&) = delete;

  int64_t layer;
  const at::Tensor& keys;            // [kv_heads, n, head_dim], after RoPE
  const at::Tensor& values;          // [kv_heads, n, head_dim]
  const at::Tensor& window_queries;  // [heads, W, head_dim], after RoPE: the last W prompt rows
  at::Tensor column_sums;            // [heads, n] float32: sum over queries t >= i of a(t, i)
  at::Tensor pre_rope_queries;       // [heads, n, head_dim]: W_q h_t before RoPE
  at::Tensor output_projection;      // [hidden, heads * head_dim]: o_proj's weight
  at::Tensor rope_inv_freq;          // [head_dim / 2] float32: RoPE's frequencies (half-split)
  // The position the next query takes; 0: n, the prompt's length. A decode-time compression
  // (evict/decoding.h) sets the tokens seen, the cache holding fewer of them.
  int64_t next_position = 0;
  // A head-wise row's decode-time cache (a ragged layer): per KV head, the entries it holds, the
  // LAST head_counts[h] of the n rows of keys and values (the rows before them are padding);
  // empty: every head holds all n. Only a decode-time compression sets it.
  std::vector<int64_t> head_counts;
};

class PrefillObserver {
 public:
  virtual ~PrefillObserver() = default;
  virtual int64_t window() const = 0;  // how many trailing query rows on_layer receives
  virtual uint32_t signals() const { return kSignalNone; }  // PrefillSignal flags
  virtual void on_layer(const PrefillLayer& layer) = 0;
};

// Two observers of one prefill (two decodes of the same prompt): the wider window, both signals,
// each layer to both in turn.
class ObserverPair final : public PrefillObserver {
 public:
  ObserverPair(PrefillObserver* first, PrefillObserver* second) : first_(first), second_(second) {}
  int64_t window() const override {
    return first_->window() > second_->window() ? first_->window() : second_->window();
  }
  uint32_t signals() const override { return first_->signals() | second_->signals(); }
  void on_layer(const PrefillLayer& layer) override {
    first_->on_layer(layer);
    second_->on_layer(layer);
  }

 private:
  PrefillObserver* first_;
  PrefillObserver* second_;
};

}  // namespace kvs::model
