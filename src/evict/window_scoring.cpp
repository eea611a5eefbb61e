#include "evict/window_scoring.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strfmt.h"
#include "evict/budget.h"
#include "evict/greedy_select.h"
#include "evict/score.h"
#include "evict/topk_select.h"

namespace kvs::evict {

const WindowStats& shared_window_stats(const LayerView& view) {
  const int64_t window = view.window_queries.size(1);
  return view.shared_as<WindowStats>(strfmt("window statistics, W = %lld", (long long)window), [&] {
    return compute_window_stats(view.window_queries, view.keys);
  });
}

at::Tensor append_window(const at::Tensor& selected, int64_t prompt_length, int64_t window) {
  const at::Tensor tail = at::arange(prompt_length - window, prompt_length, selected.options())
                              .unsqueeze(0)
                              .expand({selected.size(0), window});
  return at::cat({selected, tail}, 1);
}

std::vector<ParamSpec> WindowMethod::declared_params(const std::string& schedule,
                                                     bool dispersion) const {
  const WindowParams& w = window_params();
  std::vector<ParamSpec> params = {w.window.spec,       w.kernel.spec,
                                   w.pooling.spec,      w.granularity.spec,
                                   w.group_reduce.spec, with_default(w.schedule, schedule),
                                   w.beta.spec,         w.redistribute.spec,
                                   w.mean.spec,         with_default(w.dispersion, dispersion),
                                   w.lambda1.spec};
  if (greedy()) {
    params.push_back(w.corr.spec);
    params.push_back(w.lambda2.spec);
    params.push_back(w.candidate_factor.spec);
  }
  return params;
}

at::Tensor WindowMethod::select_tokens(const WindowStats& stats, const at::Tensor& keys,
                                       const Params& params, int64_t count, int64_t layer,
                                       int64_t num_layers) const {
  const at::Tensor scores = base_scores(stats, params, lambda1_at(params, layer, num_layers));
  if (!greedy()) return select_topk(scores, count);
  return select_greedy(scores, keys, count, lambda2_at(params, layer, num_layers),
                       params.get(window_params().candidate_factor));
}

at::Tensor WindowMethod::scores(const LayerView& view, const Params& params) const {
  const WindowStats& stats = shared_window_stats(view);
  const at::Tensor base =
      base_scores(stats, params, lambda1_at(params, view.layer, view.num_layers));
  const at::Tensor window = at::full({base.size(0), stats.window},
                                     std::numeric_limits<float>::infinity(), base.options());
  return at::cat({base, window}, 1);
}

at::Tensor WindowMethod::select(const LayerView& view, const Params& params) const {
  const int64_t n = view.keys.size(1);
  // While decoding, the layers of one compression hold different lengths: a layer schedule is
  // computed at the tokens seen (next_position), the same for every layer, and each layer keeps
  // its share or what it holds. After a prefill next_position is n.
  const int64_t schedule_length = std::max(n, view.next_position);
  const LayerBudgets budgets =
      layer_budgets(window_budget_spec(params, view.budget), schedule_length, view.num_layers);
  const WindowStats& stats = shared_window_stats(view);
  const int64_t count =
      std::min(budgets.selected[static_cast<size_t>(view.layer)], stats.scorable());
  const at::Tensor selected =
      select_tokens(stats, view.keys, params, count, view.layer, view.num_layers);
  return append_window(selected, n, stats.window);
}

at::Tensor WindowMethod::select_counts(const LayerView& view, const Params& params,
                                       const std::vector<int64_t>& counts) const {
  const WindowStats& stats = shared_window_stats(view);
  const at::Tensor base =
      base_scores(stats, params, lambda1_at(params, view.layer, view.num_layers));
  std::vector<at::Tensor> rows;
  for (size_t h = 0; h < counts.size(); ++h) {
    const int64_t count = std::clamp<int64_t>(counts[h] - stats.window, 0, stats.scorable());
    const at::Tensor row = base.narrow(0, int64_t(h), 1).contiguous();
    const at::Tensor chosen = count == 0 ? at::empty({1, 0}, row.options().dtype(at::kLong))
                              : !greedy()
                                  ? select_topk(row, count)
                                  : select_greedy(row, view.keys.narrow(0, int64_t(h), 1), count,
                                                  lambda2_at(params, view.layer, view.num_layers),
                                                  params.get(window_params().candidate_factor));
    rows.push_back(append_window(chosen, stats.prompt_length, stats.window).reshape({-1}));
  }
  return pad_ragged(rows, base.options());
}

void WindowMethod::prepare(const LayerView& view, const Params& params) const {
  if (!keeps_whole(view.keys.size(1), view.budget, view.num_layers, params))
    shared_window_stats(view);
}

int64_t WindowMethod::observation_window(const Params& params) const {
  return params.get(window_params().window);
}

std::optional<int64_t> WindowMethod::statistics_window(const Params& params) const {
  return params.get(window_params().window);
}

int64_t WindowMethod::always_kept(const Params& params) const {
  return params.get(window_params().window);
}

bool WindowMethod::cache_per_query_head(const Params& params) const {
  return params.get(window_params().granularity) == "query_head";
}

bool WindowMethod::keeps_whole(int64_t n, int64_t budget, int64_t num_layers,
                               const Params& params) const {
  return !layer_budgets(window_budget_spec(params, budget), n, num_layers).compress;
}

int64_t WindowMethod::layer_budget(int64_t n, int64_t budget, int64_t layer, int64_t num_layers,
                                   const Params& params) const {
  const BudgetSpec spec = window_budget_spec(params, budget);
  const LayerBudgets budgets = layer_budgets(spec, n, num_layers);
  return budgets.compress ? budgets.selected[static_cast<size_t>(layer)] + spec.window : budget;
}

void WindowMethod::check(int64_t budget, const Params& params, const std::string& where) const {
  const WindowParams& w = window_params();
  validate_budget(window_budget_spec(params, budget), where);
  const int64_t kernel = params.get(w.kernel);
  if (kernel % 2 == 0)
    throw error_at(where + ".kernel", strfmt("must be odd and >= 1, got %lld", (long long)kernel));
  if (!params.get(w.mean) && !params.get(w.dispersion))
    throw error_at(where + ".terms", "mean and dispersion are both off: the score would be 0");
  if (params.get(w.dispersion) && params.get(w.window) < 2)
    throw error_at(where + ".window", "the dispersion term needs at least 2 window queries");
}

nlohmann::json WindowMethod::to_json(const std::string& label, int64_t budget,
                                     const Params& params) const {
  const WindowParams& w = window_params();
  const bool corr = params.has(w.corr) && params.get(w.corr);
  return nlohmann::json{
      {"name", label},
      {"kind", greedy() ? "greedy" : "topk"},
      {"budget", budget},
      {"window", params.get(w.window)},
      {"schedule", params.get(w.schedule)},
      {"beta", params.get(w.beta)},
      {"redistribute", params.get(w.redistribute)},
      {"kernel", params.get(w.kernel)},
      {"pooling", params.get(w.pooling)},
      {"granularity", params.get(w.granularity)},
      {"group_reduce", params.get(w.group_reduce)},
      {"terms",
       {{"mean", params.get(w.mean)}, {"dispersion", params.get(w.dispersion)}, {"corr", corr}}},
      {"lambda1", profile_to_json(params.get(w.lambda1))},
      {"lambda2", profile_to_json(profile_or_zero(params, w.lambda2))},
      {"candidate_factor", params.has(w.candidate_factor)
                               ? params.get(w.candidate_factor)
                               : std::get<int64_t>(w.candidate_factor.spec.fallback)}};
}

}  // namespace kvs::evict
