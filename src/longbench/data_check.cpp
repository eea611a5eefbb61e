#include "longbench/data_check.h"

#include <filesystem>
#include <unordered_set>

#include "core/error.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "longbench/prompt.h"
#include "longbench/split.h"

namespace kvs::longbench {

namespace {

void check_unique_ids(const std::vector<Record>& records, const std::string& path) {
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!seen.insert(records[i].id).second)
      throw error_at(path + ":" + std::to_string(i + 1), "duplicate _id '" + records[i].id + "'");
  }
}

}  // namespace

std::vector<DatasetSummary> check_longbench_dir(const std::string& longbench_dir,
                                                uint64_t split_seed) {
  if (!std::filesystem::is_directory(longbench_dir))
    throw error_at(longbench_dir, "not a directory");
  const Config config = load_config(longbench_dir);
  std::vector<DatasetSummary> summaries;
  for (const auto& info : english_datasets()) {
    const std::string path = dataset_path(longbench_dir, info.name);
    const auto records = load_records(path);
    if (records.size() != info.official_count)
      throw error_at(path, std::to_string(records.size()) + " records, the official file has " +
                               std::to_string(info.official_count));
    check_unique_ids(records, path);
    for (size_t i = 0; i < records.size(); ++i) {
      if (info.metric == Metric::Classification && !records[i].all_classes)
        throw error_at(path + ":" + std::to_string(i + 1),
                       "all_classes is null but " + info.name + " is scored by classification");
    }
    fill_prompt(config, info.name, records.front());  // the template fills from a record

    DatasetSummary s;
    s.dataset = info.name;
    s.examples = records.size();
    double words = 0;
    for (const auto& r : records) words += static_cast<double>(r.length);
    s.mean_words = words / static_cast<double>(records.size());
    const Split split = dataset_split(info.name, records.size(), split_seed);
    s.dev = split.dev.size();
    s.test = split.test.size();
    s.max_new_tokens = config.max_new_tokens_for(info.name);
    const std::string e_path = dataset_path(longbench_dir, info.name, /*e=*/true);
    if (info.has_e && std::filesystem::exists(e_path)) {
      const auto e_records = load_records(e_path);
      check_unique_ids(e_records, e_path);
      s.e_examples = e_records.size();
    }
    summaries.push_back(s);
  }
  return summaries;
}

}  // namespace kvs::longbench
