#include "model/layers.h"

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/silu.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/parallel_tasks.h"
#include "cpu/row_product.h"

namespace kvs::model {

namespace {

// Up to this many rows (a decode step of that many policies) the weights are streamed once by
// row_product. The BLAS's sgemm copies (packs) the whole weight matrix on every call, which at a
// few rows costs more than the product itself; above it the product is a matrix product that the
// BLAS threads well.
constexpr int64_t kMaxThreadedRows = 32;
// Weight rows per block of the decode kernel's work (a multiple of row_product's four).
constexpr int64_t kRowsPerBlock = 64;
// Below this many weight elements the split costs more than it saves.
constexpr int64_t kMinThreadedWeight = 1 << 16;

}  // namespace

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const StoredBlocks& blocks) {
  const int64_t in = x.size(-1), out = weight.size(0);
  const int64_t rows = in == 0 ? 0 : x.numel() / in;
  const int threads = at::get_num_threads();
  if (!x.device().is_cpu() || rows == 0 || rows > kMaxThreadedRows ||
      weight.numel() < kMinThreadedWeight || c10::GradMode::is_enabled() || !weight.is_contiguous())
    return at::linear(x, weight);
  const bool own_kernel = cpu::row_product_available() && x.scalar_type() == at::kFloat &&
                          weight.scalar_type() == at::kFloat;
  if (!own_kernel && threads < 2) return at::linear(x, weight);
  at::Tensor y;
  if (own_kernel) {
    const at::Tensor x_rows = x.reshape({rows, in}).contiguous();
    y = at::empty({rows, out}, x.options());
    const float* xp = x_rows.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    const uint8_t* stored = blocks.present() ? blocks.bytes.data_ptr<uint8_t>() : nullptr;
    float* yp = y.data_ptr<float>();
    // Blocks of weight rows that the threads take as they finish theirs.
    cpu::for_each_task((out + kRowsPerBlock - 1) / kRowsPerBlock, [&](int64_t b) {
      const int64_t begin = b * kRowsPerBlock, end = std::min(out, begin + kRowsPerBlock);
      if (stored)
        cpu::block_row_product(xp, rows, in, stored, blocks.type, begin, end, yp, out);
      else
        cpu::row_product(xp, rows, in, wp, begin, end, yp, out);
    });
  } else {
    // One block of weight rows per thread, written straight into its slice of y_t. Inside the
    // parallel region the BLAS runs single-threaded, so each thread streams its own rows.
    // Inference mode is per thread; the pool's threads take the caller's.
    const bool inference = c10::InferenceMode::is_enabled();
    const at::Tensor x_t = x.reshape({rows, in}).t();  // [in, rows]
    const at::Tensor y_t = at::empty({out, rows}, x.options());
    const int64_t grain = ((out + threads - 1) / threads + 3) / 4 * 4;  // whole blocks of four rows
    at::parallel_for(0, out, grain, [&](int64_t begin, int64_t end) {
      c10::InferenceMode guard(inference);
      at::Tensor slice = y_t.narrow(0, begin, end - begin);
      at::mm_out(slice, weight.narrow(0, begin, end - begin), x_t);
    });
    y = y_t.t();
  }
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out;
  return y.reshape(shape);
}

namespace {

// RMSNorm of float32 rows without autograd: one sweep for each row's mean square and one that
// writes weight * (x * scale), where ATen's expression makes four full-size temporaries (a
// measurable share of a long prefill).
at::Tensor rms_norm_float_rows(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor xc = x.contiguous();
  const at::Tensor wc = weight.contiguous();
  const int64_t width = x.size(-1), rows = width == 0 ? 0 : x.numel() / width;
  at::Tensor out = at::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  const float* wp = wc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const float inv_width = 1.0f / static_cast<float>(width);
  const float epsilon = static_cast<float>(eps);
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* row = xp + r * width;
      float* o = op + r * width;
      // Eight partial sums: a float reduction the compiler may vectorise without -ffast-math.
      float partial[8] = {};
      int64_t i = 0;
      for (; i + 8 <= width; i += 8)
        for (int lane = 0; lane < 8; ++lane) partial[lane] += row[i + lane] * row[i + lane];
      float sum = 0;
      for (; i < width; ++i) sum += row[i] * row[i];
      for (const float p : partial) sum += p;
      const float scale = 1.0f / std::sqrt(sum * inv_width + epsilon);
      for (int64_t j = 0; j < width; ++j) o[j] = wp[j] * (row[j] * scale);
    }
  });
  return out;
}

}  // namespace

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (x.device().is_cpu() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
      weight.dim() == 1 && weight.size(0) == x.size(-1) && !c10::GradMode::is_enabled())
    return rms_norm_float_rows(x, weight, eps);
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

at::Tensor project_heads(const at::Tensor& x, const at::Tensor& weight, const StoredBlocks& blocks,
                         const at::Tensor& bias, const at::Tensor& norm, int64_t heads,
                         double eps) {
  at::Tensor y = project(x, weight, blocks);
  if (bias.defined()) y = y + bias;
  std::vector<int64_t> shape = y.sizes().vec();
  shape.back() = heads;
  shape.push_back(y.size(-1) / heads);
  y = y.view(shape);
  return norm.defined() ? rms_norm(y, norm, eps) : y;
}

at::Tensor swiglu_mlp(const at::Tensor& x, const LayerWeights& w) {
  if (c10::GradMode::is_enabled())
    return project(at::silu(project(x, w.gate_proj)) * project(x, w.up_proj), w.down_proj);
  // Without autograd in place: the [rows, intermediate] activations are written once each.
  at::Tensor gate = project(x, w.gate_proj, w.blocks.gate_proj);
  at::silu_(gate).mul_(project(x, w.up_proj, w.blocks.up_proj));
  return project(gate, w.down_proj, w.blocks.down_proj);
}

}  // namespace kvs::model
