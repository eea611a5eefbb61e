// `kvsearch bench runner`: prefill and decode speed of a checkpoint next to this machine's measured
// sgemm peak and memory bandwidth, in one run.
#pragma once

#include <cstdint>
#include <string>

#include "model/runtime.h"

namespace kvs::model {

struct RunnerBenchOptions {
  std::string model_dir;
  int64_t prompt_tokens = 2048;
  int64_t new_tokens = 32;
  int repeats = 3;  // best of N for each timed quantity
  LoadOptions load;
};

struct RunnerBenchResult {
  std::string device, dtype, torch_version;
  int threads = 0;
  int64_t prompt_tokens = 0, new_tokens = 0, parameters = 0;
  double prefill_seconds = 0, prefill_tokens_per_s = 0, prefill_gflops = 0;
  double sgemm_peak_gflops = 0, prefill_sgemm_fraction = 0;
  double decode_seconds_per_token = 0, decode_tokens_per_s = 0;
  double decode_bytes = 0, decode_gbps = 0;
  double memory_bandwidth_gbps = 0, decode_bandwidth_fraction = 0;
  int64_t prefill_peak_extra_bytes = 0;  // resident memory the prefill added at its peak (CPU)
  int64_t peak_rss_bytes = 0;
};

RunnerBenchResult bench_runner(const RunnerBenchOptions& options);

std::string runner_bench_json(const RunnerBenchResult& r);
std::string runner_bench_table(const RunnerBenchResult& r);

}  // namespace kvs::model
