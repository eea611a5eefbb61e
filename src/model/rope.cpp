#include "model/rope.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/where.h>

#include <cmath>

namespace kvs::model {

at::Tensor rope_inverse_frequencies(const ModelConfig& config) {
  const int64_t dim = config.head_dim;
  const at::Tensor exponents =
      at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / dim;
  at::Tensor inv_freq = 1.0 / at::pow(config.rope_theta, exponents);
  if (!config.rope_scaling) return inv_freq;
  // llama3: long wavelengths are slowed by `factor`, short ones kept, the band between blended.
  const RopeScaling& s = *config.rope_scaling;
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double low_freq_wavelen = old_len / s.low_freq_factor;
  const double high_freq_wavelen = old_len / s.high_freq_factor;
  const at::Tensor wavelen = 2 * M_PI / inv_freq;
  at::Tensor scaled = at::where(wavelen > low_freq_wavelen, inv_freq / s.factor, inv_freq);
  const at::Tensor smooth =
      (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  const at::Tensor smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
  const at::Tensor medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
  return at::where(medium, smoothed, scaled);
}

RopeTables rope_tables(const at::Tensor& inv_freq, int64_t start, int64_t count,
                       at::ScalarType dtype, at::Device device) {
  const at::Tensor positions =
      at::arange(start, start + count, at::TensorOptions().dtype(at::kLong)).to(at::kFloat);
  const at::Tensor freqs = at::outer(positions, inv_freq);  // [count, dim/2] float32
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  return {emb.cos().to(device, dtype), emb.sin().to(device, dtype)};
}

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables) {
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * tables.cos + rotated * tables.sin;
}

}  // namespace kvs::model
