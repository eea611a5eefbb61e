// `kvsearch bench search`: K policies evaluated one at a time (a prefill each) versus batched on
// one shared prefill per question, in the same run, with a check that their predictions agree.
#pragma once

#include <cstdint>
#include <string>

#include "model/runtime.h"

namespace kvs::bench {

struct SearchBenchOptions {
  std::string model_dir, longbench_dir, dataset;
  int policies = 12;
  int64_t questions = 4;
  int64_t budget = 64;
  int64_t max_new_tokens = 0;  // 0: the dataset's own
  bool methods =
      false;  // one policy per registered method (defaults, --budget) instead of Global's
  model::LoadOptions load;
};

struct SearchBenchResult {
  int policies = 0;
  int64_t questions = 0, mean_prompt_tokens = 0, new_tokens = 0;
  double sequential_seconds = 0, batched_seconds = 0, batched_speedup = 0;
  bool predictions_agree = false;
  int64_t disagreements = 0;  // (policy, question) pairs whose outputs differ
  std::vector<std::string> names;  // the policies, in batch order
  double snapkv_seconds = 0;       // --methods: the snapkv policy alone, every question
  double batched_over_snapkv = 0;  // the batch's time over snapkv's alone (goal <= 1.5)
  // Where the time goes, summed over the questions: prefill (every method's selection included,
  // and the protocols' extensions) and decode, of the batch and of snapkv alone.
  double batched_prefill_seconds = 0, batched_decode_seconds = 0;
  double snapkv_prefill_seconds = 0, snapkv_decode_seconds = 0;
  // Per policy, the mean over questions of the entries kept per cache head and layer, and of the
  // bytes its cache row held for the prompt beside the uniform layout's at the same mean budget.
  std::vector<double> kept_per_head, held_bytes, uniform_bytes;
};

SearchBenchResult bench_search(const SearchBenchOptions& options);
std::string search_bench_json(const SearchBenchResult& r);
std::string search_bench_table(const SearchBenchResult& r);

}  // namespace kvs::bench
