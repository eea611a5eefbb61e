// The one seam between the runner and eviction: Transformer::prefill hands each layer's post-RoPE
// K/V and its last W query rows to an observer (evict::CompressingObserver builds the compressed
// caches from them). A header of its own so that eviction code needs no more of the transformer.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kvs::model {

// What one layer's prefill exposes. Tensors are in the run dtype, on the run device, and only
// valid during the call.
struct PrefillLayer {
  int64_t layer;
  const at::Tensor& keys;            // [kv_heads, n, head_dim], after RoPE
  const at::Tensor& values;          // [kv_heads, n, head_dim]
  const at::Tensor& window_queries;  // [heads, W, head_dim], after RoPE: the last W prompt rows
};

class PrefillObserver {
 public:
  virtual ~PrefillObserver() = default;
  virtual int64_t window() const = 0;  // how many trailing query rows on_layer receives
  virtual void on_layer(const PrefillLayer& layer) = 0;
};

}  // namespace kvs::model
