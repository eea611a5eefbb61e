// The window statistics (window_stats.h) as one float32 AVX-512 kernel per KV head: the scores of
// its group's window queries against every key are computed key by key into a [n, rows] block that
// stays in the second-level cache, then masked, softmaxed and reduced to mu and sigma there, with
// no BLAS call and no [W, n] tensor per head. Equal to the plain-ATen reference up to float
// rounding (its own summation order and exp). Torch-free.
#pragma once

#include <cstdint>

namespace kvs::cpu {

// Whether window_stats_avx512 runs here: an x86-64 CPU with AVX-512F.
bool window_stats_avx512_available();

// scaled_queries [kv_heads, group * window, d]: the window queries already divided by sqrt(d),
// row member * window + w being query head (g * group + member)'s window query w; keys
// [kv_heads, n, d]; both contiguous, n > window >= 1. mu and sigma [kv_heads * group, n - window].
// Spread over LibTorch's intra-op threads, one KV head per task.
void window_stats_avx512(const float* scaled_queries, const float* keys, int64_t kv_heads,
                         int64_t group, int64_t window, int64_t n, int64_t d, float* mu,
                         float* sigma);

}  // namespace kvs::cpu
