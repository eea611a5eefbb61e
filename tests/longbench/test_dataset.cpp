#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/fixtures.h"
#include "common/scratch_dir.h"
#include "core/error.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "longbench/evaluate.h"
#include "longbench/scorer.h"

namespace {

using namespace kvs::longbench;
using kvs::test::ScratchDir;

const char* kRecord =
    R"({"input": "Q?", "context": "Some text.", "answers": ["A"], "length": 12, )"
    R"("dataset": "hotpotqa", "language": "en", "all_classes": null, "_id": "id1"})";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kvs::Error& e) {
    return e.what();
  }
  return "";
}

std::string with(const std::string& from, const std::string& to) {
  std::string s = kRecord;
  s.replace(s.find(from), from.size(), to);
  return s;
}

TEST(Dataset, TheSixteenEnglishDatasets) {
  const auto& all = english_datasets();
  ASSERT_EQ(all.size(), 16u);
  EXPECT_EQ(all.front().name, "narrativeqa");
  EXPECT_EQ(all.back().name, "repobench-p");
  size_t with_e = 0;
  for (const auto& d : all) with_e += d.has_e;
  EXPECT_EQ(with_e, 13u);
  EXPECT_EQ(dataset_info("lcc").dev_size, 250u);
  EXPECT_EQ(dataset_info("multifieldqa_en").official_count, 150u);
  EXPECT_EQ(dataset_info("passage_retrieval_en").metric, Metric::Retrieval);
  EXPECT_NE(error_of([] { dataset_info("lsht"); }).find("unknown LongBench dataset 'lsht'"),
            std::string::npos);
}

TEST(Dataset, LoadsAndValidatesRecords) {
  ScratchDir tmp;
  const std::string good = tmp.write("data/hotpotqa.jsonl", std::string(kRecord) + "\n" + kRecord + "\n");
  const auto records = load_dataset(tmp.path(), "hotpotqa");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].input, "Q?");
  EXPECT_EQ(records[0].answers, std::vector<std::string>{"A"});
  EXPECT_EQ(records[0].length, 12);
  EXPECT_FALSE(records[0].all_classes.has_value());
  EXPECT_EQ(records[1].id, "id1");

  const auto bad = [&](const std::string& second_line) {
    const std::string path = tmp.write("bad.jsonl", std::string(kRecord) + "\n" + second_line + "\n");
    return error_of([&] { load_records(path); });
  };
  const std::string at = (tmp / "bad.jsonl").string() + ":2: ";
  EXPECT_EQ(bad("{\"input\": ").rfind(at + "malformed JSON", 0), 0u) << bad("{\"input\": ");
  EXPECT_EQ(bad(with("\"answers\": [\"A\"], ", "")), at + "missing field 'answers'");
  EXPECT_EQ(bad(with("\"length\": 12", "\"length\": \"12\"")),
            at + "field 'length' must be an integer (got string)");
  EXPECT_EQ(bad(with("[\"A\"]", "[1]")), at + "field 'answers' must be a list of strings (got number)");
  EXPECT_EQ(bad(with("[\"A\"]", "[]")), at + "field 'answers' is an empty list");
  EXPECT_EQ(bad("[1, 2]"), at + "expected a JSON object, got array");
  EXPECT_EQ(bad(""), at + "empty line (expected one JSON object per line)");
  EXPECT_EQ(bad(with("null", "[\"x\", null]")),
            at + "field 'all_classes' must be a list of strings (got null)");
  EXPECT_NE(error_of([&] { load_dataset(tmp.path(), "qasper"); }).find("file not found"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              load_dataset(tmp.path(), "narrativeqa", true);
            }).find("LongBench-E has no dataset 'narrativeqa'"),
            std::string::npos);
}

TEST(Dataset, PredictionLines) {
  ScratchDir tmp;
  const std::string path = tmp.write(
      "p.jsonl", R"({"pred": "x", "answers": ["y"], "all_classes": ["a", "b"], "length": 5})"
                 "\n"
                 R"({"pred": "x", "answers": ["y"], "all_classes": null})"
                 "\n");
  const auto lines = load_predictions(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(*lines[0].length, 5);
  EXPECT_FALSE(lines[1].length.has_value());
  EXPECT_NE(error_of([&] { evaluate_file(path, "hotpotqa", true); })
                .find(path + ":2: missing field 'length'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { evaluate_file(path, "trec", false); }).find("all_classes is null"),
            std::string::npos);
  EXPECT_EQ(evaluate_file(path, "hotpotqa", false).score, 0.0);
}

TEST(Config, OfficialFilesFromTheFixtures) {
  const Config config = load_config(kvs::test::fixtures_dir() + "/longbench");
  EXPECT_EQ(config.max_new_tokens_for("narrativeqa"), 128);
  EXPECT_EQ(config.max_new_tokens_for("multifieldqa_en"), 64);
  EXPECT_EQ(config.max_new_tokens_for("passage_retrieval_en"), 32);
  EXPECT_EQ(config.max_new_tokens_for("multi_news"), 512);
  EXPECT_NE(config.prompt_template("hotpotqa").find("{context}"), std::string::npos);
}

TEST(Config, MissingOrIncompleteFilesAreErrors) {
  ScratchDir tmp;
  EXPECT_NE(
      error_of([&] { load_config(tmp.path()); }).find("dataset2prompt.json: config file not found"),
      std::string::npos);
  std::string prompts = "{", maxlen = "{";
  for (const auto& d : english_datasets()) {
    if (d.name == "lcc") continue;
    prompts += "\"" + d.name + "\": \"{context}\",";
    maxlen += "\"" + d.name + "\": 32,";
  }
  prompts += "\"lcc\": \"{context}\"}";
  maxlen.back() = '}';
  tmp.write("config/dataset2prompt.json", prompts);
  EXPECT_NE(
      error_of([&] { load_config(tmp.path()); }).find("dataset2maxlen.json: config file not found"),
      std::string::npos);
  tmp.write("config/dataset2maxlen.json", maxlen);
  EXPECT_NE(error_of([&] { load_config(tmp.path()); }).find("no max_new_tokens for 'lcc'"),
            std::string::npos);
  tmp.write("config/dataset2maxlen.json", maxlen.substr(0, maxlen.size() - 1) + ", \"lcc\": \"64\"}");
  EXPECT_NE(error_of([&] {
              load_config(tmp.path());
            }).find("max_new_tokens of 'lcc' must be a positive integer"),
            std::string::npos);
}

TEST(Config, ExtraDatasetsAreDeclaredWithTheirMetric) {
  ScratchDir tmp;
  tmp.write("config/dataset2prompt.json", R"({"synthetic_lookup": "{context}\n{input}"})");
  tmp.write("config/dataset2maxlen.json", R"({"synthetic_lookup": 8})");
  // Without dataset2metric.json this is an incomplete official release.
  EXPECT_NE(error_of([&] { load_config(tmp.path()); }).find("no prompt template for 'narrativeqa'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { dataset_info("synthetic_lookup"); }).find("unknown LongBench dataset"),
            std::string::npos);
  tmp.write("config/dataset2metric.json", R"({"synthetic_lookup": "retrieval_score"})");
  const Config config = load_config(tmp.path());
  EXPECT_EQ(config.max_new_tokens_for("synthetic_lookup"), 8);
  const DatasetInfo& info = dataset_info("synthetic_lookup");
  EXPECT_EQ(info.metric, Metric::Retrieval);
  EXPECT_EQ(info.dev_size, 100u);
  EXPECT_FALSE(info.first_line_only);

  tmp.write("config/dataset2metric.json", R"({"synthetic_lookup": "qa_f1_score"})");
  EXPECT_NE(
      error_of([&] { load_config(tmp.path()); }).find("already registered with retrieval_score"),
      std::string::npos);
  tmp.write("config/dataset2metric.json", R"({"hotpotqa": "qa_f1_score"})");
  EXPECT_NE(error_of([&] { load_config(tmp.path()); }).find("cannot be redefined"),
            std::string::npos);
  tmp.write("config/dataset2metric.json", R"({"synthetic_lookup": "retrieval_score"})");
  tmp.write("config/dataset2chat_template.json", R"({"synthetic_lookup": "smollm2"})");
  EXPECT_EQ(load_config(tmp.path()).declared_chat_template("synthetic_lookup"),
            kvs::tokenizer::ChatTemplate::SmolLM2);
  EXPECT_FALSE(load_config(tmp.path()).declared_chat_template("hotpotqa"));
  tmp.write("config/dataset2chat_template.json", R"({"synthetic_lookup": "vicuna"})");
  EXPECT_NE(error_of([&] { load_config(tmp.path()); }).find("unknown chat template 'vicuna'"),
            std::string::npos);
  std::filesystem::remove(tmp / "config" / "dataset2chat_template.json");
  tmp.write("config/dataset2metric.json", R"({"ruler_lookup": "string_match_all"})");
  tmp.write("config/dataset2prompt.json", R"({"ruler_lookup": "{context}{input}"})");
  tmp.write("config/dataset2maxlen.json", R"({"ruler_lookup": 128})");
  load_config(tmp.path());
  EXPECT_EQ(dataset_info("ruler_lookup").metric, Metric::StringMatchAll);
  tmp.write("config/dataset2metric.json", R"({"other": "bleu"})");
  const std::string error = error_of([&] { load_config(tmp.path()); });
  EXPECT_NE(error.find("dataset2metric.json"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown metric 'bleu'"), std::string::npos) << error;
}

TEST(Config, TextDatasetsNeedTheirPromptTokens) {
  ScratchDir tmp;
  tmp.write("config/dataset2prompt.json",
            R"({"books_perplexity": "{context}", "lookup_q": "{context}"})");
  tmp.write("config/dataset2maxlen.json", R"({"books_perplexity": 255, "lookup_q": 8})");
  tmp.write("config/dataset2metric.json",
            R"({"books_perplexity": "perplexity", "lookup_q": "retrieval_score"})");
  std::string error = error_of([&] { load_config(tmp.path()); });
  EXPECT_NE(
      error.find(
          "dataset2prompt_tokens.json: no prompt tokens for the text dataset 'books_perplexity'"),
      std::string::npos)
      << error;
  tmp.write("config/dataset2prompt_tokens.json", R"({"books_perplexity": 0})");
  error = error_of([&] { load_config(tmp.path()); });
  EXPECT_NE(error.find("prompt tokens of 'books_perplexity' must be a positive integer"),
            std::string::npos)
      << error;
  tmp.write("config/dataset2prompt_tokens.json", R"({"books_perplexity": 1, "lookup_q": 4})");
  error = error_of([&] { load_config(tmp.path()); });
  EXPECT_NE(error.find("'lookup_q' is not a text dataset of dataset2metric.json"),
            std::string::npos)
      << error;
  tmp.write("config/dataset2prompt_tokens.json", R"({"books_perplexity": 1})");
  const Config config = load_config(tmp.path());
  EXPECT_EQ(config.prompt_tokens_for("books_perplexity"), 1);
  EXPECT_EQ(config.max_new_tokens_for("books_perplexity"), 255);
  EXPECT_TRUE(is_text_metric(dataset_info("books_perplexity").metric));
  EXPECT_FALSE(is_text_metric(dataset_info("lookup_q").metric));
  EXPECT_NE(error_of([&] { config.prompt_tokens_for("lookup_q"); }).find("no prompt tokens"),
            std::string::npos);
  // A text dataset is measured by the evaluator: the scorer refuses it in one line.
  error = error_of([&] { score_example("books_perplexity", "x", {"y"}, {}, ScoreVariant::Raw); });
  EXPECT_NE(error.find("perplexity: a text dataset is measured by the evaluator"),
            std::string::npos)
      << error;
}

}  // namespace
