// The batched greedy admission on the GPU (the CPU reference: admit_row in
// evict/greedy_select.cpp), one block per row, so a whole prompt's (layer, head, policy) rows can
// go in one launch. Per admission, each warp takes candidates in turn: its lanes split the dot
// product with the last admitted key (staged in shared memory), lane 0 updates corr and the
// objective s~ + lambda2 * corr; the block then reduces to the best candidate, ties to the lower
// candidate index (= the higher rank), exactly as the CPU loop's strict '>' in index order.
#include <cuda_runtime.h>

#include "cuda/launchers.h"

namespace kvs::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// "(objective a, index a) is admitted before (objective b, index b)"; index -1 is no candidate.
__device__ inline bool before(float a, int64_t ia, float b, int64_t ib) {
  if (ia < 0) return false;
  if (ib < 0) return true;
  return a > b || (a == b && ia < ib);
}

__global__ void admit_kernel(const float* __restrict__ unit_keys, const float* __restrict__ scores,
                             const int64_t* __restrict__ candidates,
                             const int64_t* __restrict__ counts, const float* __restrict__ lambda2,
                             float* __restrict__ corr_ws, uint8_t* __restrict__ taken_ws,
                             int64_t* __restrict__ picked, int64_t width, int64_t dim,
                             int64_t max_count) {
  extern __shared__ float admitted_key[];  // [dim]
  __shared__ float warp_objective[kWarps];
  __shared__ int64_t warp_index[kWarps];
  __shared__ int64_t admitted;

  const int64_t row = blockIdx.x;
  const int64_t size = candidates[row], count = counts[row];
  const float l2 = lambda2[row];
  const float* keys = unit_keys + row * width * dim;
  const float* score = scores + row * width;
  float* corr = corr_ws + row * width;
  uint8_t* taken = taken_ws + row * width;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
    corr[i] = 0.0f;
    taken[i] = 0;
  }
  __syncthreads();

  for (int64_t t = 0; t < count; ++t) {
    // Update against the key admitted last (none at t = 0) and find this warp's best.
    float best = 0.0f;
    int64_t best_index = -1;
    for (int64_t i = warp; i < size; i += kWarps) {
      if (taken[i]) continue;
      float c = 0.0f;
      if (t > 0 && l2 != 0.0f) {
        const float* k = keys + i * dim;
        float partial = 0.0f;
        for (int64_t e = lane; e < dim; e += 32) partial += k[e] * admitted_key[e];
        for (int offset = 16; offset > 0; offset >>= 1)
          partial += __shfl_xor_sync(0xffffffffu, partial, offset);
        c = fmaxf(corr[i], partial);
      } else {
        c = corr[i];
      }
      if (lane == 0) corr[i] = c;
      // Rounded as the CPU loop rounds it (no fused multiply-add).
      const float objective = __fadd_rn(score[i], __fmul_rn(l2, c));
      if (before(objective, i, best, best_index)) {
        best = objective;
        best_index = i;
      }
    }
    if (lane == 0) {
      warp_objective[warp] = best;
      warp_index[warp] = best_index;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      float o = warp_objective[0];
      int64_t index = warp_index[0];
      for (int w = 1; w < kWarps; ++w) {
        if (before(warp_objective[w], warp_index[w], o, index)) {
          o = warp_objective[w];
          index = warp_index[w];
        }
      }
      admitted = index;
      taken[index] = 1;
      picked[row * max_count + t] = index;
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < dim; e += blockDim.x)
      admitted_key[e] = keys[admitted * dim + e];
    __syncthreads();
  }
}

}  // namespace

const char* launch::greedy_admit(const float* unit_keys, const float* scores,
                                 const int64_t* candidates, const int64_t* counts,
                                 const float* lambda2, float* corr, uint8_t* taken, int64_t* picked,
                                 int64_t rows, int64_t width, int64_t dim, int64_t max_count,
                                 void* stream) {
  if (rows == 0 || max_count == 0) return nullptr;
  const size_t shared = static_cast<size_t>(dim) * sizeof(float);
  admit_kernel<<<static_cast<unsigned>(rows), kThreads, shared,
                 static_cast<cudaStream_t>(stream)>>>(
      unit_keys, scores, candidates, counts, lambda2, corr, taken, picked, width, dim, max_count);
  const cudaError_t status = cudaGetLastError();
  return status == cudaSuccess ? nullptr : cudaGetErrorString(status);
}

}  // namespace kvs::kernels
