#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "core/error.h"
#include "evict/greedy_select.h"
#include "evict/topk_select.h"

namespace {

// docs/reference.md §1 written out with plain loops: candidates by sorting, cosines from their
// definition, each step a full scan over every remaining candidate. Ties of the objective go to
// the higher-ranked candidate (larger score, then lower position).
std::vector<int64_t> brute_force(const at::Tensor& scores_row, const at::Tensor& keys_head,
                                 int64_t count, float lambda2, int64_t factor) {
  const int64_t m = scores_row.size(0), dim = keys_head.size(1);
  const auto s = scores_row.accessor<float, 1>();
  const auto k = keys_head.accessor<float, 2>();
  std::vector<int64_t> order(static_cast<size_t>(m));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  order.resize(static_cast<size_t>(std::min(m, factor * count)));
  const float top = std::max(s[order[0]], 1e-12f);
  const auto cosine = [&](int64_t a, int64_t b) {
    float na = 0, nb = 0, ab = 0;
    for (int64_t e = 0; e < dim; ++e) {
      na += k[a][e] * k[a][e];
      nb += k[b][e] * k[b][e];
      ab += k[a][e] * k[b][e];
    }
    return ab / (std::sqrt(na) * std::sqrt(nb));
  };
  std::vector<int64_t> chosen;
  while (static_cast<int64_t>(chosen.size()) < count) {
    int64_t best = -1;
    float best_value = 0;
    for (int64_t i : order) {  // rank order: the first of equal objectives wins
      if (std::find(chosen.begin(), chosen.end(), i) != chosen.end()) continue;
      float corr = 0;
      for (int64_t j : chosen) corr = std::max(corr, cosine(i, j));
      const float value = s[i] / top + lambda2 * corr;
      if (best < 0 || value > best_value) {
        best = i;
        best_value = value;
      }
    }
    chosen.push_back(best);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<int64_t> row(const at::Tensor& t, int64_t r) {
  const at::Tensor x = t[r].contiguous();
  return std::vector<int64_t>(x.data_ptr<int64_t>(), x.data_ptr<int64_t>() + x.numel());
}

TEST(Greedy, MatchesTheBruteForceOnRandomInputs) {
  at::manual_seed(5);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t kv_heads = 2, group = trial % 3 + 1, rows = kv_heads * group;
    const int64_t n = 60 + 17 * trial, m = n - 8, dim = 8 + 8 * (trial % 3);
    const int64_t count = 1 + trial % 9;
    const float lambda2 = (trial % 4 == 0 ? 0.5f : -0.15f) * static_cast<float>(1 + trial % 3);
    const at::Tensor scores = at::rand({rows, m});
    const at::Tensor keys = at::randn({kv_heads, n, dim});
    const at::Tensor kept = kvs::evict::select_greedy(scores, keys, count, lambda2, 4);
    ASSERT_EQ(kept.sizes(), (std::vector<int64_t>{rows, count}));
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(row(kept, r), brute_force(scores[r], keys[r / group], count, lambda2, 4))
          << "trial " << trial << " row " << r;
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

TEST(Greedy, ManyAdmissionsMatchTheBruteForce) {
  // Enough admissions for the eight-key sweeps of both loops, head widths with and without a
  // remainder after the eight-float lanes.
  at::manual_seed(8);
  for (const int64_t dim : {12, 64}) {
    for (const float lambda2 : {-0.15f, -0.6f, 0.3f}) {
      const at::Tensor scores = at::rand({2, 300});
      const at::Tensor keys = at::randn({1, 308, dim});
      const at::Tensor kept = kvs::evict::select_greedy(scores, keys, 40, lambda2, 4);
      for (int64_t r = 0; r < 2; ++r) {
        EXPECT_EQ(row(kept, r), brute_force(scores[r], keys[0], 40, lambda2, 4))
            << "dim " << dim << " lambda2 " << lambda2 << " row " << r;
      }
    }
  }
}

TEST(Greedy, BreaksTiesByRankLikeTheBruteForce) {
  // Exact arithmetic: scores in eighths with a maximum of 1 (so s~ = s), axis-aligned keys (cos 0
  // or 1) in three directions, lambda2 a power of two. Objectives tie often.
  at::manual_seed(6);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t n = 48, m = 40, dim = 4, count = 3 + trial % 6;
    at::Tensor scores = at::randint(1, 9, {2, m}).to(at::kFloat) / 8;
    scores.select(1, trial % m).fill_(1.0f);
    const at::Tensor direction = at::randint(0, 3, {1, n});
    const at::Tensor keys = at::one_hot(direction, dim).to(at::kFloat) * 3;
    for (const float lambda2 : {-0.5f, 0.25f, -1.0f}) {
      const at::Tensor kept = kvs::evict::select_greedy(scores, keys, count, lambda2, 2);
      for (int64_t r = 0; r < 2; ++r) {
        EXPECT_EQ(row(kept, r), brute_force(scores[r], keys[0], count, lambda2, 2))
            << "trial " << trial << " lambda2 " << lambda2 << " row " << r;
      }
    }
  }
}

TEST(Greedy, ZeroLambda2AdmitsExactlyTheTopK) {
  at::manual_seed(7);
  const at::Tensor scores = at::randint(0, 5, {8, 500}).to(at::kFloat);  // heavy ties
  const at::Tensor keys = at::randn({4, 510, 16});
  for (int64_t count : {1, 20, 125, 499}) {
    EXPECT_TRUE(at::equal(kvs::evict::select_greedy(scores, keys, count, 0.0, 4),
                          kvs::evict::select_topk(scores, count)))
        << "count " << count;
  }
}

TEST(Greedy, OnlyCandidatesCanBeAdmitted) {
  // With a strong redundancy penalty and identical keys, the greedy still never leaves the top
  // candidate_factor * count tokens.
  at::manual_seed(8);
  const at::Tensor scores = at::rand({1, 200});
  const at::Tensor keys = at::ones({1, 210, 8});
  const at::Tensor kept = kvs::evict::select_greedy(scores, keys, 5, -10.0, 2);
  const auto candidates = row(kvs::evict::rank_top(scores, 10), 0);
  for (int64_t p : row(kept, 0)) {
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), p), candidates.end()) << p;
  }
}

TEST(Greedy, AdmissionHandlesRaggedRows) {
  // Row 0: 3 of 4 candidates, row 1: 1 of 2 (the rest is padding and must be ignored).
  const at::Tensor keys = at::eye(4).unsqueeze(0).repeat({2, 1, 1});
  const at::Tensor scores =
      at::tensor({1.0f, 0.9f, 0.8f, 0.7f, 0.5f, 0.6f, 9.0f, 9.0f}).view({2, 4});
  const at::Tensor picked =
      kvs::evict::admit_greedy(keys, scores, at::tensor({4, 2}, at::kLong),
                               at::tensor({3, 1}, at::kLong), at::tensor({-0.5f, -0.5f}));
  EXPECT_EQ(row(picked, 0), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(row(picked, 1), (std::vector<int64_t>{1, -1, -1}));
  EXPECT_THROW(kvs::evict::admit_greedy(keys, scores, at::tensor({4, 2}, at::kLong),
                                        at::tensor({3, 3}, at::kLong), at::tensor({0.f, 0.f})),
               kvs::Error);
}

TEST(Greedy, AdmissionOfUnsortedCandidatesMatchesThePlainLoop) {
  // admit_greedy on candidates in any order, ties everywhere: entries in quarters make every dot
  // product exact, scores in sixteenths repeat. The plain loop scans every remaining candidate in
  // index order at every step (the first of equal objectives wins), cosines being the dot
  // products of the given keys.
  at::manual_seed(9);
  const int64_t rows = 24, width = 90, dim = 16;
  const at::Tensor keys = at::randint(-4, 5, {rows, width, dim}).to(at::kFloat) / 4;
  const at::Tensor scores = at::randint(0, 16, {rows, width}).to(at::kFloat) / 16;
  const at::Tensor candidates = at::randint(20, width + 1, {rows}, at::kLong);
  const at::Tensor counts = at::minimum(at::randint(1, 40, {rows}, at::kLong), candidates);
  for (const float lambda2 : {-0.125f, -0.5f, -4.0f}) {
    const at::Tensor picked = kvs::evict::admit_greedy(keys, scores, candidates, counts,
                                                       at::full({rows}, lambda2));
    for (int64_t r = 0; r < rows; ++r) {
      const at::Tensor row_scores = scores[r], row_keys = keys[r];
      const auto s = row_scores.accessor<float, 1>();
      const auto k = row_keys.accessor<float, 2>();
      const auto dot = [&](int64_t a, int64_t b) {
        float sum = 0;
        for (int64_t e = 0; e < dim; ++e) sum += k[a][e] * k[b][e];
        return sum;
      };
      std::vector<int64_t> expected;
      while (static_cast<int64_t>(expected.size()) < counts[r].item<int64_t>()) {
        int64_t best = -1;
        float best_value = 0;
        for (int64_t i = 0; i < candidates[r].item<int64_t>(); ++i) {
          if (std::find(expected.begin(), expected.end(), i) != expected.end()) continue;
          float corr = 0;
          for (int64_t j : expected) corr = std::max(corr, dot(i, j));
          const float value = s[i] + lambda2 * corr;
          if (best < 0 || value > best_value) {
            best = i;
            best_value = value;
          }
        }
        expected.push_back(best);
      }
      std::vector<int64_t> got = row(picked, r);
      got.resize(expected.size());
      EXPECT_EQ(got, expected) << "lambda2 " << lambda2 << " row " << r;
    }
  }
}

TEST(Greedy, PositiveLambda2PrefersRedundantTokens) {
  // Tokens 0 and 3 share a direction; token 1 scores a little higher than 3 but is orthogonal.
  const at::Tensor keys = at::tensor({1.f, 0.f, 0.f, 1.f, 0.f, 1.f, 1.f, 0.f}).view({1, 4, 2});
  const at::Tensor scores = at::tensor({1.0f, 0.9f, 0.1f, 0.8f}).view({1, 4});
  EXPECT_EQ(row(kvs::evict::select_greedy(scores, keys, 2, 0.5, 4), 0),
            (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(row(kvs::evict::select_greedy(scores, keys, 2, -0.5, 4), 0),
            (std::vector<int64_t>{0, 1}));
}

}  // namespace
