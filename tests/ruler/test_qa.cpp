// qa_1 / qa_2 from made-up SQuAD and HotpotQA files: the references and the question's documents,
// the order distractors are drawn in, RULER's fixed document permutation, and the generated data
// as `kvsearch run` reads it (every prompt within its target and at least 90% of it in Mistral's
// tokens, byte-identical for one seed).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "longbench/prompt.h"
#include "ruler/generators.h"
#include "ruler/qa_fixtures.h"
#include "ruler/word_list.h"
#include "ruler/writer.h"
#include "tokenizer/test_support.h"
#include "tokenizer/tokenizer.h"

namespace kvs::ruler {
namespace {

namespace fs = std::filesystem;

// The documents of a qa context, in order, checking their "Document i:" numbers from 1.
std::vector<std::string> documents_of(const std::string& context) {
  std::vector<std::string> docs;
  size_t at = context.find("Document 1:\n");
  EXPECT_NE(at, std::string::npos) << context;
  while (at != std::string::npos) {
    const std::string header = "Document " + std::to_string(docs.size() + 1) + ":\n";
    EXPECT_EQ(context.compare(at, header.size(), header), 0) << context.substr(at, 40);
    const size_t start = at + header.size();
    const size_t next =
        context.find("\n\nDocument " + std::to_string(docs.size() + 2) + ":\n", start);
    docs.push_back(
        context.substr(start, next == std::string::npos ? std::string::npos : next - start));
    at = next == std::string::npos ? next : next + 2;
  }
  return docs;
}

struct QaFixture : ::testing::Test {
  test::ScratchDir dir;
  Wording wording = default_wording();
  std::vector<std::string> no_words;
  QaCorpus squad = load_squad(dir.write("squad.json", test::squad_fixture(6, 6).dump()));
  QaCorpus hotpot = load_hotpotqa(dir.write("hotpot.json", test::hotpotqa_fixture(8).dump()));

  Sample generate(const std::string& task, const QaCorpus& corpus, size_t question, int64_t units,
                  uint64_t seed = 1) {
    Resources res{wording, no_words, no_words, 4096};
    res.qa = &corpus;
    res.question_index = question;
    res.shuffle_seed = 42;
    std::mt19937_64 gen(seed);
    Sample s = generate_sample(find_task(task), res, units, gen);
    auto docs = documents_of(s.context);
    EXPECT_EQ(docs.size(),
              static_cast<size_t>(std::clamp<int64_t>(
                  units, static_cast<int64_t>(corpus.questions[question].own_documents.size()),
                  static_cast<int64_t>(corpus.documents.size()))));
    return s;
  }

  static std::vector<std::string> docs(const Sample& s) { return documents_of(s.context); }
};

TEST_F(QaFixture, ReferencesQuestionAndGoldDocument) {
  for (size_t i = 0; i < squad.questions.size(); i += 5) {
    const Sample s = generate("qa_1", squad, i, 8);
    const QaQuestion& q = squad.questions[i];
    EXPECT_EQ(s.answers, q.answers);
    EXPECT_NE(s.question.find("Question: " + q.question), std::string::npos) << s.question;
    EXPECT_EQ(s.answer_prefix, " Answer:");
    ASSERT_EQ(s.gold_documents.size(), 1u);
    const auto d = docs(s);
    EXPECT_EQ(d[static_cast<size_t>(s.gold_documents[0] - 1)], squad.documents[q.own_documents[0]]);
    EXPECT_EQ(std::set<std::string>(d.begin(), d.end()).size(), d.size()) << "a document twice";
  }
  for (size_t i = 0; i < hotpot.questions.size(); ++i) {
    const Sample s = generate("qa_2", hotpot, i, 13);
    const QaQuestion& q = hotpot.questions[i];
    EXPECT_EQ(s.answers, q.answers);
    ASSERT_EQ(s.gold_documents.size(), 10u);
    const auto d = docs(s);
    std::set<std::string> gold;
    for (int g : s.gold_documents) gold.insert(d[static_cast<size_t>(g - 1)]);
    std::set<std::string> own;
    for (size_t o : q.own_documents) own.insert(hotpot.documents[o]);
    EXPECT_EQ(gold, own);
    EXPECT_EQ(gold.count(hotpot.documents[q.own_documents[0]]), 1u);  // the one with the answer
  }
}

TEST_F(QaFixture, DistractorsComeFromTheArticleFirstThenFromAnywhere) {
  const size_t question = 2 * 12 + 3;  // article 2, paragraph 1
  const auto article_of = [](const std::string& doc) {
    return doc.substr(0, doc.find(" paragraph"));
  };
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    // Up to the article's 6 paragraphs: only the article's.
    for (int64_t units : {1, 3, 6}) {
      const auto d = docs(generate("qa_1", squad, question, units, seed));
      for (const auto& doc : d) EXPECT_EQ(article_of(doc), "From article 2") << units;
    }
    // More: all of the article's, the rest from others.
    const auto d = docs(generate("qa_1", squad, question, 20, seed));
    size_t from_article = 0;
    for (const auto& doc : d) from_article += article_of(doc) == "From article 2";
    EXPECT_EQ(from_article, 6u);
  }
  // Every document, whatever the count asked.
  EXPECT_EQ(docs(generate("qa_1", squad, question, 1000)).size(), squad.documents.size());
  // HotpotQA: the question's 10 always, fewer units cannot drop them.
  EXPECT_EQ(generate("qa_2", hotpot, 3, 4).gold_documents.size(), 10u);
}

TEST_F(QaFixture, OneDocumentCountGivesOnePermutationAsRuler) {
  std::set<int> positions;
  for (size_t i = 0; i < squad.questions.size(); i += 3)
    positions.insert(generate("qa_1", squad, i, 15, 100 + i).gold_documents[0]);
  EXPECT_EQ(positions.size(), 1u) << "the gold paragraph moved between samples of one count";
  std::set<int> by_count;
  for (int64_t units = 10; units < 30; ++units)
    by_count.insert(generate("qa_1", squad, 0, units).gold_documents[0]);
  EXPECT_GT(by_count.size(), 1u) << "the permutation does not depend on the count";
}

TEST_F(QaFixture, WithoutTheFileTheGeneratorNamesTheOption) {
  Resources res{wording, no_words, no_words, 4096};
  std::mt19937_64 gen(1);
  try {
    generate_sample(find_task("qa_2"), res, 10, gen);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--hotpotqa FILE"), std::string::npos) << e.what();
  }
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct QaWriter : ::testing::Test {
  test::ScratchDir dir;
  std::string squad_file = dir.write("squad.json", test::squad_fixture(8, 8).dump());
  std::string hotpot_file = dir.write("hotpot.json", test::hotpotqa_fixture(9).dump());

  RulerDataOptions options(const fs::path& out, uint64_t seed) const {
    RulerDataOptions o;
    o.model = test::mistral_model_path();
    o.out_dir = out.string();
    o.lengths = {1024, 2048};
    o.count = 5;
    o.seed = seed;
    o.tasks = {"qa_1", "qa_2"};
    o.squad_file = squad_file;
    o.hotpotqa_file = hotpot_file;
    return o;
  }
};

TEST_F(QaWriter, EveryPromptFitsItsTargetAndAsksQuestionI) {
  const fs::path out = dir / "out";
  const auto result = write_ruler_data(options(out, 3));
  EXPECT_TRUE(result.notes.empty());
  ASSERT_EQ(result.datasets.size(), 4u);
  const QaCorpus squad = load_squad(squad_file), hotpot = load_hotpotqa(hotpot_file);
  const auto tok = tokenizer::load_tokenizer_file(test::mistral_model_path());
  const longbench::Config config = longbench::load_config(out.string());
  const auto metrics = nlohmann::json::parse(read(out / "config" / "dataset2metric.json"));
  longbench::PromptOptions prompt_options;
  prompt_options.max_length = 1 << 20;
  for (const auto& d : result.datasets) {
    const bool is_squad = d.dataset.rfind("qa_1", 0) == 0;
    const QaCorpus& corpus = is_squad ? squad : hotpot;
    const int64_t target = std::stoll(d.dataset.substr(d.dataset.rfind('_') + 1));
    EXPECT_EQ(config.max_new_tokens_for(d.dataset), 32);
    EXPECT_EQ(metrics[d.dataset], "string_match_part");
    const auto records = longbench::load_dataset(out.string(), d.dataset);
    ASSERT_EQ(records.size(), 5u);
    for (size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      const auto prompt = longbench::build_prompt(*tok, config, d.dataset, r, prompt_options);
      const int64_t length = static_cast<int64_t>(prompt.ids.size()) + 32;
      EXPECT_EQ(length, r.length) << d.dataset;
      EXPECT_LE(length, target) << d.dataset;
      EXPECT_GE(length * 10, target * 9) << d.dataset;
      const QaQuestion& q = corpus.questions[i];
      EXPECT_EQ(r.answers, q.answers) << d.dataset << " " << i;
      EXPECT_NE(r.input.find(q.question), std::string::npos) << r.input;
      for (size_t own : q.own_documents)
        EXPECT_NE(r.context.find(":\n" + corpus.documents[own]), std::string::npos)
            << d.dataset << " " << i;
    }
  }
  const std::string lines = read(out / "data" / "qa_1_1024.jsonl");
  const auto record = nlohmann::json::parse(lines.substr(0, lines.find('\n')));
  ASSERT_EQ(record["gold_documents"].size(), 1u);
  const auto params = nlohmann::json::parse(read(out / "ruler_generation.json"));
  EXPECT_EQ(params["qa_files"]["squad"]["source"], squad_file);
  EXPECT_EQ(params["qa_files"]["hotpotqa"]["sha256"], hotpot.sha256);
  EXPECT_EQ(params["tasks"], (nlohmann::json{"qa_1", "qa_2"}));
}

TEST_F(QaWriter, SameSeedByteIdenticalOtherSeedDifferent) {
  auto o = options(dir / "a", 7);
  o.lengths = {1024};
  o.count = 3;
  write_ruler_data(o);
  o.out_dir = (dir / "b").string();
  write_ruler_data(o);
  o.out_dir = (dir / "c").string();
  o.seed = 8;
  write_ruler_data(o);
  for (const char* name : {"qa_1_1024.jsonl", "qa_2_1024.jsonl"}) {
    const std::string a = read(dir / "a" / "data" / name);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, read(dir / "b" / "data" / name)) << name;
    EXPECT_NE(a, read(dir / "c" / "data" / name)) << name;
  }
  EXPECT_EQ(read(dir / "a" / "ruler_generation.json"), read(dir / "b" / "ruler_generation.json"));
}

TEST_F(QaWriter, MissingFilesSkipWithANoteAndBadOnesWriteNothing) {
  auto o = options(dir / "skip", 1);
  o.lengths = {1024};
  o.count = 1;
  o.tasks = {"niah_single_1", "qa_1", "qa_2"};
  o.squad_file.clear();
  o.hotpotqa_file.clear();
  const auto result = write_ruler_data(o);
  ASSERT_EQ(result.notes.size(), 2u);
  EXPECT_NE(result.notes[0].find("qa_1: skipped (needs a SQuAD v2 dev file: give --squad FILE)"),
            std::string::npos);
  EXPECT_NE(result.notes[1].find("give --hotpotqa FILE"), std::string::npos) << result.notes[1];

  const fs::path out = dir / "bad";
  const auto expect_error = [&](RulerDataOptions bad, const std::string& fragment) {
    bad.out_dir = out.string();
    try {
      write_ruler_data(bad);
      ADD_FAILURE() << "no error for " << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(out)) << fragment;
  };
  o = options(out, 1);
  o.lengths = {1024};
  o.count = 9 * 10;
  expect_error(o, "--count: 90 records of qa_2 need as many questions; " + hotpot_file + " has 9");
  o.count = 2;
  o.tasks = {"qa_1"};
  o.squad_file = dir.write("small.json", test::squad_fixture(1, 3).dump());
  expect_error(o, "with all 3 documents of " + o.squad_file);
  o.squad_file = dir.write("broken.json", "{\"data\": [");
  expect_error(o, o.squad_file + ": not valid JSON");
  o.tasks = {"qa_1"};
  o.lengths = {100};
  o.squad_file = squad_file;
  expect_error(o, "--lengths: 100 tokens is below the size of qa_1 itself");
}

}  // namespace
}  // namespace kvs::ruler
