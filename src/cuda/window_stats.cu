// Window statistics on the GPU (the CPU reference: evict/window_stats.cpp). Three passes:
//   1. logits[h, w, j] = (q[h, w] * scale) . k[h / group, j], -inf for window keys after query w;
//      one warp per key, the head's W queries staged in shared memory;
//   2. per (h, w) row: max and sum of exp over the n keys (one block per row);
//   3. per (h, j < n - W): the W probabilities, their mean and sample std (one thread each).
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/launchers.h"

namespace kvs::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__global__ void logits_kernel(const float* __restrict__ queries, const float* __restrict__ keys,
                              float* __restrict__ logits, int64_t group, int64_t window, int64_t n,
                              int64_t dim, float scale) {
  extern __shared__ float q[];  // [window, dim] of this head
  const int64_t head = blockIdx.y;
  // The scale goes on the queries, as on the CPU path.
  for (int64_t i = threadIdx.x; i < window * dim; i += blockDim.x)
    q[i] = queries[head * window * dim + i] * scale;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (j >= n) return;
  const float* k = keys + ((head / group) * n + j) * dim;
  for (int64_t w = 0; w < window; ++w) {
    float partial = 0.0f;
    for (int64_t e = lane; e < dim; e += 32) partial += q[w * dim + e] * k[e];
    const float dot = warp_sum(partial);
    if (lane == 0) {
      // Query w sits at position n - W + w and sees keys up to it.
      logits[(head * window + w) * n + j] = j > n - window + w ? -INFINITY : dot;
    }
  }
}

__global__ void row_kernel(const float* __restrict__ logits, float* __restrict__ row_max,
                           float* __restrict__ row_sum, int64_t n) {
  __shared__ float partials[kWarps];
  __shared__ float shared_max;
  const float* x = logits + static_cast<int64_t>(blockIdx.x) * n;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, x[j]);
  m = warp_max(m);
  if (lane == 0) partials[warp] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float all = partials[0];
    for (int i = 1; i < kWarps; ++i) all = fmaxf(all, partials[i]);
    shared_max = all;
  }
  __syncthreads();
  const float top = shared_max;

  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += expf(x[j] - top);
  s = warp_sum(s);
  __syncthreads();  // partials is reused
  if (lane == 0) partials[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float all = 0.0f;
    for (int i = 0; i < kWarps; ++i) all += partials[i];
    row_max[blockIdx.x] = top;
    row_sum[blockIdx.x] = all;
  }
}

__global__ void moments_kernel(const float* __restrict__ logits, const float* __restrict__ row_max,
                               const float* __restrict__ row_sum, float* __restrict__ mu,
                               float* __restrict__ sigma, int64_t heads, int64_t window,
                               int64_t n) {
  const int64_t scorable = n - window;
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= heads * scorable) return;
  const int64_t head = index / scorable, j = index % scorable;
  const auto probability = [&](int64_t w) {
    const int64_t row = head * window + w;
    return expf(logits[row * n + j] - row_max[row]) / row_sum[row];
  };
  float mean = 0.0f;
  for (int64_t w = 0; w < window; ++w) mean += probability(w);
  mean *= 1.0f / static_cast<float>(window);  // reciprocals as the CPU path multiplies
  float squares = 0.0f;
  for (int64_t w = 0; w < window; ++w) {
    const float d = probability(w) - mean;
    squares += d * d;
  }
  mu[index] = mean;
  sigma[index] = sqrtf(squares * (1.0f / static_cast<float>(window - 1)));
}

}  // namespace

const char* launch::window_stats(const float* queries, const float* keys, float* logits,
                                 float* row_max, float* row_sum, float* mu, float* sigma,
                                 int64_t heads, int64_t kv_heads, int64_t window, int64_t n,
                                 int64_t dim, float scale, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 logits_grid(static_cast<unsigned>((n + kWarps - 1) / kWarps),
                         static_cast<unsigned>(heads));
  const size_t shared = static_cast<size_t>(window * dim) * sizeof(float);
  logits_kernel<<<logits_grid, kThreads, shared, s>>>(queries, keys, logits, heads / kv_heads,
                                                      window, n, dim, scale);
  row_kernel<<<static_cast<unsigned>(heads * window), kThreads, 0, s>>>(logits, row_max, row_sum,
                                                                        n);
  const int64_t outputs = heads * (n - window);
  moments_kernel<<<static_cast<unsigned>((outputs + kThreads - 1) / kThreads), kThreads, 0, s>>>(
      logits, row_max, row_sum, mu, sigma, heads, window, n);
  const cudaError_t status = cudaGetLastError();
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}

}  // namespace kvs::kernels
