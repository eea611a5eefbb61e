// LagKV's lag-relative statistics (evict/methods/lagkv.cpp) in one pass per chunk: each chunk of
// `lag` rows is rescaled channel by channel by the minimum and maximum of the chunk after it, and a
// row's statistic is the standard deviation (unbiased, accumulated in double as ATen's) of its
// rescaled channels, softmaxed over its chunk. The ATen expression in lagkv.cpp is the reference
// (and the path for caches off the CPU). Torch-free but for at::parallel_for.
#pragma once

#include <cstdint>

namespace kvs::cpu {

// states [heads, n, d] (row stride d, head stride n * d), chunks >= 2 chunks of lag rows starting
// at row `first` (first + chunks * lag <= n). out [heads, chunks - 1, lag]: chunk c's rows against
// chunk c + 1. A channel constant over a reference chunk gives NaN, as the reference.
void lag_chunk_scores(const float* states, int64_t heads, int64_t n, int64_t d, int64_t first,
                      int64_t chunks, int64_t lag, float* out);

}  // namespace kvs::cpu
