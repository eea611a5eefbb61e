// Validation of a LongBench directory (`kvsearch data check`): both config files, every English
// dataset's data file (schema, official record count, unique _ids, a template that fills), and
// the LongBench-E files that are present.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::longbench {

struct DatasetSummary {
  std::string dataset;
  size_t examples = 0;
  double mean_words = 0;  // mean of the records' `length`
  size_t dev = 0, test = 0;
  size_t e_examples = 0;  // records in <name>_e.jsonl; 0 when absent
  int max_new_tokens = 0;
};

// Throws kvs::Error at the first problem, naming the file (and line, field) at fault.
std::vector<DatasetSummary> check_longbench_dir(const std::string& longbench_dir,
                                                uint64_t split_seed);

}  // namespace kvs::longbench
