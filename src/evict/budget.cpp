#include "evict/budget.h"

#include "core/enum_names.h"
#include "core/error.h"
#include "core/strfmt.h"

namespace kvs::evict {

namespace {

const EnumName<Schedule> kSchedules[] = {{Schedule::Uniform, "uniform"}, {Schedule::Pyramid, "pyramid"}};

}  // namespace

const char* schedule_name(Schedule schedule) { return enum_name(schedule, kSchedules); }

Schedule parse_schedule(const std::string& name, const std::string& where) {
  return parse_enum(name, where, "schedule", kSchedules);
}

void validate_budget(const BudgetSpec& spec, const std::string& where) {
  if (spec.window < 1)
    throw error_at(where + ".window", strfmt("must be >= 1, got %lld", (long long)spec.window));
  if (spec.budget < spec.window) {  // equal: the window alone is kept
    throw error_at(where + ".budget", strfmt("must hold the window (%lld), got %lld",
                                             (long long)spec.window, (long long)spec.budget));
  }
  if (spec.beta < 1)
    throw error_at(where + ".beta", strfmt("must be >= 1, got %lld", (long long)spec.beta));
}

namespace {

// PyramidKV's arithmetic, floor divisions included (docs/reference.md §2).
std::vector<int64_t> pyramid(const BudgetSpec& spec, int64_t prompt_length, int64_t num_layers) {
  const int64_t per_layer = spec.budget - spec.window;
  const int64_t scorable = prompt_length - spec.window;
  int64_t min_sel = per_layer / spec.beta;
  int64_t max_sel = 2 * per_layer - min_sel;
  if (max_sel >= scorable) {
    max_sel = scorable;
    min_sel = 2 * per_layer - max_sel;
  }
  std::vector<int64_t> selected(num_layers);
  if (!spec.redistribute) {
    const int64_t step = (max_sel - min_sel) / (num_layers - 1);
    for (int64_t l = 0; l < num_layers; ++l) selected[l] = max_sel - l * step;
    return selected;
  }
  // The exact line from max to min, rounded down, then the tokens still missing from the uniform
  // total handed out one per layer from the shallowest (skipping layers that already select all).
  const int64_t span = max_sel - min_sel;
  int64_t total = 0;
  for (int64_t l = 0; l < num_layers; ++l) {
    selected[l] = max_sel - (l * span + num_layers - 2) / (num_layers - 1);
    total += selected[l];
  }
  int64_t missing = num_layers * per_layer - total;
  while (missing > 0) {
    for (int64_t l = 0; l < num_layers && missing > 0; ++l) {
      if (selected[l] < scorable) {
        ++selected[l];
        --missing;
      }
    }
  }
  return selected;
}

}  // namespace

LayerBudgets layer_budgets(const BudgetSpec& spec, int64_t prompt_length, int64_t num_layers) {
  validate_budget(spec, "budget");
  if (num_layers < 1)
    throw Error(strfmt("layer budgets: num_layers must be >= 1, got %lld", (long long)num_layers));
  LayerBudgets out;
  if (prompt_length < spec.budget) return out;  // no compression
  out.compress = true;
  const int64_t per_layer = spec.budget - spec.window;
  // PyramidKV falls back to the uniform budget on short prompts; one layer has no slope.
  if (spec.schedule == Schedule::Uniform || prompt_length < 2 * per_layer || num_layers == 1) {
    out.selected.assign(num_layers, per_layer);
  } else {
    out.selected = pyramid(spec, prompt_length, num_layers);
  }
  return out;
}

}  // namespace kvs::evict
