// Reading SQuAD v2 dev and HotpotQA dev distractor files as RULER's qa.py does, and the one-line
// errors for files that are not.
#include <gtest/gtest.h>

#include <set>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "ruler/qa_corpus.h"
#include "ruler/qa_fixtures.h"

namespace kvs::ruler {
namespace {

using nlohmann::json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(QaCorpus, SquadKeepsAnswerableQuestionsAndDistinctParagraphs) {
  test::ScratchDir dir;
  const std::string path = dir.write("dev-v2.0.json", test::squad_fixture(3, 4).dump());
  const QaCorpus c = load_squad(path);
  EXPECT_EQ(c.source, path);
  EXPECT_EQ(c.sha256.size(), 64u);
  ASSERT_EQ(c.documents.size(), 12u);                // the repeated paragraph once
  ASSERT_EQ(c.questions.size(), 3u * 4u * 2u + 2u);  // two answerable per paragraph, the copy's too
  EXPECT_EQ(std::set<std::string>(c.documents.begin(), c.documents.end()).size(), 12u);
  for (size_t i = 0; i < c.questions.size(); ++i) {
    const QaQuestion& q = c.questions[i];
    ASSERT_EQ(q.own_documents.size(), 1u);
    EXPECT_EQ(q.question.find("never"), std::string::npos) << "an impossible question was kept";
    for (const auto& a : q.answers)
      EXPECT_NE(c.documents[q.own_documents[0]].find(a), std::string::npos);
  }
  // Article 1 paragraph 2: its answers as listed (repeats kept), its article's other paragraphs
  // near.
  const QaQuestion& q = c.questions[(4 + 2) * 2 + 1];
  EXPECT_EQ(q.question, "What is the code of article 1 paragraph 2?");
  EXPECT_EQ(q.answers,
            (std::vector<std::string>{"amber-1-2", "the code is amber-1-2", "amber-1-2"}));
  EXPECT_EQ(c.documents[q.own_documents[0]], test::squad_paragraph(1, 2));
  std::vector<std::string> near;
  for (size_t d : q.near_documents) near.push_back(c.documents[d]);
  EXPECT_EQ(near,
            (std::vector<std::string>{test::squad_paragraph(1, 0), test::squad_paragraph(1, 1),
                                      test::squad_paragraph(1, 3)}));
  // The last article's copy of article 0's paragraph is near its other paragraphs, and one
  // document.
  const QaQuestion& copy = c.questions.back();
  EXPECT_EQ(c.documents[copy.own_documents[0]], test::squad_paragraph(0, 0));
  EXPECT_EQ(copy.near_documents.size(), 4u);
}

TEST(QaCorpus, HotpotqaDocumentIsTitleNewlineAndSentencesAsGiven) {
  test::ScratchDir dir;
  const std::string path = dir.write("hotpot.json", test::hotpotqa_fixture(4).dump());
  const QaCorpus c = load_hotpotqa(path);
  ASSERT_EQ(c.questions.size(), 4u);
  EXPECT_EQ(c.documents.size(), 4u * 10u - 3u);  // consecutive questions share one topic
  const QaQuestion& q = c.questions[1];
  EXPECT_EQ(q.question, "Which word does topic 10 hold?");
  EXPECT_EQ(q.answers, std::vector<std::string>{"ember10z"});
  ASSERT_EQ(q.own_documents.size(), 10u);
  EXPECT_TRUE(q.near_documents.empty());
  EXPECT_EQ(c.documents[q.own_documents[0]],
            "Topic 10\nTopic 10 holds the word ember10z. " + test::filler(10));
  EXPECT_EQ(q.own_documents[0], c.questions[0].own_documents[9]);
}

TEST(QaCorpus, BadFilesNameTheFileAndTheField) {
  test::ScratchDir dir;
  const auto squad_error = [&](const json& j) {
    const std::string path = dir.write("squad.json", j.dump());
    return error_of([&] { load_squad(path); });
  };
  const auto hotpot_error = [&](const json& j) {
    const std::string path = dir.write("hotpot.json", j.dump());
    return error_of([&] { load_hotpotqa(path); });
  };
  const std::string squad = dir.path() + "/squad.json: --squad: ";
  const std::string hotpot = dir.path() + "/hotpot.json: --hotpotqa: ";

  json j = test::squad_fixture(2, 2);
  j["data"][1]["paragraphs"][1]["qas"][2].erase("question");
  EXPECT_EQ(squad_error(j),
            squad + "data[1].paragraphs[1].qas[2]: missing required field \"question\"");
  j = test::squad_fixture(2, 2);
  j["data"][0]["paragraphs"][1]["context"] = 7;
  EXPECT_EQ(squad_error(j), squad + "data[0].paragraphs[1].context: expected a string, got 7");
  j = test::squad_fixture(2, 2);
  j["data"][0]["paragraphs"][0]["qas"][0].erase("is_impossible");
  EXPECT_EQ(squad_error(j),
            squad + "data[0].paragraphs[0].qas[0]: missing required field \"is_impossible\"");
  j = test::squad_fixture(2, 2);
  j["data"][0]["paragraphs"][0]["qas"][0]["answers"] = json::array();
  EXPECT_EQ(squad_error(j),
            squad + "data[0].paragraphs[0].qas[0].answers: an answerable question needs an answer");
  j = test::squad_fixture(1, 2);
  for (auto& p : j["data"][0]["paragraphs"])
    for (auto& qa : p["qas"]) qa["is_impossible"] = true;
  EXPECT_EQ(squad_error(j), dir.path() +
                                "/squad.json: --squad: no answerable question (6 with "
                                "is_impossible true); qa_1 asks SQuAD v2's answerable ones");
  const std::string layout =
      squad + "expected an object with a list \"data\" of articles (the dev-v2.0.json layout)";
  EXPECT_EQ(squad_error(test::hotpotqa_fixture(1)), layout);
  EXPECT_EQ(squad_error(json{{"version", "v2.0"}}), layout);

  j = test::hotpotqa_fixture(3);
  j[2].erase("answer");
  EXPECT_EQ(hotpot_error(j), hotpot + "[2]: missing required field \"answer\"");
  j = test::hotpotqa_fixture(3);
  j[1]["context"][4] = "Topic 14";
  EXPECT_EQ(hotpot_error(j), hotpot + "[1].context[4]: expected [title, [sentences...]]");
  j = test::hotpotqa_fixture(3);
  j[0]["context"][2][1][1] = 3;
  EXPECT_EQ(hotpot_error(j), hotpot + "[0].context[2][1][1]: a sentence must be a string");
  EXPECT_EQ(hotpot_error(test::squad_fixture(1, 1)),
            hotpot + "expected a JSON list of questions (got object)");
  EXPECT_EQ(hotpot_error(json::array()), hotpot + "the file has no questions");

  const std::string broken = dir.write("broken.json", "[{\"question\": ");
  EXPECT_EQ(error_of([&] { load_hotpotqa(broken); }).find(broken + ": not valid JSON"), 0u);
  EXPECT_EQ(error_of([&] { load_squad(dir.path() + "/none.json"); }),
            dir.path() + "/none.json: cannot open the --squad file");
}

}  // namespace
}  // namespace kvs::ruler
