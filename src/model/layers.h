// The transformer's functional building blocks, shared by inference (transformer.cpp) and the
// demo model's training (autograd-friendly: no in-place ops on their inputs).
#pragma once

#include <ATen/ATen.h>

#include "model/weights.h"

namespace kvs::model {

// RMSNorm as the reference computes it: in float32, cast back, then times the weight.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// down(silu(gate(x)) * up(x)).
at::Tensor swiglu_mlp(const at::Tensor& x, const LayerWeights& w);

}  // namespace kvs::model
