// The runner's seam for eviction while decoding: Transformer::extend hands each layer's queries of
// the tokens it feeds to an observer, which a decode-time compression reads (evict/decoding.h).
// The cache itself is the caller's (DecodeCache); the transformer knows nothing of eviction.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kvs::model {

// Valid only during the call; in the run dtype, on the run device.
struct DecodeStepLayer {
  int64_t layer;
  at::Tensor queries;           // [batch, heads, t, head_dim], after RoPE
  at::Tensor pre_rope_queries;  // [batch, heads, t, head_dim], before RoPE (after q_norm)
};

class DecodeStepObserver {
 public:
  virtual ~DecodeStepObserver() = default;
  virtual void on_layer(const DecodeStepLayer& layer) = 0;
};

}  // namespace kvs::model
