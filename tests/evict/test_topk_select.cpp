#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "evict/topk_select.h"

namespace {

// Sort every position by (score descending, position ascending), keep the first count.
std::vector<int64_t> reference_rank(const float* s, int64_t m, int64_t count) {
  std::vector<int64_t> order(static_cast<size_t>(m));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  order.resize(static_cast<size_t>(count));
  return order;
}

std::vector<int64_t> row(const at::Tensor& t, int64_t r) {
  const at::Tensor x = t[r].contiguous();
  return std::vector<int64_t>(x.data_ptr<int64_t>(), x.data_ptr<int64_t>() + x.numel());
}

TEST(TopK, RanksByScoreThenLowerPositionIncludingTies) {
  at::manual_seed(4);
  // Scores quantised to eighths: many exact ties, also at the cut.
  const at::Tensor scores = at::randint(0, 8, {6, 300}).to(at::kFloat) / 8;
  for (int64_t count : {0, 1, 7, 56, 299, 300}) {
    const at::Tensor ranked = kvs::evict::rank_top(scores, count);
    const at::Tensor kept = kvs::evict::select_topk(scores, count);
    ASSERT_EQ(ranked.sizes(), (std::vector<int64_t>{6, count}));
    for (int64_t r = 0; r < 6; ++r) {
      const auto expected = reference_rank(scores[r].contiguous().data_ptr<float>(), 300, count);
      EXPECT_EQ(row(ranked, r), expected) << "count " << count << " row " << r;
      auto sorted = expected;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(row(kept, r), sorted);
    }
  }
}

TEST(TopK, RejectsImpossibleCounts) {
  EXPECT_THROW(kvs::evict::rank_top(at::zeros({2, 5}), 6), kvs::Error);
  EXPECT_THROW(kvs::evict::rank_top(at::zeros({2, 5}), -1), kvs::Error);
  EXPECT_THROW(kvs::evict::rank_top(at::zeros({10}), 1), kvs::Error);
}

}  // namespace
