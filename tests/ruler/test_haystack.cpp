#include <gtest/gtest.h>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "ruler/haystack.h"

namespace kvs::ruler {
namespace {

TEST(Haystack, DepthsAreRulersRoundedLinspace) {
  const std::vector<int> expected = {0,  3,  5,  8,  10, 13, 15, 18, 21, 23, 26, 28, 31, 33,
                                     36, 38, 41, 44, 46, 49, 51, 54, 56, 59, 62, 64, 67, 69,
                                     72, 74, 77, 79, 82, 85, 87, 90, 92, 95, 97, 100};
  EXPECT_EQ(needle_depths(), expected);
}

TEST(Haystack, SentencesEndAtTerminalPunctuationAndRepeatTheStream) {
  const std::vector<std::string> words = {"One", "two.", "Three?", "\"Four!\"", "five"};
  EXPECT_EQ(essay_sentences(words, 5),
            (std::vector<std::string>{"One two.", "Three?", "\"Four!\"", "five"}));
  EXPECT_EQ(essay_sentences(words, 7), (std::vector<std::string>{"One two.", "Three?", "\"Four!\"",
                                                                 "five One two."}));
  EXPECT_EQ(essay_sentences(words, 1), (std::vector<std::string>{"One"}));
}

TEST(Haystack, InsertLinesKeepsOrderAndPlacesBeforeTheLine) {
  const std::vector<std::string> lines = {"a", "b", "c"};
  EXPECT_EQ(insert_lines(lines, {"X", "Y"}, {0, 2}),
            (std::vector<std::string>{"X", "a", "b", "Y", "c"}));
  EXPECT_EQ(insert_lines(lines, {"X", "Y"}, {1, 1}),
            (std::vector<std::string>{"a", "X", "Y", "b", "c"}));
}

TEST(Haystack, LicenseEssayIsProseFromBaseFiles) {
  const EssaySource essay = load_license_essay();
  EXPECT_GT(essay.words.size(), 20000u);
  EXPECT_NE(essay.description.find("GPL-3"), std::string::npos);
  EXPECT_EQ(essay.sha256.size(), 64u);
}

TEST(Haystack, FileMustBeNonEmptyUtf8) {
  test::ScratchDir dir;
  const auto good = dir.write("good.txt", "Caf\xc3\xa9 au lait.  Second\n sentence.");
  EXPECT_EQ(load_essay_file(good).words,
            (std::vector<std::string>{"Caf\xc3\xa9", "au", "lait.", "Second", "sentence."}));
  const auto empty = dir.write("empty.txt", " \n\t ");
  const auto latin1 = dir.write("latin1.txt", "Caf\xe9");
  try {
    load_essay_file(empty);
    FAIL() << "an empty haystack was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--haystack"), std::string::npos) << e.what();
  }
  try {
    load_essay_file(latin1);
    FAIL() << "a Latin-1 haystack was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvs::ruler
