// Per-layer budgets: how many prompt tokens each layer selects on top of the W window tokens,
// which are always kept. Uniform is SnapKV's (B - W per layer); Pyramid is PyramidKV's linear
// schedule, reproduced with its floor divisions, so its total exceeds the uniform one
// (docs/reference.md §2); `redistribute` instead makes the total equal the uniform total.
// Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::evict {

enum class Schedule { Uniform, Pyramid };

const char* schedule_name(Schedule schedule);  // "uniform" | "pyramid"
Schedule parse_schedule(const std::string& name, const std::string& where);

struct BudgetSpec {
  Schedule schedule = Schedule::Uniform;
  int64_t budget = 64;        // B: entries kept per head per layer, window included
  int64_t window = 8;         // W: the trailing prompt tokens that observe, always kept
  int64_t beta = 20;          // PyramidKV: the smallest layer selects (B - W) / beta
  bool redistribute = false;  // pyramid only: same shape, total equal to L * (B - W)
};

struct LayerBudgets {
  // false: the prompt is shorter than the budget and every layer keeps all of it.
  bool compress = false;
  // Per layer, when compressing: tokens selected from [0, n - W); the window comes on top.
  std::vector<int64_t> selected;
};

// Throws when the spec cannot describe a budget (B <= W, W < 1, beta < 1).
void validate_budget(const BudgetSpec& spec, const std::string& where);

LayerBudgets layer_budgets(const BudgetSpec& spec, int64_t prompt_length, int64_t num_layers);

}  // namespace kvs::evict
