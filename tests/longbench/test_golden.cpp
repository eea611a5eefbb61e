// Every golden folder under $KVS_FIXTURES_DIR/longbench/golden/: real predictions with the official
// scores. Each dataset score must be reproduced exactly, each per-example score to 1e-9, and the
// result.json text byte for byte.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/fixtures.h"
#include "longbench/evaluate.h"
#include "longbench/result_json.h"

namespace {

namespace fs = std::filesystem;
using namespace kvs::longbench;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> golden_dirs() {
  std::vector<fs::path> dirs;
  const fs::path root = fs::path(kvs::test::fixtures_dir()) / "longbench" / "golden";
  if (!fs::is_directory(root)) return dirs;
  for (const auto& entry : fs::directory_iterator(root))
    if (fs::exists(entry.path() / "result.json")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// Python's json writes NaN, which is not JSON: read it as null.
std::string without_nan(std::string text) {
  for (size_t pos = text.find("NaN"); pos != std::string::npos; pos = text.find("NaN", pos))
    text.replace(pos, 3, "null");
  return text;
}

// The indentation json.dump used: the leading spaces of the second line.
int detect_indent(const std::string& text) {
  const size_t line = text.find('\n');
  if (line == std::string::npos) return 4;
  const size_t first = text.find_first_not_of(' ', line + 1);
  return static_cast<int>(first - line - 1);
}

// json.dump writes NaN for an empty bucket; nlohmann reads no NaN, so the file says null then.
void expect_same(double ours, const nlohmann::ordered_json& expected) {
  if (expected.is_null()) {
    EXPECT_TRUE(std::isnan(ours));
  } else {
    EXPECT_EQ(ours, expected.get<double>());
  }
}

bool is_longbench_e(const nlohmann::ordered_json& result) {
  return !result.empty() && result.begin().value().is_object();
}

TEST(Golden, FoldersExist) {
  EXPECT_FALSE(golden_dirs().empty()) << "no golden folder under KVS_FIXTURES_DIR";
}

TEST(Golden, EveryDatasetScoreAndPerExampleScore) {
  for (const auto& dir : golden_dirs()) {
    const auto expected = nlohmann::ordered_json::parse(without_nan(read_text(dir / "result.json")));
    nlohmann::json per_example;
    const bool has_per_example = fs::exists(dir / "per_example_scores.json");
    if (has_per_example) per_example = nlohmann::json::parse(read_text(dir / "per_example_scores.json"));
    for (const auto& [dataset, score] : expected.items()) {
      SCOPED_TRACE(dir.string() + " " + dataset);
      // A LongBench-E folder (pred_e/) holds {"0-4k": s, "4-8k": s, "8k+": s} per dataset.
      const bool e = score.is_object();
      const auto result = evaluate_file((dir / (dataset + ".jsonl")).string(), dataset, e);
      if (e) {
        expect_same(result.buckets->up_to_4k, score.at("0-4k"));
        expect_same(result.buckets->up_to_8k, score.at("4-8k"));
        expect_same(result.buckets->above_8k, score.at("8k+"));
      } else {
        EXPECT_EQ(result.score, score.get<double>());
      }
      if (!has_per_example) continue;
      const auto& want = per_example.at(dataset);
      ASSERT_EQ(result.per_example.size(), want.size());
      size_t exact = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(result.per_example[i], want[i].get<double>(), 1e-9) << "example " << i;
        exact += result.per_example[i] == want[i].get<double>();
      }
      EXPECT_EQ(exact, want.size()) << "per-example scores not bit-identical";
    }
  }
}

TEST(Golden, ResultJsonTextByteForByte) {
  for (const auto& dir : golden_dirs()) {
    SCOPED_TRACE(dir.string());
    const std::string expected = read_text(dir / "result.json");
    const bool e = is_longbench_e(nlohmann::ordered_json::parse(without_nan(expected)));
    const auto results = evaluate_directory(dir.string(), e);
    EXPECT_EQ(result_json(results, e, detect_indent(expected)) + "\n",
              expected.back() == '\n' ? expected : expected + "\n");
  }
}

}  // namespace
