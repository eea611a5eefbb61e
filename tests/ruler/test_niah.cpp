#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ruler/generators.h"
#include "ruler/word_list.h"

namespace kvs::ruler {
namespace {

struct NiahFixture : ::testing::Test {
  Wording wording = default_wording();
  WordList words = load_word_list();
  EssaySource essay = load_license_essay();
  Resources res{wording, essay.words, words.words, 4096};

  static size_t occurrences(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  }
};

TEST_F(NiahFixture, NeedleCountsAnswersAndDepthsAsSpecified) {
  for (const auto& task : ruler_tasks()) {
    if (task.family != Family::Niah) continue;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      std::mt19937_64 gen(seed);
      const Sample s = generate_niah(task, res, 400, gen);
      const size_t needles = static_cast<size_t>(task.niah.num_keys * task.niah.num_values);
      ASSERT_EQ(s.needle_offsets.size(), needles) << task.name;
      ASSERT_EQ(s.needle_depths.size(), needles) << task.name;
      EXPECT_TRUE(std::is_sorted(s.needle_offsets.begin(), s.needle_offsets.end())) << task.name;
      EXPECT_EQ(s.answers.size(), static_cast<size_t>(task.niah.num_queries * task.niah.num_values))
          << task.name;
      for (const auto& a : s.answers) EXPECT_EQ(occurrences(s.context, a), 1u) << task.name << " " << a;
      if (task.niah.haystack == Haystack::Essay) {
        EXPECT_EQ(std::set<int>(s.needle_depths.begin(), s.needle_depths.end()).size(), needles);
        for (int d : s.needle_depths)
          EXPECT_NE(std::find(needle_depths().begin(), needle_depths().end(), d), needle_depths().end());
      } else {
        // A line haystack of 400 lines plus one line per needle.
        EXPECT_EQ(std::count(s.context.begin(), s.context.end(), '\n'),
                  static_cast<long>(400 + needles - 1 + 1));  // + the template's newline before it
      }
      const bool single = task.niah.num_queries * task.niah.num_values == 1;
      EXPECT_EQ(s.question.find("Which are all") == std::string::npos, single) << task.name;
      EXPECT_EQ(s.answer_prefix.find(single ? " is" : " are") != std::string::npos, true) << task.name;
    }
  }
}

TEST_F(NiahFixture, MultiqueryJoinsFourKeysAsRuler) {
  std::mt19937_64 gen(7);
  const Sample s = generate_niah(find_task("niah_multiquery"), res, 300, gen);
  const size_t commas = static_cast<size_t>(std::count(s.question.begin(), s.question.end(), ','));
  EXPECT_EQ(commas, 3u) << s.question;
  EXPECT_NE(s.question.find(", and "), std::string::npos) << s.question;
}

TEST_F(NiahFixture, EssayDepthZeroAndHundredPutTheNeedleFirstAndLast) {
  std::mt19937_64 gen(3);
  int first = 0, last = 0;
  for (int i = 0; i < 200; ++i) {
    const Sample s = generate_niah(find_task("niah_single_2"), res, 300, gen);
    const size_t haystack_start = s.context.find('\n') + 1;
    if (s.needle_depths[0] == 0) {
      ++first;
      EXPECT_EQ(s.needle_offsets[0], static_cast<int64_t>(haystack_start));
    }
    if (s.needle_depths[0] == 100) {
      ++last;
      const std::string tail = s.context.substr(s.context.size() - s.answers[0].size() - 1);
      EXPECT_EQ(tail, s.answers[0] + ".");
    }
  }
  EXPECT_GT(first, 0);  // 200 draws of 40 depths: each end comes up about 5 times
  EXPECT_GT(last, 0);
}

}  // namespace
}  // namespace kvs::ruler
