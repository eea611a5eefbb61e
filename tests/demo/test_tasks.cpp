#include <gtest/gtest.h>

#include <set>

#include "demo/kv_recall.h"
#include "demo/passage_retrieval.h"
#include "demo/tasks.h"
#include "demo/words.h"

namespace kvs::demo {
namespace {

TEST(DemoWords, LexiconIsDistinctAndDeterministic) {
  const auto a = make_lexicon(300, 7), b = make_lexicon(300, 7), c = make_lexicon(300, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), a.size());
  for (const auto& w : a) EXPECT_TRUE(w.size() == 4 || w.size() == 6) << w;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// A paragraph line is "<words> <k>."; returns {words, k}.
std::pair<std::string, std::string> split_paragraph(const std::string& line) {
  const size_t space = line.rfind(' ');
  EXPECT_NE(space, std::string::npos);
  EXPECT_EQ(line.back(), '.');
  return {line.substr(0, space), line.substr(space + 1, line.size() - space - 2)};
}

TEST(DemoTasks, PassageQuestionsPointAtTheOneParagraphEndingWithTheSpan) {
  std::mt19937_64 gen(3);
  for (int i = 0; i < 20; ++i) {
    const TaskInstance task = make_passage_retrieval(demo_lexicon(), TaskShape{10, 30, 4}, gen);
    ASSERT_EQ(task.questions.size(), 4u);
    std::set<std::string> answers(task.answers.begin(), task.answers.end());
    EXPECT_EQ(answers.size(), 4u) << "questions ask about distinct paragraphs";
    const auto lines = lines_of(task.context);
    for (size_t q = 0; q < task.questions.size(); ++q) {
      int holders = 0;
      for (size_t i = 0; i < lines.size(); ++i) {
        const auto [body, number] = split_paragraph(lines[i]);
        EXPECT_EQ(number, std::to_string(i + 1)) << "paragraphs are numbered in order";
        const std::string padded = " " + body + " ";
        if (padded.find(" " + task.questions[q] + " ") == std::string::npos) continue;
        ++holders;
        EXPECT_EQ(body.size() - task.questions[q].size(), body.rfind(task.questions[q]))
            << "the span is the paragraph's tail";
        EXPECT_EQ("Paragraph " + number, task.answers[q]);
        const std::string last_word = body.substr(body.rfind(' ') + 1);
        EXPECT_EQ(last_word + " " + number + ".", task.completions[q])
            << "the span's last word, then what follows it in the context";
      }
      EXPECT_EQ(holders, 1) << task.questions[q];
    }
  }
}

TEST(DemoTasks, PassageContextsHoldNearDuplicates) {
  std::mt19937_64 gen(5);
  const TaskInstance task = make_passage_retrieval(demo_lexicon(), TaskShape{40, 40, 1}, gen);
  const auto lines = lines_of(task.context);
  ASSERT_EQ(lines.size(), 40u);
  // A near-duplicate shares its first-word bigram with an earlier paragraph most of the time.
  int shared = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string body = split_paragraph(lines[i]).first;
    for (size_t j = 0; j < i; ++j)
      if (lines[j].find(body.substr(0, 12)) != std::string::npos) {
        ++shared;
        break;
      }
  }
  EXPECT_GE(shared, 4);
}

TEST(DemoTasks, KvAnswersAreTheValuesOfTheAskedKeys) {
  std::mt19937_64 gen(11);
  const TaskInstance task = make_kv_recall(demo_lexicon(), TaskShape{50, 80, 3}, gen);
  ASSERT_EQ(task.questions.size(), 3u);
  for (size_t q = 0; q < 3; ++q) {
    const std::string line = "\n" + task.questions[q] + " " + task.answers[q] + ".";
    EXPECT_NE(("\n" + task.context).find(line), std::string::npos);
    EXPECT_EQ(task.completions[q], task.answers[q] + ".") << "what follows the key in the context";
    const std::string key = "\n" + task.questions[q] + " ";
    const std::string text = "\n" + task.context;
    EXPECT_EQ(text.find(key, text.find(key) + 1), std::string::npos) << "keys are unique";
  }
}

TEST(DemoTasks, UnknownTaskNamesTheKnownOnes) {
  try {
    demo_task("nope");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("demo_passage_retrieval"), std::string::npos);
  }
  EXPECT_NE(demo_task("demo_kv_recall").prompt_template().find("{context}"), std::string::npos);
}

}  // namespace
}  // namespace kvs::demo
