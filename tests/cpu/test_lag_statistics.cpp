// cpu::lag_chunk_scores against the statistics written out in float64 (the method as a whole is
// checked in tests/evict/test_methods.cpp and against kvpress's LagKVPress in
// tests/evict/test_methods_vs_kvpress.py; lagkv.cpp's ATen path, for caches off the CPU, against
// this kernel by tests/evict/test_kernels_gpu.cpp).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "cpu/lag_statistics.h"

namespace kvs::test {
namespace {

// The statistics written out in float64, chunk by chunk: [heads, chunks - 1, lag].
at::Tensor reference_chunk_scores(const at::Tensor& states, int64_t first, int64_t chunks,
                                  int64_t lag) {
  const int64_t heads = states.size(0), d = states.size(2);
  const auto x = states.accessor<float, 3>();
  at::Tensor out = at::empty({heads, chunks - 1, lag}, at::kDouble);
  auto o = out.accessor<double, 3>();
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t c = 0; c + 1 < chunks; ++c) {
      const int64_t row = first + c * lag, next = row + lag;
      for (int64_t r = 0; r < lag; ++r) {
        std::vector<double> scaled(d);
        for (int64_t e = 0; e < d; ++e) {
          double lo = x[h][next][e], hi = x[h][next][e];
          for (int64_t t = 1; t < lag; ++t) {
            lo = std::min<double>(lo, x[h][next + t][e]);
            hi = std::max<double>(hi, x[h][next + t][e]);
          }
          scaled[e] = (x[h][row + r][e] - lo) / (hi - lo);
        }
        const double mean = std::accumulate(scaled.begin(), scaled.end(), 0.0) / double(d);
        double squares = 0;
        for (double v : scaled) squares += (v - mean) * (v - mean);
        o[h][c][r] = std::sqrt(squares / double(d - 1));
      }
    }
  }
  return out.softmax(-1).to(at::kFloat);
}

at::Tensor kernel_chunk_scores(const at::Tensor& states, int64_t first, int64_t chunks,
                               int64_t lag) {
  const int64_t heads = states.size(0), n = states.size(1), d = states.size(2);
  at::Tensor out = at::empty({heads, chunks - 1, lag});
  cpu::lag_chunk_scores(states.data_ptr<float>(), heads, n, d, first, chunks, lag,
                        out.data_ptr<float>());
  return out;
}

TEST(LagStatistics, EqualTheStatisticsWrittenOutOverEveryChunk) {
  at::manual_seed(7);
  struct Shape {
    int64_t heads, n, d, first, lag;
  };
  for (const Shape s : {Shape{3, 2000, 64, 4, 128}, Shape{2, 37, 5, 1, 8},
                        Shape{1, 300, 128, 0, 16}, Shape{8, 1030, 3, 4, 256}}) {
    const at::Tensor states = at::randn({s.heads, s.n, s.d}) * 3 + 1;
    const int64_t chunks = (s.n - s.first) / s.lag;
    const at::Tensor want = reference_chunk_scores(states, s.first, chunks, s.lag);
    const at::Tensor got = kernel_chunk_scores(states, s.first, chunks, s.lag);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-7))
        << s.n << " x " << s.d << ": " << (got - want).abs().max().item<float>();
    // Each chunk's scores are a softmax: they sum to one.
    EXPECT_TRUE(at::allclose(got.sum(-1), at::ones({s.heads, chunks - 1}), 1e-5));
  }
}

TEST(LagStatistics, AChannelConstantOverTheReferenceChunkGivesNanAsLagKvs) {
  at::Tensor states = at::randn({2, 40, 4});
  states.select(0, 1).narrow(0, 20, 10).select(1, 2).fill_(0.5);  // head 1, chunk 2, channel 2
  const at::Tensor want = reference_chunk_scores(states, 0, 4, 10);
  const at::Tensor got = kernel_chunk_scores(states, 0, 4, 10);
  EXPECT_TRUE(got[1][1].isnan().all().item<bool>());  // chunk 1 is scored against chunk 2
  EXPECT_EQ(got.isnan().equal(want.isnan()), true);
  EXPECT_TRUE(at::allclose(got.nan_to_num(0), want.nan_to_num(0), 1e-5, 1e-7));
}

}  // namespace
}  // namespace kvs::test
