#include <gtest/gtest.h>

#include <string>

#include "longbench/difflib.h"
#include "longbench/metrics.h"

namespace {

using namespace kvs::longbench;

// Expected values from CPython 3.11's difflib.SequenceMatcher(None, a, b).

TEST(Difflib, MatchingBlocksAndRatio) {
  EXPECT_EQ(difflib_matching_characters(U"abxcd", U"abcd"), 4u);
  EXPECT_DOUBLE_EQ(difflib_ratio(U"abxcd", U"abcd"), 0.8888888888888888);
  EXPECT_EQ(difflib_matching_characters(U"qabxcd", U"abycdf"), 4u);
  EXPECT_EQ(difflib_ratio(U"", U""), 1.0);
  EXPECT_EQ(difflib_ratio(U"abc", U""), 0.0);
  EXPECT_EQ(difflib_ratio(U"private Thread currentThread;",
                          U"private volatile Thread currentThread;"),
            0.8656716417910447);
}

TEST(Difflib, AutojunkStartsAtTwoHundredElementsOfB) {
  std::u32string b200;
  for (int i = 0; i < 100; ++i) b200 += U"ab";
  // Every element of b is popular: nothing can start a match, but a zero-size match at (0, 0)
  // still extends over equal elements.
  EXPECT_EQ(difflib_matching_characters(U"ab", b200), 2u);
  EXPECT_EQ(difflib_matching_characters(U"ba", b200), 0u);
  const std::u32string tail = U"xaz" + std::u32string(197, U'a');
  EXPECT_EQ(difflib_matching_characters(U"xaz", tail), 3u);  // extension through popular 'a'
  EXPECT_EQ(difflib_matching_characters(U"qxaz", tail + U"q"), 1u);
  const std::u32string b199 = b200.substr(0, 199);
  EXPECT_EQ(difflib_matching_characters(U"ba", b199), 2u);  // under 200: no junk
}

TEST(Difflib, LongestMatchTieBreaksToEarliestInA) {
  // 'ab' occurs twice in each; the matching blocks are (1,0,2) and (4,2,2).
  EXPECT_EQ(difflib_matching_characters(U"xabyab", U"abab"), 4u);
}

TEST(Difflib, FuzzRatioRounding) {
  EXPECT_EQ(fuzz_ratio("abxcd", "abcd"), 89);
  EXPECT_EQ(fuzz_ratio("", ""), 100);      // equal strings first
  EXPECT_EQ(fuzz_ratio("", "x"), 0);       // then the empty check
  EXPECT_EQ(fuzz_ratio("h\u00e9llo w\u00f6rld", "hello world"), 82);  // code points, not bytes
  // 100 * 2 * 1 / 8 = 25.0 exactly; 100 * 2 * 1 / 16 = 12.5 rounds to even (12).
  EXPECT_EQ(fuzz_ratio("ab", "acdddd"), 25);
  EXPECT_EQ(fuzz_ratio("a", "abbbbbbbbbbbbbb"), 12);
}

}  // namespace
