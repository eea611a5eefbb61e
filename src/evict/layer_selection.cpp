#include "evict/layer_selection.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"
#include "core/strfmt.h"
#include "cpu/parallel_tasks.h"
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

namespace {

// One layer's selection: the prefill's tensors, the window statistics shared by the policies of
// one window (computed for the first that needs them), and the float32 view scoring methods read.
class LayerSelection {
 public:
  LayerSelection(const model::PrefillLayer& layer, int64_t num_layers)
      : layer_(layer), num_layers_(num_layers) {}

  // The policy's own last rows of the exposed window.
  at::Tensor rows(const Policy& policy, const std::string& where) const {
    const int64_t window = policy.observation_window(), given = layer_.window_queries.size(1);
    if (given < window) {
      throw error_at("window_queries", strfmt("has %lld window rows, %s has window %lld",
                                              (long long)given, where.c_str(), (long long)window));
    }
    return layer_.window_queries.narrow(1, given - window, window);
  }

  const WindowStats& stats(const Policy& policy, const std::string& where) {
    const at::Tensor own = rows(policy, where);
    if (!stats_) stats_ = compute_window_stats(own, layer_.keys);
    // A batch mixing windows computes them for the first and refuses the others.
    if (stats_->window != own.size(1)) {
      throw error_at(where, "its window differs from the batch's first window-statistics policy");
    }
    return *stats_;
  }

  // [cache_heads, n] scores of a policy that has them: a scoring method's, or a top-k
  // window-statistics policy's (its window +infinity).
  at::Tensor scores(const Policy& policy, const std::string& where) {
    if (!policy.is_scoring()) {
      const WindowStats& s = stats(policy, where);
      const at::Tensor base = base_scores(s, policy, policy.lambda1_at(layer_.layer, num_layers_));
      const at::Tensor window = at::full({base.size(0), s.window},
                                         std::numeric_limits<float>::infinity(), base.options());
      return at::cat({base, window}, 1);
    }
    const Method& method = find_method(policy.method, where + ".method");
    const auto compute = [&] {
      return method.scores(layer_view(method, policy, where), policy.params)
          .to(at::kFloat)
          .contiguous();
    };
    if (!method.info().budget_free) return compute();
    nlohmann::json key = policy_to_json(policy);  // the policy but for its budget and label
    key.erase("budget");
    key.erase("name");
    return shared("scores " + key.dump(), compute);
  }

  // A scoring method's kept positions (Method::select): [kv_heads, k], ragged rows -1-padded.
  at::Tensor select(const Policy& policy, const std::string& where) {
    const Method& method = find_method(policy.method, where + ".method");
    if (method.info().budget_free) return select_topk(scores(policy, where), policy.budget.budget);
    return method.select(layer_view(method, policy, where), policy.params);
  }

  // A value of this layer computed once for its policies (LayerView::shared, the scores of
  // budget-free methods): the first task to ask computes it, the others wait and read it.
  at::Tensor shared(const std::string& key, const std::function<at::Tensor()>& compute) {
    SharedValue* entry = nullptr;
    {
      const std::lock_guard<std::mutex> lock(shared_mutex_);
      std::unique_ptr<SharedValue>& slot = shared_[key];
      if (!slot) slot = std::make_unique<SharedValue>();
      entry = slot.get();
    }
    std::call_once(entry->once, [&] { entry->value = compute(); });
    return entry->value;
  }

  // Computes now what the policies would fill in on first use (the window statistics, the float32
  // tensors), so that the policies can then select side by side, reading only.
  void prepare(const Policy& policy, const std::string& where) {
    if (!policy.is_scoring()) {
      if (layer_budgets(policy.budget, layer_.keys.size(1), num_layers_).compress)
        stats(policy, where);
      return;
    }
    float_view(find_method(policy.method, where + ".method").info().needs, where);
    if (policy.base) prepare(*policy.base, where + ".base");
  }

  // A layer-budget method's candidates on this layer (LayerCandidates).
  LayerCandidates candidates(const Policy& policy, const std::string& where) {
    const Method& method = find_method(policy.method, where + ".method");
    const LayerView view = layer_view(method, policy, where);
    const int64_t n = view.keys.size(1);
    LayerCandidates out;
    out.prompt_length = n;
    Method::LayerScores layer = method.layer_scores(view, policy.params);
    out.preference = layer.preference;
    const at::Tensor all = layer.scores.to(at::kFloat).contiguous();
    const int64_t cap = std::clamp<int64_t>(
        method.layer_budget_cap(n, view.budget, num_layers_, policy.params), 1, n);
    out.positions = select_topk(all, cap);
    out.scores = all.gather(1, out.positions).contiguous();
    return out;
  }

 private:
  LayerView layer_view(const Method& method, const Policy& policy, const std::string& where) {
    const uint32_t needs = method.info().needs;
    LayerView view = float_view(needs, where);
    view.window_queries = rows(policy, where);
    view.budget = policy.budget.budget;
    view.shared = [this](const std::string& key, const std::function<at::Tensor()>& compute) {
      return shared("value " + key, compute);
    };
    if (needs & kNeedsLastQuery) {
      if (view.window_queries.size(1) < 1)
        throw error_at(where, policy.method + " needs the last query row, none was given");
      view.last_query = view.window_queries.select(1, view.window_queries.size(1) - 1);
    }
    if (policy.base) {
      const Policy& base = *policy.base;
      view.base = scores(base, where + ".base");
      view.base_select = [this, &base, where](const std::vector<int64_t>& counts) {
        return select_counts(base, counts, where + ".base");
      };
      // An allocating wrapper over a window-statistics base shares out that base's layer budget
      // (its schedule's: pyramid budgets compose with head-wise ones).
      if (method.info().allocates && !base.is_scoring()) {
        const LayerBudgets budgets = layer_budgets(base.budget, layer_.keys.size(1), num_layers_);
        if (budgets.compress)
          view.budget = budgets.selected[static_cast<size_t>(layer_.layer)] + base.budget.window;
      }
    }
    return view;
  }

  // A policy's selection with counts[h] entries for KV head h (its window included): a scoring
  // method's best counts[h] scores, or a window-statistics policy's own selector (top-k or the
  // greedy admission) on each head with counts[h] - W, then its window.
  at::Tensor select_counts(const Policy& policy, const std::vector<int64_t>& counts,
                           const std::string& where) {
    std::vector<at::Tensor> rows;
    if (policy.is_scoring()) {
      const at::Tensor s = scores(policy, where);
      for (size_t h = 0; h < counts.size(); ++h) {
        const int64_t count = std::clamp<int64_t>(counts[h], 0, s.size(1));
        rows.push_back(select_topk(s.narrow(0, int64_t(h), 1), count).reshape({-1}));
      }
      return pad_ragged(rows, s.options());
    }
    const WindowStats& s = stats(policy, where);
    const int64_t layer = layer_.layer;
    const at::Tensor base = base_scores(s, policy, policy.lambda1_at(layer, num_layers_));
    for (size_t h = 0; h < counts.size(); ++h) {
      const int64_t count = std::clamp<int64_t>(counts[h] - s.window, 0, s.scorable());
      const at::Tensor row = base.narrow(0, int64_t(h), 1).contiguous();
      const at::Tensor chosen =
          count == 0 ? at::empty({1, 0}, row.options().dtype(at::kLong))
          : policy.kind == SelectorKind::TopK
              ? select_topk(row, count)
              : select_greedy(row, layer_.keys.narrow(0, int64_t(h), 1), count,
                              policy.lambda2_at(layer, num_layers_), policy.candidate_factor);
      rows.push_back(append_window(chosen, s.prompt_length, s.window).reshape({-1}));
    }
    return pad_ragged(rows, base.options());
  }

  // The prefill's tensors as float32, contiguous, each converted once for all the policies of the
  // layer; refuses a need the caller did not give.
  LayerView float_view(uint32_t needs, const std::string& where) {
    const auto need = [&](uint32_t flag, const at::Tensor& t, at::Tensor& slot, const char* what) {
      if (!(needs & flag)) return at::Tensor();
      if (!t.defined()) throw error_at(where, std::string("needs ") + what + ", not given here");
      return converted(t, slot);
    };
    LayerView view;
    view.keys = converted(layer_.keys, float_.keys);
    view.values = need(kNeedsValues, layer_.values, float_.values, "the values");
    view.column_sums =
        need(kNeedsColumnSums, layer_.column_sums, float_.column_sums, "the attention column sums");
    view.pre_rope_queries = need(kNeedsPreRopeQueries, layer_.pre_rope_queries,
                                 float_.pre_rope_queries, "the queries before RoPE");
    view.rope_inv_freq = need(kNeedsPreRopeQueries, layer_.rope_inv_freq, float_.rope_inv_freq,
                              "RoPE's frequencies");
    view.output_projection = need(kNeedsOutputProjection, layer_.output_projection,
                                  float_.output_projection, "the output projection");
    view.layer = layer_.layer;
    view.num_layers = num_layers_;
    return view;
  }

  static const at::Tensor& converted(const at::Tensor& source, at::Tensor& slot) {
    if (!slot.defined()) slot = source.to(at::kFloat).contiguous();
    return slot;
  }

  struct SharedValue {
    std::once_flag once;
    at::Tensor value;
  };

  const model::PrefillLayer& layer_;
  int64_t num_layers_;
  std::optional<WindowStats> stats_;
  LayerView float_;  // the converted tensors, filled as policies need them
  std::mutex shared_mutex_;
  std::map<std::string, std::unique_ptr<SharedValue>> shared_;
};

at::Tensor every_position(int64_t rows, int64_t n, const at::Tensor& like) {
  return at::arange(n, like.options().dtype(at::kLong)).unsqueeze(0).expand({rows, n}).contiguous();
}

bool moves_between_layers(const Policy& policy) {
  return policy.is_scoring() && find_method(policy.method, "method").info().layer_budgets;
}

void check_layer(const model::PrefillLayer& layer, int64_t num_layers) {
  check_float_tensor(layer.window_queries, "window_queries", 3, "[heads, W, head_dim]");
  check_float_tensor(layer.keys, "keys", 3, "[kv_heads, n, head_dim]");
  const int64_t heads = layer.window_queries.size(0), kv_heads = layer.keys.size(0);
  if (kv_heads == 0 || heads % kv_heads != 0) {
    throw error_at("window_queries",
                   strfmt("%lld query heads are not a multiple of the keys' %lld KV heads",
                          (long long)heads, (long long)kv_heads));
  }
  if (layer.layer < 0 || layer.layer >= num_layers) {
    throw error_at("layer", strfmt("%lld is outside [0, %lld)", (long long)layer.layer,
                                   (long long)num_layers));
  }
}

// One policy's kept positions on the layer (a layer-budget method's candidates go to `candidates`).
at::Tensor select_one(LayerSelection& selection, const model::PrefillLayer& layer,
                      const Policy& policy, const std::string& where, int64_t num_layers,
                      LayerCandidates& candidates) {
  const int64_t heads = layer.window_queries.size(0), kv_heads = layer.keys.size(0),
                n = layer.keys.size(1);
  if (moves_between_layers(policy)) {
    if (n <= policy.budget.budget) {  // kept whole: every layer keeps all, whatever the shares
      candidates.positions = every_position(kv_heads, n, layer.keys);
      candidates.scores = at::zeros({kv_heads, n}, layer.keys.options().dtype(at::kFloat));
      candidates.preference = 1;
      candidates.prompt_length = n;
    } else {
      candidates = selection.candidates(policy, where);
    }
    return candidates.positions.to(layer.keys.device());
  }
  if (policy.is_scoring()) {
    // The method's selection: by default the B best of each KV head's scores (select_topk's
    // tie rule: the lower position first); ragged methods pad their shorter heads with -1.
    return n <= policy.budget.budget ? every_position(kv_heads, n, layer.keys)
                                     : selection.select(policy, where).to(layer.keys.device());
  }
  const int64_t cache_rows = cache_heads(policy, heads, kv_heads);
  const LayerBudgets budgets = layer_budgets(policy.budget, n, num_layers);
  if (!budgets.compress) {
    selection.rows(policy, where);  // still refuses a window the prefill did not expose
    return every_position(cache_rows, n, layer.keys);
  }
  const WindowStats& stats = selection.stats(policy, where);
  const at::Tensor selected =
      select_tokens(stats, layer.keys, policy, budgets.selected[static_cast<size_t>(layer.layer)],
                    layer.layer, num_layers);
  return append_window(selected, n, stats.window);
}

}  // namespace

at::Tensor method_scores(const Policy& policy, const model::PrefillLayer& layer,
                         int64_t num_layers) {
  check_layer(layer, num_layers);
  return LayerSelection(layer, num_layers).scores(policy, "policy " + policy.name);
}

std::vector<at::Tensor> select_layer(const model::PrefillLayer& layer,
                                     const std::vector<Policy>& policies, int64_t num_layers) {
  std::vector<LayerCandidates> candidates;
  for (size_t p = 0; p < policies.size(); ++p) {
    if (moves_between_layers(policies[p])) {
      throw error_at(strfmt("policy %zu (%s)", p, policies[p].name.c_str()),
                     policies[p].method +
                         " moves its budget between layers: it needs every "
                         "layer's prefill (generate --dump-kept, or select on "
                         "every layer's tensors)");
    }
  }
  return select_layer(layer, policies, num_layers, candidates);
}

std::vector<at::Tensor> select_layer(const model::PrefillLayer& layer,
                                     const std::vector<Policy>& policies, int64_t num_layers,
                                     std::vector<LayerCandidates>& candidates) {
  check_layer(layer, num_layers);
  candidates.assign(policies.size(), LayerCandidates{});
  LayerSelection selection(layer, num_layers);
  const auto where = [&](size_t p) {
    return strfmt("policy %zu (%s)", p, policies[p].name.c_str());
  };
  for (size_t p = 0; p < policies.size(); ++p) selection.prepare(policies[p], where(p));
  // The policies select side by side, a task each: most of their steps are small ATen operations
  // that gain little from the threads inside them (those run serially within a task).
  std::vector<at::Tensor> kept(policies.size());
  cpu::for_each_task(static_cast<int64_t>(policies.size()), [&](int64_t task) {
    const auto p = static_cast<size_t>(task);
    kept[p] = select_one(selection, layer, policies[p], where(p), num_layers, candidates[p]);
  });
  return kept;
}

std::vector<at::Tensor> select_layer(const at::Tensor& window_queries, const at::Tensor& keys,
                                     const at::Tensor& values, const std::vector<Policy>& policies,
                                     int64_t layer, int64_t num_layers) {
  return select_layer(model::PrefillLayer{layer, keys, values, window_queries}, policies,
                      num_layers);
}

std::vector<at::Tensor> select_layer(const at::Tensor& window_queries, const at::Tensor& keys,
                                     const std::vector<Policy>& policies, int64_t layer,
                                     int64_t num_layers) {
  const at::Tensor no_values;
  return select_layer(window_queries, keys, no_values, policies, layer, num_layers);
}

LayerBudgetChoice finish_layer_budgets(const Policy& policy,
                                       const std::vector<LayerCandidates>& layers) {
  if (layers.empty()) throw Error("finish_layer_budgets: no layer given");
  const Method& method = find_method(policy.method, "policy.method");
  const int64_t n = layers.front().prompt_length;
  LayerBudgetChoice out;
  if (n <= policy.budget.budget) {
    out.budgets.assign(layers.size(), n);
  } else {
    std::vector<double> preferences;
    for (const LayerCandidates& c : layers) preferences.push_back(c.preference);
    out.budgets = method.allocate_layers(preferences, n, policy.budget.budget, policy.params);
  }
  if (out.budgets.size() != layers.size()) {
    throw Error(strfmt("%s: %zu layer budgets for %zu layers", policy.method.c_str(),
                       out.budgets.size(), layers.size()));
  }
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerCandidates& c = layers[l];
    if (c.prompt_length != n) throw Error("finish_layer_budgets: the layers' prompts differ");
    // Never more than the candidates held (the method's cap), never none.
    int64_t& budget = out.budgets[l];
    budget = std::clamp<int64_t>(budget, 1, c.positions.size(1));
    out.chosen.push_back(select_topk(c.scores, budget));
  }
  return out;
}

std::vector<int64_t> kept_counts(const at::Tensor& kept) {
  const at::Tensor counts = kept.ge(0).sum(1).to(at::kLong).cpu().contiguous();
  return std::vector<int64_t>(counts.data_ptr<int64_t>(),
                              counts.data_ptr<int64_t>() + counts.numel());
}

at::Tensor pad_ragged(const std::vector<at::Tensor>& rows, const at::TensorOptions& options) {
  int64_t longest = 0;
  for (const at::Tensor& r : rows) longest = std::max(longest, r.numel());
  at::Tensor out =
      at::full({static_cast<int64_t>(rows.size()), longest}, kRaggedPad, options.dtype(at::kLong));
  for (size_t h = 0; h < rows.size(); ++h) {
    const int64_t count = rows[h].numel();
    if (count > 0) out[static_cast<int64_t>(h)].narrow(0, longest - count, count).copy_(rows[h]);
  }
  return out;
}

}  // namespace kvs::evict
