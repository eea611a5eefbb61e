#include "evict/layer_selection.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "core/strfmt.h"
#include "cpu/parallel_tasks.h"
#include "evict/tensor_checks.h"
#include "evict/topk_select.h"

namespace kvs::evict {

namespace {

// One layer's selection: the prefill's tensors as float32 (converted once for all policies), the
// values the policies share (LayerView::shared_as), and each policy's view of the layer.
class LayerSelection {
 public:
  LayerSelection(const model::PrefillLayer& layer, int64_t num_layers)
      : layer_(layer), num_layers_(num_layers) {
    if (!layer.head_counts.empty()) split_heads();
  }

  bool ragged() const { return !heads_.empty(); }

  // The policy's own last rows of the exposed window.
  at::Tensor rows(const Policy& policy, const std::string& where) const {
    const int64_t window = policy.observation_window(), given = layer_.window_queries.size(1);
    if (given < window) {
      throw error_at("window_queries", strfmt("has %lld window rows, %s has window %lld",
                                              (long long)given, where.c_str(), (long long)window));
    }
    return layer_.window_queries.narrow(1, given - window, window);
  }

  // [cache_heads, n] scores of a policy: a budget-free method's are shared by the policies that
  // differ from it in the budget alone.
  at::Tensor scores(const Policy& policy, const std::string& where) {
    const LayerView view = layer_view(policy, where);
    const auto compute = [&] {
      return policy.method->scores(view, policy.params).to(at::kFloat).contiguous();
    };
    if (!policy.method->info().budget_free) return compute();
    std::string key = "scores of " + policy.method_name() + " " + policy.params.key();
    if (policy.base) key += " over " + policy_to_string(*policy.base);
    return view.shared(key, compute);
  }

  // A policy's kept positions: [cache_heads, k], ragged rows -1-padded.
  at::Tensor select(const Policy& policy, const std::string& where) {
    if (ragged() && !policy.method->info().ragged)
      throw error_at(where, policy.method_name() +
                                " keeps the same count per KV head: its cache is never head-wise");
    if (policy.method->info().budget_free) return select_topk(scores(policy, where), policy.budget);
    return policy.method->select(layer_view(policy, where), policy.params);
  }

  // Computes now what the policies would fill in on first use (the float32 tensors, the values a
  // method prepares), so that the policies can then select side by side, reading only.
  void prepare(const Policy& policy, const std::string& where) {
    if (ragged()) return;  // a ragged layer's policies select one after another
    float_view(policy.method->info().needs, where);
    if (policy.base) prepare(*policy.base, where + ".base");
    policy.method->prepare(layer_view(policy, where, false), policy.params);
  }

  // A layer-budget method's candidates on this layer (LayerCandidates).
  LayerCandidates candidates(const Policy& policy, const std::string& where) {
    const Method& method = *policy.method;
    const LayerView view = layer_view(policy, where);
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
  // with_base false: without the wrapper's base (what prepare() reads).
  LayerView layer_view(const Policy& policy, const std::string& where, bool with_base = true) {
    const Method& method = *policy.method;
    const uint32_t needs = method.info().needs;
    LayerView view = float_view(needs, where);
    view.window_queries = rows(policy, where);
    view.budget = policy.budget;
    view.share = [this](const std::string& key, const LayerView::SharedCompute& compute) {
      return share(key, compute);
    };
    if (needs & kNeedsLastQuery) {
      if (view.window_queries.size(1) < 1)
        throw error_at(where, policy.method_name() + " needs the last query row, none was given");
      view.last_query = view.window_queries.select(1, view.window_queries.size(1) - 1);
    }
    if (ragged()) {
      view.head_entries = layer_.head_counts;
      view.head_view = [this, &policy, where](int64_t h) {
        return heads_.at(size_t(h))->selection->layer_view(
            policy, strfmt("%s head %lld", where.c_str(), (long long)h));
      };
    }
    if (policy.base && with_base) {
      const Policy& base = *policy.base;
      view.base = ragged() ? head_scores(base, where + ".base") : scores(base, where + ".base");
      view.base_select = [this, &base, where](const std::vector<int64_t>& counts) {
        if (ragged()) return head_select(base, where + ".base", counts);
        return base.method->select_counts(layer_view(base, where + ".base"), base.params, counts);
      };
      // An allocating wrapper shares out its base's layer budget (a schedule's: pyramid budgets
      // compose with head-wise ones), the schedule computed at the tokens seen while decoding.
      if (method.info().allocates)
        view.budget =
            base.method->layer_budget(std::max(layer_.keys.size(1), view.next_position),
                                      base.budget, layer_.layer, num_layers_, base.params);
    }
    return view;
  }

  // A ragged layer: each KV head's own layer (its entries alone, its group's query heads).
  struct HeadLayer {
    at::Tensor keys, values, window_queries;
    model::PrefillLayer layer;
    std::unique_ptr<LayerSelection> selection;  // made once `layer` is complete
    HeadLayer(const at::Tensor& k, const at::Tensor& v, const at::Tensor& q, int64_t index)
        : keys(k), values(v), window_queries(q), layer(index, keys, values, window_queries) {}
  };

  void split_heads() {
    const int64_t kv_heads = layer_.keys.size(0), n = layer_.keys.size(1);
    const int64_t group = layer_.window_queries.size(0) / kv_heads, d = layer_.keys.size(2);
    for (int64_t h = 0; h < kv_heads; ++h) {
      const int64_t count = layer_.head_counts[size_t(h)], pad = n - count;
      const auto mine = [&](const at::Tensor& t) {
        return t.defined() ? t.narrow(0, h, 1).narrow(1, pad, count) : t;
      };
      const auto group_rows = [&](const at::Tensor& t) {
        return t.defined() ? t.narrow(0, h * group, group) : t;
      };
      auto head = std::make_unique<HeadLayer>(mine(layer_.keys), mine(layer_.values),
                                              group_rows(layer_.window_queries), layer_.layer);
      model::PrefillLayer& sub = head->layer;
      if (layer_.column_sums.defined())
        sub.column_sums = group_rows(layer_.column_sums).narrow(1, pad, count);
      sub.pre_rope_queries = group_rows(layer_.pre_rope_queries);  // the buffered steps' rows
      if (layer_.output_projection.defined())
        sub.output_projection = layer_.output_projection.narrow(1, h * group * d, group * d);
      sub.rope_inv_freq = layer_.rope_inv_freq;
      sub.next_position = layer_.next_position > 0 ? layer_.next_position : n;
      head->selection = std::make_unique<LayerSelection>(sub, num_layers_);
      heads_.push_back(std::move(head));
    }
  }

  // A base's scores on a ragged layer: each head's over its own entries, its padding -infinity.
  at::Tensor head_scores(const Policy& base, const std::string& where) {
    const int64_t n = layer_.keys.size(1);
    std::vector<at::Tensor> rows;
    for (size_t h = 0; h < heads_.size(); ++h) {
      const at::Tensor own = heads_[h]->selection->scores(base, where);
      at::Tensor row = at::full({1, n}, -std::numeric_limits<float>::infinity(), own.options());
      row.narrow(1, n - own.size(1), own.size(1)).copy_(own);
      rows.push_back(row);
    }
    return at::cat(rows).contiguous();
  }

  // A base's own selection with counts[h] entries for head h on a ragged layer, in the layer's
  // rows (each head's padding before its entries), shorter rows -1-padded.
  at::Tensor head_select(const Policy& base, const std::string& where,
                         const std::vector<int64_t>& counts) {
    const int64_t n = layer_.keys.size(1);
    std::vector<at::Tensor> rows;
    for (size_t h = 0; h < heads_.size(); ++h) {
      LayerSelection& head = *heads_[h]->selection;
      const int64_t count = std::min(counts.at(h), layer_.head_counts[h]);
      const at::Tensor kept = count == 0 ? at::empty({1, 0}, layer_.keys.options().dtype(at::kLong))
                                         : base.method->select_counts(head.layer_view(base, where),
                                                                      base.params, {count});
      rows.push_back(kept.reshape({-1}) + (n - layer_.head_counts[h]));
    }
    return pad_ragged(rows, layer_.keys.options());
  }

  // A value of this layer computed once for its policies: the first task to ask computes it, the
  // others wait and read it.
  std::shared_ptr<const void> share(const std::string& key,
                                    const LayerView::SharedCompute& compute) {
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
    view.next_position = layer_.next_position > 0 ? layer_.next_position : layer_.keys.size(1);
    return view;
  }

  static const at::Tensor& converted(const at::Tensor& source, at::Tensor& slot) {
    if (!slot.defined()) slot = source.to(at::kFloat).contiguous();
    return slot;
  }

  struct SharedValue {
    std::once_flag once;
    std::shared_ptr<const void> value;
  };

  const model::PrefillLayer& layer_;
  int64_t num_layers_;
  std::vector<std::unique_ptr<HeadLayer>> heads_;  // a ragged layer's heads, each its own layer
  LayerView float_;  // the converted tensors, filled as policies need them
  std::mutex shared_mutex_;
  std::map<std::string, std::unique_ptr<SharedValue>> shared_;
};

at::Tensor every_position(int64_t rows, int64_t n, const at::Tensor& like) {
  return at::arange(n, like.options().dtype(at::kLong)).unsqueeze(0).expand({rows, n}).contiguous();
}

void check_layer(const model::PrefillLayer& layer, int64_t num_layers) {
  check_float_tensor(layer.window_queries, "window_queries", 3, "[heads, W, head_dim]");
  check_float_tensor(layer.keys, "keys", 3, "[kv_heads, n, head_dim]");
  const int64_t heads = layer.window_queries.size(0), kv_heads = layer.keys.size(0);
  if (!layer.head_counts.empty()) {
    if (int64_t(layer.head_counts.size()) != kv_heads)
      throw error_at("head_counts", strfmt("%zu counts for %lld KV heads", layer.head_counts.size(),
                                           (long long)kv_heads));
    for (int64_t c : layer.head_counts)
      if (c < 0 || c > layer.keys.size(1))
        throw error_at("head_counts", strfmt("%lld entries in a layer of %lld rows", (long long)c,
                                             (long long)layer.keys.size(1)));
  }
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
  const Method& method = *policy.method;
  const bool whole = method.keeps_whole(n, policy.budget, num_layers, policy.params);
  if (method.info().layer_budgets) {
    if (whole) {  // every layer keeps all, whatever the shares
      candidates.positions = every_position(kv_heads, n, layer.keys);
      candidates.scores = at::zeros({kv_heads, n}, layer.keys.options().dtype(at::kFloat));
      candidates.preference = 1;
      candidates.prompt_length = n;
    } else {
      candidates = selection.candidates(policy, where);
    }
    return candidates.positions.to(layer.keys.device());
  }
  if (whole) {
    selection.rows(policy, where);  // still refuses a window the prefill did not expose
    return every_position(policy.cache_heads(heads, kv_heads), n, layer.keys);
  }
  // The method's selection: by default the B best of each head's scores (select_topk's tie rule:
  // the lower position first); ragged methods pad their shorter heads with -1.
  return selection.select(policy, where).to(layer.keys.device());
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
    if (policies[p].method->info().layer_budgets) {
      throw error_at(strfmt("policy %zu (%s)", p, policies[p].name.c_str()),
                     policies[p].method_name() +
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
  const int64_t n = layer.keys.size(1);
  for (size_t p = 0; p < policies.size(); ++p) {
    const Policy& policy = policies[p];
    if (!policy.method->keeps_whole(n, policy.budget, num_layers, policy.params))
      selection.prepare(policy, where(p));
  }
  // The policies select side by side, a task each: most of their steps are small ATen operations
  // that gain little from the threads inside them (those run serially within a task). A policy
  // alone selects outside a task, so that its own loops (the greedy admission's rows, the top-k's)
  // keep every thread.
  std::vector<at::Tensor> kept(policies.size());
  const auto select = [&](size_t p) {
    kept[p] = select_one(selection, layer, policies[p], where(p), num_layers, candidates[p]);
  };
  if (policies.size() == 1 || !layer.head_counts.empty()) {
    for (size_t p = 0; p < policies.size(); ++p) select(p);
  } else {
    cpu::for_each_task(static_cast<int64_t>(policies.size()),
                       [&](int64_t task) { select(static_cast<size_t>(task)); });
  }
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
  const Method& method = *policy.method;
  const int64_t n = layers.front().prompt_length;
  LayerBudgetChoice out;
  if (method.keeps_whole(n, policy.budget, int64_t(layers.size()), policy.params)) {
    out.budgets.assign(layers.size(), n);
  } else {
    std::vector<double> preferences;
    for (const LayerCandidates& c : layers) preferences.push_back(c.preference);
    out.budgets = method.allocate_layers(preferences, n, policy.budget, policy.params);
  }
  if (out.budgets.size() != layers.size()) {
    throw Error(strfmt("%s: %zu layer budgets for %zu layers", policy.method_name().c_str(),
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

}  // namespace kvs::evict
