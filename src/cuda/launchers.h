// The raw launchers of the .cu files, shared with their ATen glue (evict_kernels.cpp): device
// pointers, plain integers and the CUDA stream as void*, so that neither side sees the other's
// headers. Each returns nullptr on success, else the CUDA error text.
#pragma once

#include <cstdint>

namespace kvs::kernels::launch {

// queries [heads, W, dim], keys [kv_heads, n, dim] float32 -> mu, sigma [heads, n - W] float32.
// Workspaces: logits [heads, W, n], row_max and row_sum [heads, W]. scale = 1 / sqrt(dim).
const char* window_stats(const float* queries, const float* keys, float* logits, float* row_max,
                         float* row_sum, float* mu, float* sigma, int64_t heads, int64_t kv_heads,
                         int64_t window, int64_t n, int64_t dim, float scale, void* stream);

// One block per row (see evict/greedy_select.h for the loop): unit_keys [rows, width, dim],
// scores [rows, width], candidates/counts [rows] int64, lambda2 [rows] float32 ->
// picked [rows, max_count] int64 (pre-filled with -1). Workspaces corr [rows, width] float32,
// taken [rows, width] uint8.
const char* greedy_admit(const float* unit_keys, const float* scores, const int64_t* candidates,
                         const int64_t* counts, const float* lambda2, float* corr, uint8_t* taken,
                         int64_t* picked, int64_t rows, int64_t width, int64_t dim,
                         int64_t max_count, void* stream);

}  // namespace kvs::kernels::launch
