// Fidelity to the full cache on the model's own long output (`kvsearch fidelity`): the full
// cache's greedy continuation of L tokens, then every policy on one shared decode
// (decode_time.h), twice:
//   - teacher-forced on that continuation: per step the KL divergence KL(full || policy) of the
//     next-token distributions and whether the two argmaxes agree;
//   - free-running (its own greedy choices): the first step whose token differs from the full
//     cache's, and ROUGE-L between the two continuations (the F-measure of their longest common
//     subsequence, over token ids).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evict/policy.h"
#include "model/runtime.h"

namespace kvs::search {

struct FidelityRequest {
  std::string model_dir;
  std::vector<int32_t> prompt_ids;
  int64_t new_tokens = 256;  // L
  int64_t block = 256;       // steps per block of the per-block KL and agreement
  std::vector<evict::Policy> policies;
  model::LoadOptions load;
};

struct PolicyFidelity {
  std::string name;
  double mean_kl = 0;  // over the L teacher-forced steps
  double top1 = 0;     // share of those steps whose argmax equals the full cache's
  std::vector<double> block_kl, block_top1;
  int64_t first_divergence = -1;  // free-running: 1-based step of the first other token; -1: none
  double rouge_l = 0;             // free-running continuation against the full cache's
  int64_t largest_cache = 0;
  int64_t compressions = 0;
};

struct FidelityResult {
  int64_t prompt_tokens = 0, steps = 0;
  std::vector<int32_t> reference;  // the full cache's continuation
  std::vector<PolicyFidelity> policies;
  double seconds = 0;
};

FidelityResult measure_fidelity(const FidelityRequest& request);

// ROUGE-L F of two token sequences: 2 P R / (P + R) with P, R the longest common subsequence's
// share of each (0 when either is empty).
double rouge_l_tokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

}  // namespace kvs::search
