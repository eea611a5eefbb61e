#include "evict/layer_selection.h"

#include <ATen/ATen.h>

#include <optional>

#include "core/error.h"
#include "core/strfmt.h"
#include "evict/greedy_select.h"
#include "evict/score.h"
#include "evict/tensor_checks.h"
#include "evict/topk_select.h"

namespace kvs::evict {

at::Tensor select_tokens(const WindowStats& stats, const at::Tensor& keys, const Policy& policy,
                         int64_t count, int64_t layer, int64_t num_layers) {
  const at::Tensor scores = base_scores(stats, policy, policy.lambda1_at(layer, num_layers));
  if (policy.kind == SelectorKind::TopK) return select_topk(scores, count);
  return select_greedy(scores, keys, count, policy.lambda2_at(layer, num_layers),
                       policy.candidate_factor);
}

at::Tensor append_window(const at::Tensor& selected, int64_t prompt_length, int64_t window) {
  const at::Tensor tail = at::arange(prompt_length - window, prompt_length, selected.options())
                              .unsqueeze(0)
                              .expand({selected.size(0), window});
  return at::cat({selected, tail}, 1);
}

std::vector<at::Tensor> select_layer(const at::Tensor& window_queries, const at::Tensor& keys,
                                     const std::vector<Policy>& policies, int64_t layer,
                                     int64_t num_layers) {
  check_float_tensor(window_queries, "window_queries", 3, "[heads, W, head_dim]");
  check_float_tensor(keys, "keys", 3, "[kv_heads, n, head_dim]");
  const int64_t heads = window_queries.size(0), kv_heads = keys.size(0), n = keys.size(1);
  if (kv_heads == 0 || heads % kv_heads != 0) {
    throw error_at("window_queries",
                   strfmt("%lld query heads are not a multiple of the keys' %lld KV heads",
                          (long long)heads, (long long)kv_heads));
  }
  if (layer < 0 || layer >= num_layers) {
    throw error_at("layer",
                   strfmt("%lld is outside [0, %lld)", (long long)layer, (long long)num_layers));
  }
  std::optional<WindowStats> stats;
  std::vector<at::Tensor> kept;
  for (size_t p = 0; p < policies.size(); ++p) {
    const Policy& policy = policies[p];
    const int64_t rows = cache_heads(policy, heads, kv_heads);
    const LayerBudgets budgets = layer_budgets(policy.budget, n, num_layers);
    if (!budgets.compress) {
      kept.push_back(at::arange(n, keys.options().dtype(at::kLong))
                         .unsqueeze(0)
                         .expand({rows, n})
                         .contiguous());
      continue;
    }
    if (window_queries.size(1) != policy.budget.window) {
      throw error_at("window_queries",
                     strfmt("has %lld window rows, policy %zu (%s) has window %lld",
                            (long long)window_queries.size(1), p, policy.name.c_str(),
                            (long long)policy.budget.window));
    }
    if (!stats) stats = compute_window_stats(window_queries, keys);
    const at::Tensor selected = select_tokens(
        *stats, keys, policy, budgets.selected[static_cast<size_t>(layer)], layer, num_layers);
    kept.push_back(append_window(selected, n, policy.budget.window));
  }
  return kept;
}

}  // namespace kvs::evict
