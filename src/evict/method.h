// An eviction method as a part with a name: what it needs from the prefill, its parameters with
// their defaults, its references, and how it chooses what a layer keeps. Each method is one file
// under evict/methods/ that registers itself (MethodRegistration), as the CLI's commands do;
// everything that names methods (policies, `kvsearch methods`, help texts) reads this registry.
//
// A method gives each KV head's entries a score from what one layer's prefill shows (LayerView),
// and by default keeps the B best per KV head and layer; what it always keeps (sinks, the last
// token, its window) scores +infinity. A method may choose otherwise (select: the paper's greedy
// admission, AdaKV's head budgets), move its budget between layers (CAKE), or keep its cache per
// query head (the paper's query_head granularity). The parts a method uses live beside it:
// the selectors (topk_select.h, greedy_select.h), the window statistics and their score
// (window_scoring.h), the layer schedules and profiles (budget.h, profile.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evict/params.h"

namespace kvs::evict {

// What a method reads from one layer's prefill beyond the post-RoPE keys. The prefill computes
// the union of what a batch's policies need, and only that (model::PrefillSignal).
enum Needs : uint32_t {
  kNeedsNothing = 0,
  kNeedsWindowQueries = 1u << 0,  // the last W query rows (post-RoPE); W: the "window" parameter
  kNeedsLastQuery = 1u << 1,      // the last prompt query row (post-RoPE)
  kNeedsValues = 1u << 2,
  kNeedsColumnSums = 1u << 3,        // every query's attention summed per key
  kNeedsPreRopeQueries = 1u << 4,    // every position's queries before RoPE, and RoPE's frequencies
  kNeedsOutputProjection = 1u << 5,  // o_proj's weight
};

// A method's card: what `kvsearch methods` lists and what the framework asks of it. Written with
// designated initializers in each method's file.
struct MethodInfo {
  std::string name;     // the registry's key; kvpress's registry name where kvpress has it
  std::string summary;  // one line: what it scores
  std::string paper;    // arXiv id, or a title
  std::string code;     // the reference code (repository and file)
  std::string kvpress;  // the kvpress class that equals it, or "" where kvpress has none
  std::string budget;   // what B counts
  std::string checked;  // the test that checks it against its reference
  std::vector<ParamSpec> params;
  uint32_t needs = kNeedsNothing;
  bool wrapper = false;  // rescores the scores of the policy in its "base" field (LayerView::base)
  // A wrapper that only moves its base's budget (adakv): the base keeps its own selector, so its
  // base may be the greedy admission; its layer total is the base's (a schedule's layer budget).
  bool allocates = false;
  bool ragged = false;  // its select() may keep different counts per KV head of a layer
  // Its budgets move between layers: each layer states a preference (layer_scores) and the
  // layers' counts come from all of them (allocate_layers) once the prefill has seen every layer.
  bool layer_budgets = false;
  // Its scores() never reads view.budget and it keeps the B best of them (Method::select's
  // default): the policies of a batch that differ in B alone share one scoring per layer.
  bool budget_free = false;
};

// The test that checks the methods kvpress has against its presses.
inline constexpr const char* kKvpressCheck = "tests/evict/test_methods_vs_kvpress.py";

// What one layer's prefill shows a method. Tensors are float32, contiguous, on one device; those
// the method does not declare in its needs may be undefined.
struct LayerView {
  at::Tensor keys;               // [kv_heads, n, d], after RoPE
  at::Tensor values;             // [kv_heads, n, d]
  at::Tensor last_query;         // [heads, d], after RoPE: the last prompt position's queries
  at::Tensor window_queries;     // [heads, W, d], after RoPE: the method's observation window
  at::Tensor column_sums;        // [heads, n]: every query's attention summed per key
  // [heads, m, d]: the queries before RoPE, every prompt position's (m = n) or, while decoding,
  // the buffered steps' (decoding.h)
  at::Tensor pre_rope_queries;
  at::Tensor rope_inv_freq;      // [d / 2]: RoPE's frequencies (half-split layout)
  at::Tensor output_projection;  // [hidden, heads * d]: o_proj's weight
  at::Tensor base;               // a wrapper's base policy's scores [kv_heads, n] (+inf: kept)
  // A wrapper's base policy's own selection with counts[h] entries for KV head h (what it always
  // keeps included): [kv_heads, max count] int64, rows ascending, shorter rows -1-padded. The
  // base's selector decides (top-k, or the greedy admission of the diverse score).
  std::function<at::Tensor(const std::vector<int64_t>& counts)> base_select;
  int64_t budget = 0;  // B: the entries the policy keeps per KV head on this layer
  int64_t layer = 0;
  int64_t num_layers = 1;
  // The position the next query takes: n after a prefill; while decoding, the tokens seen (the
  // cache holds fewer, each at the position it was written at).
  int64_t next_position = 0;
  // A ragged layer (model::PrefillLayer::head_counts, a head-wise policy's decode-time cache): per
  // KV head, the entries it holds, the LAST head_entries[h] of the n rows (padding before them: a
  // wrapper's base scores it -infinity, and nothing may keep it); empty: every head holds all n.
  // There head_view(h) is KV head h's own layer, [1, head_entries[h]] entries and its group's
  // query heads, for a ragged method that scores each head over its own entries (mixkv).
  std::vector<int64_t> head_entries;
  std::function<LayerView(int64_t head)> head_view;

  // A value that depends on this layer's prefill alone, computed once for all the batch's
  // policies: the first caller of `key` computes it, the others get the same object (a key names
  // the method or part and the value). Unset: computed for every caller.
  using SharedCompute = std::function<std::shared_ptr<const void>()>;
  std::function<std::shared_ptr<const void>(const std::string& key, const SharedCompute&)> share;

  template <class T, class F>
  const T& shared_as(const std::string& key, F&& compute) const {
    const SharedCompute make = [&]() -> std::shared_ptr<const void> {
      return std::make_shared<const T>(compute());
    };
    held_.push_back(share ? share(key, make) : make());
    return *static_cast<const T*>(held_.back().get());
  }
  at::Tensor shared(const std::string& key, const std::function<at::Tensor()>& compute) const {
    return shared_as<at::Tensor>(key, compute);
  }

 private:
  mutable std::vector<std::shared_ptr<const void>> held_;  // keeps the values it gave alive
};

class Method {
 public:
  virtual ~Method() = default;
  virtual const MethodInfo& info() const = 0;
  // [kv_heads, n] float32 (or [cache_heads, n], see cache_per_query_head), higher kept first;
  // +infinity where the method always keeps the entry.
  virtual at::Tensor scores(const LayerView& view, const Params& params) const = 0;
  // The positions each cache head keeps (n > view.budget): [cache_heads, k] int64, each row
  // ascending. A method whose heads keep different counts (ragged budgets, MethodInfo::ragged)
  // left-pads the shorter rows with -1 (kRaggedPad), k being the longest head's count. Default:
  // the view.budget best of each head's scores() (select_topk's tie rule), a rectangle.
  virtual at::Tensor select(const LayerView& view, const Params& params) const;
  // Its selection with counts[h] entries for head h (what it always keeps included), for a
  // wrapper that moves budget between heads (LayerView::base_select). Default: each head's best
  // counts[h] scores().
  virtual at::Tensor select_counts(const LayerView& view, const Params& params,
                                   const std::vector<int64_t>& counts) const;

  // Work every policy of the layer will read, done before the policies select side by side (the
  // shared values of LayerView::shared_as). Default: nothing.
  virtual void prepare(const LayerView& view, const Params& params) const {}
  // How many trailing prompt query rows it reads (LayerView::window_queries). Default: 1 where it
  // needs the last query, else 0.
  virtual int64_t observation_window(const Params& params) const;
  // The window its window statistics are computed over, or none for a method scored otherwise:
  // the policies of one cache batch share the statistics (compressed_cache.h).
  virtual std::optional<int64_t> statistics_window(const Params& params) const {
    return std::nullopt;
  }
  // Why it cannot compress while decoding with these parameters, or "" (decoding.h's
  // decoding_refusal adds the reasons every method shares). Default: "".
  virtual std::string decoding_refusal(const Params& params) const { return ""; }
  // The query rows of the last decoding steps a decode-time compression must read (decoding.h).
  // Default: its observation window.
  virtual int64_t decoding_query_rows(const Params& params) const {
    return observation_window(params);
  }
  // The entries it always keeps per head (sinks, its window): a budget must hold them.
  virtual int64_t always_kept(const Params& params) const { return 0; }
  // true: its cache holds the K/V once per query head (the paper's query_head granularity), its
  // selection then has a row per query head; false: a row per KV head.
  virtual bool cache_per_query_head(const Params& params) const { return false; }
  // true when a prompt of n tokens is kept whole at budget B. Default: n <= B.
  virtual bool keeps_whole(int64_t n, int64_t budget, int64_t num_layers,
                           const Params& params) const {
    return n <= budget;
  }
  // The entries a head keeps on this layer at budget B (a layer schedule's share). Default: B.
  virtual int64_t layer_budget(int64_t n, int64_t budget, int64_t layer, int64_t num_layers,
                               const Params& params) const {
    return budget;
  }

  // Checks beyond the declared types and ranges (what the budget must hold, an odd kernel):
  // throws kvs::Error "<where>.<field>: ...".
  virtual void check(int64_t budget, const Params& params, const std::string& where) const {}
  // The policy's JSON: {"method", "budget", every parameter, "name" where it is not the
  // method's}. (Policy adds "base" and "observe".)
  virtual nlohmann::json to_json(const std::string& label, int64_t budget,
                                 const Params& params) const;

  // Methods whose budgets move between layers (MethodInfo::layer_budgets). Each layer's kept set
  // is its count's best scores(); the count comes from every layer's preference.
  struct LayerScores {
    at::Tensor scores;      // as scores() gives them
    double preference = 0;  // > 0: how large a share of the model's budget the layer asks for
  };
  // The layer's scores and preference from one look at the view.
  virtual LayerScores layer_scores(const LayerView& view, const Params& params) const;
  // Per layer, the entries each KV head keeps (what scores() keeps always included), from every
  // layer's preference; n > budget (a shorter prompt keeps everything).
  virtual std::vector<int64_t> allocate_layers(const std::vector<double>& preferences, int64_t n,
                                               int64_t budget, const Params& params) const;
  // The most entries allocate_layers may give one layer: what the prefill holds of each layer
  // until every layer's preference is known (at most n).
  virtual int64_t layer_budget_cap(int64_t n, int64_t budget, int64_t num_layers,
                                   const Params& params) const;
};

// What pads a ragged kept-positions tensor (Method::select, select_layer) on the left.
inline constexpr int64_t kRaggedPad = -1;

struct MethodRegistration {
  explicit MethodRegistration(const Method& method);
};

// Every registered method, in name order.
std::vector<const Method*> registered_methods();
// The method of that name; throws kvs::Error naming `where` and the registered names otherwise.
const Method& find_method(const std::string& name, const std::string& where);

// A method's policy at its defaults and budget B, as the benches run every method: a wrapper over
// SnapKV as kvpress sets it (window 64, avg-pool 5, kv_head: kvpress's critical_snapkv).
nlohmann::json default_policy_json(const MethodInfo& info, int64_t budget);

// Every registered method for `kvsearch methods`: as JSON (name, summary, references, what B
// counts, what it needs, its parameters with defaults), and as the Markdown table the README
// carries (name, reference, what B counts, checked against).
nlohmann::json methods_to_json();
std::string methods_markdown();

// Per head r of a [rows, n] score tensor, its best counts[r] positions, ascending; the rows
// -1-padded to the longest (select_counts' default, and a building block of methods).
at::Tensor select_counts_topk(const at::Tensor& scores, const std::vector<int64_t>& counts);
// Rows of ascending positions, of different lengths -> [rows, longest] int64 left-padded with -1.
at::Tensor pad_ragged(const std::vector<at::Tensor>& rows, const at::TensorOptions& options);

}  // namespace kvs::evict
