#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "core/files.h"

namespace kvs {
namespace {

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Files, ReadsWholeFilesAndJsonDocuments) {
  const test::ScratchDir dir;
  const std::string path = dir.file("spec.json");
  const std::string text("{\"a\": [1, 2]}\r\n\0", 16);  // bytes as they are, a NUL included
  std::ofstream(path, std::ios::binary) << text;
  EXPECT_EQ(read_file(path, "the spec"), text);
  std::ofstream(path, std::ios::binary) << "{\"a\": [1, 2]}";
  EXPECT_EQ(read_json_file(path, "the spec").at("a").at(1), 2);
}

TEST(Files, ErrorsNameTheFileAndWhatIsWrong) {
  const test::ScratchDir dir;
  const std::string missing = dir.file("missing.json");
  const std::string e = error_of([&] { read_file(missing, "the spec"); });
  EXPECT_NE(e.find(missing), std::string::npos) << e;
  EXPECT_NE(e.find("cannot open the spec"), std::string::npos) << e;
  const std::string bad = dir.file("bad.json");
  std::ofstream(bad) << "{\"a\": ";
  const std::string j = error_of([&] { read_json_file(bad, "the spec"); });
  EXPECT_NE(j.find(bad), std::string::npos) << j;
  EXPECT_NE(j.find("not valid JSON"), std::string::npos) << j;
  EXPECT_EQ(j.find('\n'), std::string::npos) << j;
}

}  // namespace
}  // namespace kvs
