#include "model/layers.h"

namespace kvs::model {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

at::Tensor swiglu_mlp(const at::Tensor& x, const LayerWeights& w) {
  return at::linear(at::silu(at::linear(x, w.gate_proj)) * at::linear(x, w.up_proj), w.down_proj);
}

}  // namespace kvs::model
