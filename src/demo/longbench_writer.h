// `kvsearch demo data`: the demo tasks written in the official LongBench layout,
//   <dir>/data/<name>.jsonl   records {input, context, answers, length, dataset, language,
//                             all_classes, _id}, fields in LongBench's order;
//   <dir>/config/dataset2prompt.json, dataset2maxlen.json   the project's own templates.
// Deterministic: the same seed and count write byte-identical files on every platform.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::demo {

struct DemoDataOptions {
  std::string out_dir;
  uint64_t seed = 42;
  int64_t count = 400;  // records per task (LongBench's split takes 100 for dev, the rest is test)
};

struct DemoDataSummary {
  std::string name;
  std::string path;
  int64_t records = 0;
  int64_t min_words = 0;  // context lengths in words (the records' "length")
  int64_t max_words = 0;
};

std::vector<DemoDataSummary> write_demo_longbench(const DemoDataOptions& options);

// The word count LongBench stores as "length": whitespace-separated runs, as str.split().
int64_t word_count(const std::string& text);

}  // namespace kvs::demo
