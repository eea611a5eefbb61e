#include <gtest/gtest.h>

#include "core/error.h"
#include "longbench/metrics.h"

namespace {

using namespace kvs::longbench;

// Expected values: the official metrics.py definitions run in CPython 3.11.

TEST(Metrics, NormalizeAnswer) {
  EXPECT_EQ(normalize_answer("The  quick, brown fox!"), "quick brown fox");
  EXPECT_EQ(normalize_answer("an apple a day"), "apple day");
  EXPECT_EQ(normalize_answer("anthem theatre"), "anthem theatre");  // articles as whole words only
  EXPECT_EQ(normalize_answer("a_b the_end"), "ab theend");  // '_' is punctuation, removed first
  EXPECT_EQ(normalize_answer("\u039f\u0394\u039f\u03a3 \u00c7a"), "\u03bf\u03b4\u03bf\u03c2 \u00e7a");
  // \b is Unicode-aware: "a" between letters é is not a word of its own.
  EXPECT_EQ(normalize_answer("Caf\u00e9 a\u00e9 \u00e9a"), "caf\u00e9 a\u00e9 \u00e9a");
}

TEST(Metrics, QaF1EdgeCases) {
  EXPECT_EQ(qa_f1_score("", ""), 0.0);
  EXPECT_EQ(qa_f1_score("x", ""), 0.0);
  EXPECT_EQ(qa_f1_score("", "x"), 0.0);
  EXPECT_EQ(qa_f1_score("!!!", "!!!"), 0.0);  // only punctuation: no tokens
  EXPECT_EQ(qa_f1_score("The Eiffel Tower", "eiffel tower"), 1.0);
  EXPECT_EQ(qa_f1_score("abc123", "abc 123"), 0.0);  // numbers inside words stay inside
  EXPECT_EQ(qa_f1_score("x y y", "y y z"), 0.6666666666666666);  // multiset overlap
  EXPECT_EQ(qa_f1_score("\u00c7a va", "\u00e7a va"), 1.0);
  EXPECT_EQ(qa_f1_score("Paris, France.", "Paris"), 0.6666666666666666);
}

TEST(Metrics, ClassificationLabelsThatAreSubstringsOfEachOther) {
  EXPECT_EQ(classification_score("Other location", "Other location",
                                 {"Other", "Other location", "location", "Date"}),
            1.0);
  // Removing "Other" while iterating skips "location", which survives: 1/2.
  EXPECT_EQ(classification_score("Other location", "Other location",
                                 {"Other", "location", "Other location"}),
            0.5);
  EXPECT_EQ(classification_score("Date", "Other", {"Other", "Date"}), 0.0);
  EXPECT_EQ(classification_score("Other location? Date", "Date", {"Other", "Date", "Other location"}),
            1.0 / 3);
  EXPECT_EQ(classification_score("", "Date", {"Date"}), 0.0);
}

TEST(Metrics, RetrievalAndCount) {
  EXPECT_EQ(retrieval_score("Paragraph 12 and Paragraph 3", "Paragraph 12"), 0.5);
  EXPECT_EQ(retrieval_score("112", "Paragraph 12"), 0.0);
  EXPECT_EQ(retrieval_score("", "Paragraph 12"), 0.0);
  EXPECT_EQ(retrieval_score("Paragraph 7", "Paragraph Paragraph 7: text"), 1.0);
  EXPECT_THROW(retrieval_score("1", "no paragraph here"), kvs::Error);
  EXPECT_EQ(count_score("There are 8 unique paragraphs, 8.", "8"), 1.0);
  EXPECT_EQ(count_score("abc8def 9", "8"), 0.5);  // numbers inside words count
  EXPECT_EQ(count_score("none", "8"), 0.0);
  EXPECT_EQ(count_score("\u0668", "8"), 0.0);  // an Arabic-Indic eight is a digit, but not "8"
}

TEST(Metrics, CodeSimFirstLineWithoutComments) {
  EXPECT_EQ(code_sim_score("\n\n// comment\n# x\n```\nreturn a + b;", "return a+b;"), 0.92);
  EXPECT_EQ(code_sim_score("// c\n# d", "x"), 0.0);
  EXPECT_EQ(code_sim_score("// c\n# d", ""), 1.0);  // "" == "": fuzz.ratio gives 100
  EXPECT_EQ(code_sim_score("    return a;", "return a;"), 0.82);  // the gold is not stripped
  EXPECT_EQ(code_sim_score("x = 1 # note\ny = 2", "y = 2"), 1.0);
}

}  // namespace

namespace kvs::longbench {
namespace {

TEST(RulerMetrics, StringMatchAllIsTheShareOfReferencesFoundCaseInsensitively) {
  EXPECT_EQ(string_match_all("The values are 123 and ABC.", {"123", "abc", "xyz", "456"}), 0.5);
  EXPECT_EQ(string_match_all("", {"7"}), 0.0);
  EXPECT_EQ(string_match_all("anything", {""}), 1.0);  // '' in s is True in Python
  EXPECT_EQ(string_match_all("cat", {"cat", "cat", "dog"}), 2.0 / 3.0);  // repeats count twice
  EXPECT_EQ(string_match_all("\xce\xa3", {"\xcf\x83"}), 1.0);  // "Σ".lower() == "σ"
  EXPECT_THROW(string_match_all("x", {}), Error);
}

TEST(RulerMetrics, StringMatchPartNeedsOneReference) {
  EXPECT_EQ(string_match_part("Paris, France", {"London", "paris"}), 1.0);
  EXPECT_EQ(string_match_part("Paris", {"London", "Rome"}), 0.0);
}

TEST(RulerMetrics, PostprocessStripsAndTurnsControlCharactersIntoNewlines) {
  EXPECT_EQ(ruler_postprocess("  \x01" "a\tb\x1f" "c \n"), "a\nb\nc");
  EXPECT_EQ(ruler_postprocess("\xc2\xa0x\xc2\xa0"), "x");  // str.strip removes U+00A0
}

}  // namespace
}  // namespace kvs::longbench
