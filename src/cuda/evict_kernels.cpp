// ATen glue of the kernels: checks, dtype/layout conversion, workspaces, device and stream.
#include "cuda/evict_kernels.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "cuda/launchers.h"

namespace kvs::kernels {

namespace {

void check(const char* failure, const char* kernel) {
  if (failure) throw Error(std::string("CUDA kernel ") + kernel + ": " + failure);
}

void* current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

// Shared memory a block may use without opting in to more.
constexpr int64_t kSharedFloats = 48 * 1024 / sizeof(float);

}  // namespace

std::pair<at::Tensor, at::Tensor> window_stats_cuda(const at::Tensor& window_queries,
                                                    const at::Tensor& keys) {
  const c10::cuda::CUDAGuard guard(keys.device());
  const at::Tensor q = window_queries.to(at::kFloat).contiguous();
  const at::Tensor k = keys.to(at::kFloat).contiguous();
  const int64_t heads = q.size(0), window = q.size(1), dim = q.size(2);
  const int64_t kv_heads = k.size(0), n = k.size(1);
  if (window * dim > kSharedFloats) {
    throw error_at("window_stats_cuda", "W * head_dim exceeds the kernel's shared memory");
  }
  const auto f32 = q.options();
  at::Tensor logits = at::empty({heads, window, n}, f32);
  at::Tensor row_max = at::empty({heads, window}, f32);
  at::Tensor row_sum = at::empty({heads, window}, f32);
  at::Tensor mu = at::empty({heads, n - window}, f32);
  at::Tensor sigma = at::empty({heads, n - window}, f32);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
  check(launch::window_stats(q.data_ptr<float>(), k.data_ptr<float>(), logits.data_ptr<float>(),
                             row_max.data_ptr<float>(), row_sum.data_ptr<float>(),
                             mu.data_ptr<float>(), sigma.data_ptr<float>(), heads, kv_heads, window,
                             n, dim, scale, current_stream()),
        "window_stats");
  return {mu, sigma};
}

at::Tensor greedy_admit_cuda(const at::Tensor& unit_keys, const at::Tensor& scores,
                             const at::Tensor& candidates, const at::Tensor& counts,
                             const at::Tensor& lambda2) {
  const c10::cuda::CUDAGuard guard(unit_keys.device());
  const at::Device device = unit_keys.device();
  const at::Tensor keys = unit_keys.to(at::kFloat).contiguous();
  const at::Tensor s = scores.to(device, at::kFloat).contiguous();
  const at::Tensor c = candidates.to(device, at::kLong).contiguous();
  const at::Tensor k = counts.to(device, at::kLong).contiguous();
  const at::Tensor l2 = lambda2.to(device, at::kFloat).contiguous();
  const int64_t rows = keys.size(0), width = keys.size(1), dim = keys.size(2);
  if (dim > kSharedFloats)
    throw error_at("greedy_admit_cuda", "head_dim exceeds the kernel's shared memory");
  const int64_t max_count = rows ? counts.max().item<int64_t>() : 0;
  at::Tensor picked = at::full({rows, max_count}, -1, c.options());
  at::Tensor corr = at::empty({rows, width}, s.options());
  at::Tensor taken = at::empty({rows, width}, c.options().dtype(at::kByte));
  check(launch::greedy_admit(keys.data_ptr<float>(), s.data_ptr<float>(), c.data_ptr<int64_t>(),
                             k.data_ptr<int64_t>(), l2.data_ptr<float>(), corr.data_ptr<float>(),
                             taken.data_ptr<uint8_t>(), picked.data_ptr<int64_t>(), rows, width,
                             dim, max_count, current_stream()),
        "greedy_admit");
  return picked;
}

void synchronize_cuda() { c10::cuda::device_synchronize(); }

}  // namespace kvs::kernels
