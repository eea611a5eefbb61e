// `kvsearch bench runner`: prefill and decode speed of a checkpoint at several prompt lengths,
// next to this machine's sgemm rate and read bandwidth, in one run. Every repeat probes the
// machine right before its own prefill and decode, so a repeat's fractions compare work and
// baseline under the same load; each figure is the median over the repeats with its spread.
// Also the load time next to the checkpoint's size, and each prefill's peak memory next to a
// stated bound (the full KV cache plus O(n) activations: no n x n attention matrix fits in it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_probes.h"
#include "model/runtime.h"

namespace kvs::bench {

struct RunnerBenchOptions {
  std::string model_dir;
  std::vector<int64_t> prompt_tokens = {2048};
  int64_t new_tokens = 32;
  int repeats = 3;
  model::LoadOptions load;
};

// The prompt of a given length the bench runs: BOS, then ids spread over the vocabulary
// (i * 7919 + 13 mod vocab). tools/bench_runner_vs_hf.py builds the same list.
std::vector<int32_t> runner_bench_prompt(int64_t tokens, int64_t vocab_size, int64_t bos_id);

struct RunnerLengthResult {
  int64_t prompt_tokens = 0;
  double prefill_gflop = 0;  // matrix products of one prefill, attention included
  Spread prefill_seconds, prefill_tokens_per_s, prefill_sgemm_fraction;
  Spread decode_ms_per_token, decode_bandwidth_fraction;
  double decode_bytes = 0;               // read by one decode step: weights + the KV cache so far
  int64_t prefill_peak_extra_bytes = 0;  // resident memory the prefill added at its peak (CPU)
  int64_t prefill_peak_heap_bytes =
      0;  // heap it held at its peak beyond what was held; -1: unknown
  int64_t prefill_memory_bound_bytes = 0;
  int64_t attention_matrix_bytes = 0;  // what one layer's n x n fp32 scores would take
};

struct RunnerBenchResult {
  std::string device, dtype, torch_version;
  int threads = 0, repeats = 0;
  int64_t new_tokens = 0, parameters = 0;
  double load_seconds = 0;
  int64_t checkpoint_bytes = 0;              // the .safetensors files
  int64_t decode_weight_bytes = 0;           // the weights one decode step reads (model/weights.h)
  bool stored_blocks = false;                // decode streams a GGUF file's quantized blocks
  Spread sgemm_gflops, read_bandwidth_gbps;  // every probe of the run
  std::vector<RunnerLengthResult> lengths;
  int64_t peak_rss_bytes = 0;
};

RunnerBenchResult bench_runner(const RunnerBenchOptions& options);
// Several checkpoints in one run (options.model_dir is not read): all loaded first, then per
// prompt length and repeat each checkpoint in turn, so that they meet the same load. The results
// in the order of `models`.
std::vector<RunnerBenchResult> bench_runners(const std::vector<std::string>& models,
                                             const RunnerBenchOptions& options);

std::string runner_bench_json(const RunnerBenchResult& r);
std::string runner_bench_table(const RunnerBenchResult& r);

// Checkpoints of one run (`bench runner --beside`, bench_runners): each one's prefill seconds and
// decode ms per token as a ratio of the first's, per prompt length, with their shares of the
// machine (the sgemm and bandwidth fractions) beside them. A line per checkpoint and length.
struct NamedRunnerResult {
  std::string model;
  RunnerBenchResult result;
};
std::string runner_bench_comparison(const std::vector<NamedRunnerResult>& runs);

}  // namespace kvs::bench
