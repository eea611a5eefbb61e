#include <gtest/gtest.h>

#include "core/error.h"
#include "longbench/text.h"

namespace {

using namespace kvs::longbench;

std::string lower(const std::string& s) { return utf32_to_utf8(py_lower(utf8_to_utf32(s))); }

TEST(Text, Utf8RoundTripAndRejectsMalformedBytes) {
  const std::string s = "a\u00e9\u4e2d\U0001F600";
  EXPECT_EQ(utf8_to_utf32(s), U"a\u00e9\u4e2d\U0001F600");
  EXPECT_EQ(utf32_to_utf8(utf8_to_utf32(s)), s);
  EXPECT_THROW(utf8_to_utf32("\xC3"), kvs::Error);          // truncated
  EXPECT_THROW(utf8_to_utf32("\xC0\xAF"), kvs::Error);      // overlong
  EXPECT_THROW(utf8_to_utf32("\xED\xA0\x80"), kvs::Error);  // surrogate
  EXPECT_THROW(utf8_to_utf32("\x80"), kvs::Error);          // stray continuation
}

TEST(Text, LowerFollowsPythonIncludingSpecialCases) {
  EXPECT_EQ(lower("HeLLo WORLD"), "hello world");
  EXPECT_EQ(lower("\u00c9T\u00c9"), "\u00e9t\u00e9");       // ÉTÉ
  EXPECT_EQ(lower("\u0130"), "i\u0307");                   // İ -> i + combining dot (two chars)
  EXPECT_EQ(lower("STRASSE \u00df"), "strasse \u00df");     // ß has no lower-case change
  EXPECT_EQ(lower("\u0410\u0411\u0412"), "\u0430\u0431\u0432");  // Cyrillic
  EXPECT_EQ(lower("\u2160"), "\u2170");                    // Roman numeral one
}

TEST(Text, CapitalSigmaBecomesFinalAtTheEndOfAWord) {
  EXPECT_EQ(lower("\u039f\u0394\u039f\u03a3"), "\u03bf\u03b4\u03bf\u03c2");  // ΟΔΟΣ -> οδος
  EXPECT_EQ(lower("\u03a3\u039f"), "\u03c3\u03bf");  // initial: σ
  EXPECT_EQ(lower("\u03a3"), "\u03c3");              // alone: σ
  EXPECT_EQ(lower("A\u03a3 B"), "a\u03c2 b");        // after a cased letter, before a space
  EXPECT_EQ(lower("A\u03a3B"), "a\u03c3b");          // inside a word
  EXPECT_EQ(lower("A'\u03a3'"), "a'\u03c2'");        // apostrophes are case-ignorable
  EXPECT_EQ(lower("1\u03a3"), "1\u03c3");            // a digit is not cased
}

TEST(Text, SplitWhitespaceIsPythonsStrSplit) {
  const auto words = py_split_whitespace(utf8_to_utf32(" a\tb\u00a0c\u3000d\x1c" "e\u2028f  "));
  ASSERT_EQ(words.size(), 6u);
  EXPECT_EQ(words[0], U"a");
  EXPECT_EQ(words[5], U"f");
  // U+200B (zero width space) is not whitespace to Python.
  EXPECT_EQ(py_split_whitespace(U"a\u200bb").size(), 1u);
  EXPECT_TRUE(py_split_whitespace(U" \n\t ").empty());
}

TEST(Text, SplitOnKeepsEmptyPieces) {
  EXPECT_EQ(py_split_on("a..b.", '.'), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(py_split_on("", '.'), (std::vector<std::string>{""}));
}

TEST(Text, DigitRunsUseUnicodeDecimals) {
  const auto runs = find_digit_runs(U"abc123def 45 \u0663\u0664 \uff17 \u00b2 x7");
  ASSERT_EQ(runs.size(), 5u);  // superscript two is a digit but not a decimal: \d skips it
  EXPECT_EQ(runs[0], U"123");
  EXPECT_EQ(runs[1], U"45");
  EXPECT_EQ(runs[2], U"\u0663\u0664");
  EXPECT_EQ(runs[3], U"\uff17");
  EXPECT_EQ(runs[4], U"7");
}

TEST(Text, WordCharsAndPunctuation) {
  EXPECT_TRUE(py_is_word_char(U'_'));
  EXPECT_TRUE(py_is_word_char(U'\u00e9'));
  EXPECT_TRUE(py_is_word_char(U'\u00b2'));  // isalnum() counts numeric characters
  EXPECT_FALSE(py_is_word_char(U'-'));
  EXPECT_FALSE(py_is_word_char(U'\u0301'));  // combining mark
  EXPECT_TRUE(is_ascii_punctuation(U'!'));
  EXPECT_TRUE(is_ascii_punctuation(U'~'));
  EXPECT_FALSE(is_ascii_punctuation(U'\u00bf'));  // ¿ is not in string.punctuation
  EXPECT_FALSE(is_ascii_punctuation(U' '));
}

TEST(Text, FirstLineSkipsLeadingNewlinesOnly) {
  EXPECT_EQ(first_line("\n\nfirst\nsecond"), "first");
  EXPECT_EQ(first_line(" \nsecond"), " ");
  EXPECT_EQ(first_line("\n\n"), "");
  EXPECT_EQ(first_line("only"), "only");
}

}  // namespace
