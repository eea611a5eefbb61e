#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "demo/longbench_writer.h"
#include "common/scratch_dir.h"
#include "longbench/config.h"
#include "demo/tasks.h"
#include "longbench/dataset.h"
#include "longbench/format.h"
#include "longbench/jsonl.h"

namespace kvs::demo {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}


std::vector<std::string> written_files() {
  std::vector<std::string> files;
  for (const auto& task : demo_tasks()) files.push_back("data/" + task.name + ".jsonl");
  files.push_back("config/dataset2prompt.json");
  files.push_back("config/dataset2maxlen.json");
  files.push_back("config/dataset2metric.json");
  return files;
}

TEST(DemoData, SameSeedWritesIdenticalFiles) {
  const test::ScratchDir da, db, dc;
  const fs::path a = da.path(), b = db.path(), c = dc.path();
  write_demo_longbench({a.string(), 9, 12});
  write_demo_longbench({b.string(), 9, 12});
  write_demo_longbench({c.string(), 10, 12});
  for (const auto& file : written_files()) {
    ASSERT_TRUE(fs::exists(a / file)) << file;
    EXPECT_EQ(read_file(a / file), read_file(b / file)) << file;
  }
  EXPECT_NE(read_file(a / "data/demo_passage_retrieval.jsonl"),
            read_file(c / "data/demo_passage_retrieval.jsonl"));
}

TEST(DemoData, RecordsFollowTheLongBenchSchema) {
  const test::ScratchDir scratch;
  const fs::path dir = scratch.path();
  const auto summaries = write_demo_longbench({dir.string(), 1, 20});
  ASSERT_EQ(summaries.size(), demo_tasks().size());
  const auto prompts = nlohmann::json::parse(read_file(dir / "config/dataset2prompt.json"));
  const auto maxlen = nlohmann::json::parse(read_file(dir / "config/dataset2maxlen.json"));
  const auto metrics = nlohmann::json::parse(read_file(dir / "config/dataset2metric.json"));
  const longbench::Config config = longbench::load_config(dir.string());  // registers the tasks
  for (const auto& task : demo_tasks()) {
    const std::string path = longbench::dataset_path(dir.string(), task.name);
    // The official field order, exactly these fields.
    longbench::for_each_jsonl_object(path, [](const nlohmann::json& object, const std::string&) {
      std::vector<std::string> keys;
      for (const auto& item : object.items()) keys.push_back(item.key());
      std::sort(keys.begin(), keys.end());
      EXPECT_EQ(keys, (std::vector<std::string>{"_id", "all_classes", "answers", "context",
                                                "dataset", "input", "language", "length"}));
    });
    const auto records = longbench::load_records(path);  // the project's own schema check
    ASSERT_EQ(records.size(), 20u);
    const std::string tmpl = prompts.at(task.name).get<std::string>();
    EXPECT_EQ(longbench::template_fields(tmpl, "prompt"), (std::vector<std::string>{"context", "input"}));
    EXPECT_EQ(maxlen.at(task.name).get<int>(), task.max_new_tokens);
    EXPECT_EQ(metrics.at(task.name).get<std::string>(), task.metric);
    EXPECT_EQ(longbench::metric_name(longbench::dataset_info(task.name).metric), task.metric);
    EXPECT_EQ(config.prompt_template(task.name), tmpl);
    std::set<std::string> ids;
    for (const auto& r : records) {
      EXPECT_EQ(r.dataset, task.name);
      EXPECT_EQ(r.language, "en");
      EXPECT_FALSE(r.all_classes.has_value());
      ASSERT_EQ(r.answers.size(), 1u);
      EXPECT_EQ(r.length, word_count(r.context));
      EXPECT_GE(r.length, 500) << "prompts of about 1-2k tokens";
      EXPECT_TRUE(ids.insert(r.id).second) << "unique _id";
      if (task.kind == TaskKind::PassageRetrieval) {
        EXPECT_EQ(r.answers[0].rfind("Paragraph ", 0), 0u);
        const std::string number = r.answers[0].substr(10);
        EXPECT_NE(r.context.find(r.input + " " + number + "."), std::string::npos)
            << "the question is the tail of the answer's paragraph";
      }
    }
  }
}

TEST(DemoData, WordCountSplitsOnWhitespaceLikePython) {
  EXPECT_EQ(word_count(""), 0);
  EXPECT_EQ(word_count("  a b\n\nc\t d "), 4);
}

}  // namespace
}  // namespace kvs::demo
