#include "evict/layer_selection.h"

#include <ATen/ATen.h>

#include <optional>

#include "core/error.h"
#include "core/strfmt.h"
#include "evict/greedy_select.h"
#include "evict/method.h"
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

at::Tensor method_scores(const Policy& policy, const at::Tensor& queries, const at::Tensor& keys,
                         const at::Tensor& values, int64_t layer, int64_t num_layers) {
  // The policy's own last rows of the window given.
  const int64_t window = std::min(policy.observation_window(), queries.size(1));
  const at::Tensor window_queries = queries.narrow(1, queries.size(1) - window, window);
  const Method& method = find_method(policy.method, "policy " + policy.name + ".method");
  const uint32_t needs = method.info().needs;
  if ((needs & kNeedsValues) && !values.defined())
    throw error_at("policy " + policy.name,
                   policy.method + " needs the values, which were not given");
  if ((needs & kNeedsLastQuery) && window_queries.size(1) < 1)
    throw error_at("policy " + policy.name,
                   policy.method + " needs the last query row, none was given");
  const at::Tensor last_query = (needs & kNeedsLastQuery)
                                    ? window_queries.select(1, window_queries.size(1) - 1)
                                    : at::Tensor();
  const LayerView view{keys, values, last_query, window_queries, layer, num_layers};
  return method.scores(view, policy.params).to(at::kFloat).contiguous();
}

namespace {

// A scoring method's kept entries: the B best of each KV head's scores (select_topk's tie rule:
// the lower position first), or every position where the prompt is no longer than B.
at::Tensor select_scored(const Policy& policy, const at::Tensor& window_queries,
                         const at::Tensor& keys, const at::Tensor& values, int64_t layer,
                         int64_t num_layers) {
  const int64_t kv_heads = keys.size(0), n = keys.size(1);
  if (n <= policy.budget.budget) {
    return at::arange(n, keys.options().dtype(at::kLong))
        .unsqueeze(0)
        .expand({kv_heads, n})
        .contiguous();
  }
  return select_topk(method_scores(policy, window_queries, keys, values, layer, num_layers),
                     policy.budget.budget);
}

}  // namespace

std::vector<at::Tensor> select_layer(const at::Tensor& window_queries, const at::Tensor& keys,
                                     const std::vector<Policy>& policies, int64_t layer,
                                     int64_t num_layers) {
  return select_layer(window_queries, keys, at::Tensor(), policies, layer, num_layers);
}

std::vector<at::Tensor> select_layer(const at::Tensor& window_queries, const at::Tensor& keys,
                                     const at::Tensor& values, const std::vector<Policy>& policies,
                                     int64_t layer, int64_t num_layers) {
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
    const int64_t window = policy.observation_window();
    if (window_queries.size(1) < window) {
      throw error_at(
          "window_queries",
          strfmt("has %lld window rows, policy %zu (%s) has window %lld",
                 (long long)window_queries.size(1), p, policy.name.c_str(), (long long)window));
    }
    // The policy's own last rows of the window the prefill exposed.
    const at::Tensor rows = window_queries.narrow(1, window_queries.size(1) - window, window);
    if (policy.is_scoring()) {
      kept.push_back(select_scored(policy, window_queries, keys, values, layer, num_layers));
      continue;
    }
    const int64_t cache_rows = cache_heads(policy, heads, kv_heads);
    const LayerBudgets budgets = layer_budgets(policy.budget, n, num_layers);
    if (!budgets.compress) {
      kept.push_back(at::arange(n, keys.options().dtype(at::kLong))
                         .unsqueeze(0)
                         .expand({cache_rows, n})
                         .contiguous());
      continue;
    }
    // The statistics are shared by the policies of one window; a batch mixing windows computes
    // them for the first and refuses the others (one cache layout per observer).
    if (!stats) stats = compute_window_stats(rows, keys);
    if (stats->window != window) {
      throw error_at(strfmt("policy %zu (%s)", p, policy.name.c_str()),
                     "its window differs from the batch's first window-statistics policy");
    }
    const at::Tensor selected = select_tokens(
        *stats, keys, policy, budgets.selected[static_cast<size_t>(layer)], layer, num_layers);
    kept.push_back(append_window(selected, n, window));
  }
  return kept;
}

}  // namespace kvs::evict
