// The text eval.py writes to result.json: json.dump(scores, f, ensure_ascii=False, indent=N)
// with repr() floats, {"<dataset>": score} or, for LongBench-E,
// {"<dataset>": {"0-4k": s, "4-8k": s, "8k+": s}}. The official script uses indent=4; no trailing
// newline. Also the per-example scores as {"<dataset>": [s, ...]}.
#pragma once

#include <string>
#include <vector>

#include "longbench/evaluate.h"

namespace kvs::longbench {

std::string result_json(const std::vector<DatasetResult>& results, bool e, int indent = 4);

// {"<dataset>": [per-example scores]} on one line, every float as repr() prints it.
std::string per_example_json(const std::vector<DatasetResult>& results);

}  // namespace kvs::longbench
