#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

// Long rows take the sampled cut (every 16th score judges the cut), short or dense ones the
// threshold scan: both must give the reference ranking, ties at the cut included.
TEST(TopK, LongRowsRankLikeTheReferenceOnBothPaths) {
  at::manual_seed(5);
  const int64_t m = 15600;
  const at::Tensor uniform = at::rand({4, m});
  const at::Tensor tied = at::randint(0, 64, {4, m}).to(at::kFloat) / 64;
  // Descending scores: the sample's cut sits exactly at the count-th score's block.
  const at::Tensor descending = at::arange(m, 0, -1).to(at::kFloat).unsqueeze(0).repeat({2, 1});
  // Only the sampled positions score 1: the cut (1) collects m / 16 positions, fewer than a
  // count above that, so the row falls back to the scan.
  at::Tensor misleading = at::zeros({2, m});
  misleading.index_put_({at::indexing::Slice(), at::indexing::Slice(0, m, 16)}, 1.0f);
  for (const at::Tensor& scores : {uniform, tied, descending, misleading}) {
    for (int64_t count : {1, 12, 56, 224, 1000, 2000, 3000}) {
      const at::Tensor ranked = kvs::evict::rank_top(scores, count);
      for (int64_t r = 0; r < scores.size(0); ++r) {
        const auto expected = reference_rank(scores[r].contiguous().data_ptr<float>(), m, count);
        ASSERT_EQ(row(ranked, r), expected) << "count " << count << " row " << r;
      }
    }
  }
}

// -0 ranks as +0 (they compare equal, so position decides), and NaN above every number (as
// torch's sort, the CUDA path, ranks it).
TEST(TopK, SignedZerosTieAndNaNRanksFirst) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // 40 tokens take the scan; 40,000 the sampled cut, which here falls among the zeros.
  for (const auto& [m, counts] : {std::pair<int64_t, std::vector<int64_t>>{40, {1, 10, 21, 30, 40}},
                                  {40000, {1, 500, 1000, 4000}}}) {
    std::vector<float> s(static_cast<size_t>(m));
    const float kinds[3] = {0.0f, -0.0f, -1.0f};
    for (int64_t i = 0; i < m; ++i)
      s[i] = i % 97 == 0 ? nan : i % 50 == 0 ? 2.0f : kinds[(i * 7) % 3];
    const at::Tensor scores = at::from_blob(s.data(), {1, m}).clone();
    std::vector<int64_t> order(static_cast<size_t>(m));
    std::iota(order.begin(), order.end(), 0);
    const auto level = [&](int64_t i) { return std::isnan(s[i]) ? 3.0f : s[i] + 0.0f; };
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return level(a) > level(b); });
    for (const int64_t count : counts) {
      const std::vector<int64_t> expected(order.begin(), order.begin() + count);
      EXPECT_EQ(row(kvs::evict::rank_top(scores, count), 0), expected)
          << "m " << m << " count " << count;
    }
  }
}

TEST(TopK, RejectsImpossibleCounts) {
  EXPECT_THROW(kvs::evict::rank_top(at::zeros({2, 5}), 6), kvs::Error);
  EXPECT_THROW(kvs::evict::rank_top(at::zeros({2, 5}), -1), kvs::Error);
  EXPECT_THROW(kvs::evict::rank_top(at::zeros({10}), 1), kvs::Error);
}

}  // namespace
