#include <gtest/gtest.h>

#include "core/error.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tiktoken_reader.h"

namespace {

using kvs::tokenizer::PreTokenizer;

std::vector<std::string> split(const PreTokenizer& p, const std::string& text) {
  std::vector<std::string_view> pieces;
  p.split(text, pieces);
  return {pieces.begin(), pieces.end()};
}

TEST(PreTokenizer, Llama3PatternPieces) {
  const PreTokenizer p(kvs::tokenizer::llama3_pattern(), "test");
  using V = std::vector<std::string>;
  EXPECT_EQ(split(p, "Hello, world!"), (V{"Hello", ",", " world", "!"}));
  EXPECT_EQ(split(p, "I'm 12345 DON'T"), (V{"I", "'m", " ", "123", "45", " DON", "'T"}));
  EXPECT_EQ(split(p, "a  \n\n b"), (V{"a", "  \n\n", " b"}));
  EXPECT_EQ(split(p, "x   y"), (V{"x", "  ", " y"}));
  // Unicode letters (\p{L}) stay together with a leading non-letter.
  EXPECT_EQ(split(p, " caf\xC3\xA9 \xE6\x9D\xB1\xE4\xBA\xAC"),
            (V{" caf\xC3\xA9", " \xE6\x9D\xB1\xE4\xBA\xAC"}));
  EXPECT_TRUE(split(p, "").empty());
}

TEST(PreTokenizer, WhitespaceIsUnicodeWhiteSpace) {
  const PreTokenizer p(R"(\s+|\S+)", "test");
  using V = std::vector<std::string>;
  // U+0085 (NEL) is White_Space; U+180E (Mongolian vowel separator) is not since Unicode 6.3.
  EXPECT_EQ(split(p,
                  "a\xC2\x85"
                  "b"),
            (V{"a", "\xC2\x85", "b"}));
  EXPECT_EQ(split(p,
                  "a\xE1\xA0\x8E"
                  "b"),
            (V{"a\xE1\xA0\x8E"
               "b"}));
}

TEST(PreTokenizer, GapsBetweenMatchesArePieces) {
  const PreTokenizer p("[0-9]+", "test");
  using V = std::vector<std::string>;
  EXPECT_EQ(split(p, "ab12cd3"), (V{"ab", "12", "cd", "3"}));
}

// SmolLM2's sequence: each \p{N} split off first; GPT-2's pattern then runs on each fragment, whose
// end is the end of the text for (?!\S), so the spaces before a digit stay one piece.
TEST(PreTokenizer, SequenceSplitsEachPieceOfTheStepBefore) {
  const PreTokenizer p(std::vector<std::string>{R"(\p{N})", kvs::tokenizer::gpt2_pattern()}, "test");
  using V = std::vector<std::string>;
  EXPECT_EQ(split(p, "hello  123"), (V{"hello", "  ", "1", "2", "3"}));
  EXPECT_EQ(split(p, "x   42 y"), (V{"x", "   ", "4", "2", " y"}));
  const PreTokenizer gpt2(kvs::tokenizer::gpt2_pattern(), "test");
  EXPECT_EQ(split(gpt2, "hello  123"), (V{"hello", " ", " 123"}));
}

TEST(PreTokenizer, RewritesWhitespaceClasses) {
  const auto r = kvs::tokenizer::rewrite_whitespace_classes(R"(a\s[^\s\d]\S\\s)", "t");
  EXPECT_EQ(r.find("\\s"), r.find("\\\\s") + 1);  // only the escaped backslash + 's' is left
  EXPECT_NE(r.find("[^\\x{9}-\\x{D}"), std::string::npos);
  EXPECT_THROW(kvs::tokenizer::rewrite_whitespace_classes(R"([\S])", "t"), kvs::Error);
}

TEST(PreTokenizer, BadPatternNamesTheSource) {
  try {
    PreTokenizer p("(unclosed", "my/tokenizer.json");
    FAIL() << "no error";
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("my/tokenizer.json"), std::string::npos) << e.what();
  }
}

}  // namespace
