// CAKE's statistics of a layer's window attention (evict/methods/cake.cpp) in one pass over the
// attention and one more for the variance, with no temporary [heads, W, n] tensor: per prefix
// column the mean and the unbiased variance over the window rows, the variance's sum and the
// attention entropy. The entropy needs no logarithm per entry: log a = s - lse, lse taken from each
// row's largest entry (lse = s_j - log a_j), which leaves out only the reference's + 1e-10 inside
// the logarithm (at most 1e-10 an entry). The ATen expression in cake.cpp is the reference (and the
// path for caches off the CPU). Torch-free but for at::parallel_for.
#pragma once

#include <cstdint>

namespace kvs::cpu {

struct WindowDispersion {
  double entropy = 0;   // -sum over heads, rows and prefix columns of a log a
  double variance = 0;  // sum over heads and prefix columns of the rows' unbiased variance
};

// attention [heads, window, n]: the softmax rows of the window queries over every key; logits the
// scaled scores they came from (same layout; -inf where masked), both contiguous, window >= 2.
// indicator [heads, n - window] = mean + gamma * variance over the rows, column by column.
WindowDispersion window_dispersion(const float* attention, const float* logits, int64_t heads,
                                   int64_t window, int64_t n, double gamma, float* indicator);

}  // namespace kvs::cpu
