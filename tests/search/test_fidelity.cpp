// fidelity's ROUGE-L over token ids: the F-measure of the longest common subsequence.
#include <gtest/gtest.h>

#include "search/fidelity.h"

namespace kvs::test {
namespace {

TEST(Fidelity, RougeLIsTheFMeasureOfTheLongestCommonSubsequence) {
  using search::rouge_l_tokens;
  EXPECT_DOUBLE_EQ(rouge_l_tokens({1, 2, 3, 4}, {1, 2, 3, 4}), 1.0);
  EXPECT_DOUBLE_EQ(rouge_l_tokens({1, 2, 3, 4}, {1, 3, 4, 5}), 0.75);  // LCS 1 3 4
  // LCS 2 of 2 and 4 tokens: P 1, R 0.5, F 2/3.
  EXPECT_NEAR(rouge_l_tokens({7, 9}, {7, 8, 9, 8}), 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(rouge_l_tokens({1, 2}, {3, 4}), 0.0);
  EXPECT_DOUBLE_EQ(rouge_l_tokens({}, {3, 4}), 0.0);
  // Order matters: a reversed sequence shares one token in order.
  EXPECT_DOUBLE_EQ(rouge_l_tokens({1, 2, 3}, {3, 2, 1}), 1.0 / 3.0);
}

}  // namespace
}  // namespace kvs::test
