// Shared helpers of the model tests: scratch checkpoints, loading in fp32 on the CPU, and
// comparisons of logit rows.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/scratch_dir.h"
#include "model/presets.h"
#include "model/transformer.h"

namespace kvs::test {

// Writes a random checkpoint (see kvs::model::make_random_model) into dir and returns dir.
std::string make_checkpoint(const std::string& dir, const std::string& preset, uint64_t seed,
                            int64_t sliding_window = 0, const std::string& dtype = "f32",
                            int64_t max_shard_bytes = int64_t{1} << 30);

// Loads in float32 on the CPU (and pins LibTorch to 2 threads: the machine is shared).
kvs::model::Transformer load_f32(const std::string& dir);

// Deterministic prompt ids in [first_id, vocab).
std::vector<int32_t> random_ids(int64_t count, int64_t vocab, uint64_t seed, int64_t first_id = 3);

std::vector<int64_t> widen(const std::vector<int32_t>& ids);

// [rows, vocab] float tensor -> rows.
std::vector<std::vector<float>> to_rows(const at::Tensor& logits);

// Max |a - b| over matching rows; fails the current test when the shapes differ.
double max_abs_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b);
double max_abs_diff(const at::Tensor& a, const at::Tensor& b);

// Gap between the best and second-best logit: a token choice is only meaningful when this is
// well above the numerical tolerance.
double top2_gap(const std::vector<float>& row);

}  // namespace kvs::test
