#include "model/rope.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/where.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <vector>

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

RopeTables rope_tables_at(const at::Tensor& inv_freq, const at::Tensor& positions,
                          at::ScalarType dtype, at::Device device) {
  const at::Tensor angles =
      positions.to(at::kCPU, at::kFloat).unsqueeze(-1) * inv_freq.to(at::kCPU);  // [..., d/2]
  const at::Tensor emb = at::cat({angles, angles}, -1);
  return {emb.cos().to(device, dtype), emb.sin().to(device, dtype)};
}

RopeTables rope_tables_rows(const at::Tensor& inv_freq, const std::vector<int64_t>& starts,
                            int64_t count, at::ScalarType dtype, at::Device device) {
  const at::Tensor first = at::tensor(starts, at::TensorOptions().dtype(at::kLong));
  const at::Tensor positions =
      first.unsqueeze(1) + at::arange(count, at::TensorOptions().dtype(at::kLong)).unsqueeze(0);
  const RopeTables rows = rope_tables_at(inv_freq, positions, dtype, device);  // [rows, count, d]
  return {rows.cos.unsqueeze(1), rows.sin.unsqueeze(1)};
}

namespace {

bool float_rows_apply(const at::Tensor& x, const RopeTables& tables) {
  const int64_t count = x.dim() >= 2 ? x.size(-2) : 0, d = x.size(-1);
  const auto table_fits = [&](const at::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous() &&
           t.dim() == 2 && t.size(0) == count && t.size(1) == d;
  };
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && x.dim() >= 2 && x.stride(-1) == 1 &&
         d % 2 == 0 && table_fits(tables.cos) && table_fits(tables.sin) && !c10::GradMode::is_enabled();
}

// RoPE of float32 rows without autograd, each written once into a contiguous result, from any
// view whose rows are contiguous (the projections' transposed heads): ATen's expression makes
// four temporaries and, in a decode step, six operator calls per tensor and layer. The same
// products and sums as that expression, in the same order.
at::Tensor rope_float_rows(const at::Tensor& x, const RopeTables& tables) {
  const int64_t d = x.size(-1), half = d / 2, count = x.size(-2);
  const int64_t rows = x.numel() / std::max<int64_t>(d, 1);
  const std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end() - 1);
  const std::vector<int64_t> strides(x.strides().begin(), x.strides().end() - 1);
  at::Tensor out = at::empty(x.sizes(), x.options());
  const float* xp = x.data_ptr<float>();
  const float* cos = tables.cos.data_ptr<float>();
  const float* sin = tables.sin.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t offset = 0;
      for (int64_t k = static_cast<int64_t>(sizes.size()) - 1, rest = r; k >= 0; --k) {
        offset += rest % sizes[k] * strides[k];
        rest /= sizes[k];
      }
      const float* row = xp + offset;
      const float* c = cos + r % count * d;
      const float* s = sin + r % count * d;
      float* o = op + r * d;
      for (int64_t i = 0; i < half; ++i) o[i] = row[i] * c[i] + -row[i + half] * s[i];
      for (int64_t i = half; i < d; ++i) o[i] = row[i] * c[i] + row[i - half] * s[i];
    }
  });
  return out;
}

}  // namespace

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables) {
  if (float_rows_apply(x, tables)) return rope_float_rows(x, tables);
  const int64_t half = x.size(-1) / 2;
  const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * tables.cos + rotated * tables.sin;
}

}  // namespace kvs::model
