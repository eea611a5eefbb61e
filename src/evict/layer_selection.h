// Which prompt positions each policy keeps on one layer: the orchestrator of the policies' methods
// (method.h). It hands each method the layer's tensors as a LayerView, shares the work policies
// have in common (the float32 tensors, values computed once per layer, a budget-free method's
// scores across budgets), and runs the policies side by side. This is the whole eviction decision
// on plain tensors; the compressed cache and `kvsearch select` both call it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "evict/method.h"
#include "evict/policy.h"
#include "model/prefill_observer.h"

namespace kvs::evict {

// Per policy: [cache_heads, kept] int64 on the keys' device, ascending (a window-statistics
// method's W window positions last). A prompt shorter than the budget keeps every position.
// A ragged method (MethodInfo::ragged, e.g. adakv) keeps different counts per head: its rows are
// left-padded with kRaggedPad (-1) to the longest head's count (kept_counts gives the counts). The
// window statistics are computed once, and only when some policy compresses with them.
// layer.window_queries [heads, W, head_dim]: the last W prompt queries, at least every policy's
// observation_window() (each reads its own last rows); keys and values [kv_heads, n, head_dim];
// the optional tensors (values, column sums, pre-RoPE queries, output projection) must be given
// where some policy's method needs them (policy_needs) and may be undefined otherwise.
std::vector<at::Tensor> select_layer(const model::PrefillLayer& layer,
                                     const std::vector<Policy>& policies, int64_t num_layers);

// A policy whose budgets move between layers (MethodInfo::layer_budgets, e.g. cake) cannot decide
// a layer alone. select_layer keeps its candidates instead: each KV head's layer_budget_cap() best
// scores, ascending (a prompt not longer than the budget: every position), what any allocation
// could keep; it states their scores and the layer's preference here. finish_layer_budgets then
// picks every layer's kept set once all layers are seen.
struct LayerCandidates {
  at::Tensor positions;  // [kv_heads, c] int64, ascending: what select_layer gave for the policy
  at::Tensor scores;     // [kv_heads, c] float32: the method's scores at those positions
  double preference = 0;
  int64_t prompt_length = 0;  // n
};
// The same, filling candidates[p] for each layer-budget policy p (the vector is resized to the
// policies; the others' entries stay empty). The overload above refuses such policies.
std::vector<at::Tensor> select_layer(const model::PrefillLayer& layer,
                                     const std::vector<Policy>& policies, int64_t num_layers,
                                     std::vector<LayerCandidates>& candidates);

// A layer-budget policy's decision from every layer's candidates (in layer order).
struct LayerBudgetChoice {
  std::vector<int64_t> budgets;    // per layer: the entries each KV head keeps
  std::vector<at::Tensor> chosen;  // per layer: [kv_heads, budget] indices into the candidates
};
LayerBudgetChoice finish_layer_budgets(const Policy& policy,
                                       const std::vector<LayerCandidates>& layers);
// The same from the window queries, keys and values alone.
std::vector<at::Tensor> select_layer(const at::Tensor& window_queries, const at::Tensor& keys,
                                     const at::Tensor& values, const std::vector<Policy>& policies,
                                     int64_t layer, int64_t num_layers);
// The same without values (`kvsearch select` on saved queries and keys).
std::vector<at::Tensor> select_layer(const at::Tensor& window_queries, const at::Tensor& keys,
                                     const std::vector<Policy>& policies, int64_t layer,
                                     int64_t num_layers);

// A scoring method's scores [kv_heads, n] (method.h; +infinity where it always keeps), from its
// own last rows of the window queries (observation_window()), for `kvsearch select --dump-scores`.
at::Tensor method_scores(const Policy& policy, const model::PrefillLayer& layer,
                         int64_t num_layers);

// Per row of a kept-positions tensor, the positions it keeps (its entries >= 0).
std::vector<int64_t> kept_counts(const at::Tensor& kept);

}  // namespace kvs::evict
