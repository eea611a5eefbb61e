#include <gtest/gtest.h>

#include <string>

#include "longbench/rouge.h"

namespace {

using kvs::longbench::kRougeMaxBacktrackCalls;
using kvs::longbench::rouge_l_f;

// Expected values from pypi rouge 1.0.1: Rouge().get_scores([hyp], [ref], avg=True)["rouge-l"]["f"].

TEST(Rouge, MatchesTheLibrary) {
  EXPECT_EQ(rouge_l_f("the cat sat", "the cat sat"), 0.999999995);
  EXPECT_EQ(rouge_l_f("the cat sat on the mat. it was happy", "a cat sat on a mat. the cat was happy."),
            0.874999995);
  // The union-LCS example of the library's docstring.
  EXPECT_EQ(rouge_l_f("w1 w2 w6 w7 w8. w1 w3 w8 w9 w5", "w1 w2 w3 w4 w5"), 0.6153846106508877);
  // Case-sensitive words; whitespace collapsed with str.split (a no-break space included).
  EXPECT_EQ(rouge_l_f("Ab  c\u00a0d. x", "ab c d. X"), 0.4999999950000001);
  EXPECT_EQ(rouge_l_f("x y z", "a b c"), 0.0);
}

TEST(Rouge, EmptySidesScoreZero) {
  EXPECT_EQ(rouge_l_f("", ""), 0.0);     // the library raises ValueError
  EXPECT_EQ(rouge_l_f("...", "a b"), 0.0);  // only periods: no sentence
  EXPECT_EQ(rouge_l_f("a b", ""), 0.0);
}

TEST(Rouge, BlankSentenceIsTheEmptyWord) {
  // " . " has the sentences " " and " ", both collapsing to "": one shared word "".
  EXPECT_EQ(rouge_l_f(" . ", "  .  "), 0.999999995);
  EXPECT_EQ(rouge_l_f("a b", " . "), 0.0);
}

TEST(Rouge, RecursionLimitOfTheOfficialScorer) {
  // Reference "a", hypothesis "a b b ... b" (k b's): the backtrack walks left over the k b's,
  // takes the match, and stops: k + 2 calls.
  const auto hypothesis = [](size_t k) {
    std::string h = "a";
    for (size_t i = 0; i < k; ++i) h += " b";
    return h;
  };
  const size_t k_max = kRougeMaxBacktrackCalls - 2;
  EXPECT_GT(rouge_l_f(hypothesis(k_max), "a"), 0.6);
  EXPECT_EQ(rouge_l_f(hypothesis(k_max + 1), "a"), 0.0);  // RecursionError in CPython
  // Split into sentences, the same words stay under the limit.
  EXPECT_GT(rouge_l_f(hypothesis(500) + ". " + hypothesis(600), "a"), 0.0);
}

}  // namespace
