// `kvsearch bench decode`: eviction while decoding, K decode-time policies on one shared decode
// beside one policy alone and beside the full cache, in the same run, on the same teacher-forced
// tokens (search/decode_time.h): wall time in all and per step, the share of the decode spent in
// compressions, the bytes each run's cache held at most, and each policy's largest cache beside
// its bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/runtime.h"

namespace kvs::bench {

struct DecodeBenchOptions {
  std::string model_dir;
  std::string text_path;  // the prompt and teacher tokens: the text's first tokens
  int64_t prompt_tokens = 1024;
  int64_t new_tokens = 256;  // decoding steps (teacher-forced: every policy decodes them all)
  int64_t interval = 64, target = 256, buffer = 64;  // every policy's schedule
  std::vector<std::string> policy_files;  // the policies; none: every method that can decode
  model::LoadOptions load;
};

struct DecodeBenchRun {
  std::string label;  // "shared (K)", "alone: <policy>", "full cache"
  int64_t rows = 0;
  double prefill_seconds = 0, decode_seconds = 0, compress_seconds = 0;
  double step_ms = 0;  // (decode + compress) per step
  int64_t cache_bytes = 0;  // the most bytes of keys and values its cache held (DecodeTimeResult)
};

struct DecodeBenchResult {
  int64_t prompt_tokens = 0, steps = 0;
  std::vector<std::string> names;       // the K policies
  std::vector<std::string> left_out;    // methods that cannot decode, with the reason
  std::vector<int64_t> largest, bound;  // per policy: the most entries a head held, its bound
  DecodeBenchRun shared, alone, full;
  double shared_over_alone = 0;  // per step (goal: at most 2 at K = 15)
  // Per step, the shared decode over K separate decodes of one policy's cost (K x alone).
  double shared_over_separate = 0;
};

DecodeBenchResult bench_decode(const DecodeBenchOptions& options);
std::string decode_bench_json(const DecodeBenchResult& r);
std::string decode_bench_table(const DecodeBenchResult& r);

}  // namespace kvs::bench
