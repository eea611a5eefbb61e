// An eviction method as a part with a name: what it needs from the prefill, its parameters with
// their defaults, its references, and its score. Each method is one file under evict/methods/ that
// registers itself (MethodRegistration), as the CLI's commands do; everything that names methods
// (policies, `kvsearch methods`, help texts) reads this registry.
//
// Two kinds of entry:
// - window-statistics methods (snapkv, pyramidkv, and the paper's diverse score): scored from the
//   window queries' attention statistics (window_stats.h, score.h) and selected by top-k or the
//   greedy admission; their settings are Policy's own fields (policy.h).
// - scoring methods: score() gives each KV head's entries a score from what one layer's prefill
//   shows (LayerView); the policy keeps the B best per KV head and layer. What they always keep
//   (sinks, the last token) scores +infinity.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "evict/policy.h"

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

// One parameter of a method: its JSON field, default (as JSON text) and meaning. A scoring
// method's parameters are integers, numbers, booleans or texts from a list of choices
// (MethodParams holds them as double: 1 for true, a text's index in `choices`; numbers in
// [minimum, maximum]); the window-statistics methods also take profiles.
struct MethodParam {
  enum class Type { Integer, Number, Boolean, Text, Profile };
  MethodParam() = default;
  MethodParam(std::string name_, Type type_, std::string default_json_, double minimum_,
              std::string doc_)
      : name(std::move(name_)),
        type(type_),
        default_json(std::move(default_json_)),
        minimum(minimum_),
        doc(std::move(doc_)) {}
  std::string name;
  Type type = Type::Integer;
  std::string default_json;
  double minimum = 0;
  std::string doc;
  double maximum = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // a scoring method's Text parameter: the texts it takes
};

struct MethodInfo {
  std::string name;     // the registry's key; kvpress's registry name where kvpress has it
  std::string summary;  // one line: what it scores
  std::string paper;    // arXiv id
  std::string code;     // the reference code (repository and file)
  std::string kvpress;  // the kvpress class that equals it, or "" where kvpress has none
  std::string budget;   // what B counts
  std::string checked;  // the test that checks it against its reference
  std::vector<MethodParam> params;
  uint32_t needs = kNeedsNothing;
  bool window_statistics = false;  // scored through Policy's window-statistics fields
  bool wrapper = false;  // rescores the scores of the policy in its "base" field (LayerView::base)
  // A wrapper that only moves its base's budget (adakv): the base keeps its own selector, so its
  // base may be the greedy admission; its layer total is the base's (a schedule's layer budget).
  bool allocates = false;
  bool ragged = false;   // its select() may keep different counts per KV head of a layer
  // Its budgets move between layers: each layer states a preference (layer_scores) and the
  // layers' counts come from all of them (allocate_layers) once the prefill has seen every layer.
  bool layer_budgets = false;
  // Its scores() never reads view.budget and it keeps the B best of them (Method::select's
  // default): the policies of a batch that differ in B alone share one scoring per layer.
  bool budget_free = false;
};

// MethodInfo's fields in order, as a call (the methods' files state their card in a few lines).
MethodInfo method_info(std::string name, std::string summary, std::string paper, std::string code,
                       std::string kvpress, std::string budget, std::string checked,
                       std::vector<MethodParam> params, uint32_t needs,
                       bool window_statistics = false, bool wrapper = false);
// The card with budget_free set (`static const MethodInfo info = budget_free(method_info(...))`).
MethodInfo budget_free(MethodInfo info);
// A parameter of a scoring method.
MethodParam integer_param(std::string name, int64_t default_value, int64_t minimum,
                          std::string doc);
MethodParam number_param(std::string name, double default_value, double minimum, std::string doc);
MethodParam number_param(std::string name, double default_value, double minimum, double maximum,
                         std::string doc);
// A text parameter taking one of `choices` (default_value among them).
MethodParam choice_param(std::string name, std::string default_value,
                         std::vector<std::string> choices, std::string doc);
MethodParam boolean_param(std::string name, bool default_value, std::string doc);

// The test that checks the methods kvpress has against its presses.
inline constexpr const char* kKvpressCheck = "tests/evict/test_methods_vs_kvpress.py";

// What one layer's prefill shows a scoring method. Tensors are float32, contiguous, on one device;
// those the method does not declare in its needs may be undefined.
struct LayerView {
  at::Tensor keys;               // [kv_heads, n, d], after RoPE
  at::Tensor values;             // [kv_heads, n, d]
  at::Tensor last_query;         // [heads, d], after RoPE: the last prompt position's queries
  at::Tensor window_queries;     // [heads, W, d], after RoPE: the method's `window` last rows
  at::Tensor column_sums;        // [heads, n]: every query's attention summed per key
  at::Tensor pre_rope_queries;   // [heads, n, d]: every position's queries before RoPE
  at::Tensor rope_inv_freq;      // [d / 2]: RoPE's frequencies (half-split layout)
  at::Tensor output_projection;  // [hidden, heads * d]: o_proj's weight
  at::Tensor base;               // a wrapper's base policy's scores [kv_heads, n] (+inf: kept)
  // A wrapper's base policy's own selection with counts[h] entries for KV head h (what it always
  // keeps included): [kv_heads, max count] int64, rows ascending, shorter rows -1-padded. The
  // base's selector decides (top-k, or the greedy admission of the diverse score).
  std::function<at::Tensor(const std::vector<int64_t>& counts)> base_select;
  int64_t budget = 0;            // B: the entries the policy keeps per KV head on this layer
  // A value that depends on this layer's prefill alone (no parameter), computed once for all the
  // batch's policies: shared(key, compute) is compute() for the first caller of `key` and the same
  // tensor for the others (a key names the method and the value). Unset: compute() every time.
  std::function<at::Tensor(const std::string& key, const std::function<at::Tensor()>& compute)>
      shared;
  int64_t layer = 0;
  int64_t num_layers = 1;
};

class Method {
 public:
  virtual ~Method() = default;
  virtual const MethodInfo& info() const = 0;
  // [kv_heads, n] float32, higher kept first; +infinity where the method always keeps the entry.
  // Window-statistics methods are scored by select_layer and never reach this.
  virtual at::Tensor scores(const LayerView& view, const MethodParams& params) const;
  // The positions each KV head keeps (n > view.budget): [kv_heads, k] int64, each row ascending.
  // A method whose heads keep different counts (ragged budgets, MethodInfo::ragged) left-pads
  // the shorter rows with -1 (kRaggedPad), k being the longest head's count. Default: the
  // view.budget best of each head's scores() (select_topk's tie rule), a rectangle.
  virtual at::Tensor select(const LayerView& view, const MethodParams& params) const;

  // Methods whose budgets move between layers (MethodInfo::layer_budgets). Each layer's kept set
  // is its count's best scores(); the count comes from every layer's preference.
  struct LayerScores {
    at::Tensor scores;      // as scores() gives them
    double preference = 0;  // > 0: how large a share of the model's budget the layer asks for
  };
  // The layer's scores and preference from one look at the view.
  virtual LayerScores layer_scores(const LayerView& view, const MethodParams& params) const;
  // Per layer, the entries each KV head keeps (what scores() keeps always included), from every
  // layer's preference; n > budget (a shorter prompt keeps everything).
  virtual std::vector<int64_t> allocate_layers(const std::vector<double>& preferences, int64_t n,
                                               int64_t budget, const MethodParams& params) const;
  // The most entries allocate_layers may give one layer: what the prefill holds of each layer
  // until every layer's preference is known (at most n).
  virtual int64_t layer_budget_cap(int64_t n, int64_t budget, int64_t num_layers,
                                   const MethodParams& params) const;
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

// The parameters with their defaults.
MethodParams default_params(const MethodInfo& info);

// A method's policy at its defaults and budget B, as the benches run every method: a wrapper over
// SnapKV as kvpress sets it (window 64, avg-pool 5, kv_head: kvpress's critical_snapkv).
nlohmann::json default_policy_json(const MethodInfo& info, int64_t budget);

// What a policy reads from the prefill (Needs flags): its method's needs, a wrapper's with its
// base's; the window-statistics methods read the window's query rows.
uint32_t policy_needs(const Policy& policy);

// Every registered method for `kvsearch methods`: as JSON (name, summary, references, what B
// counts, what it needs, its parameters with defaults), and as the Markdown table the README
// carries (name, reference, what B counts, checked against).
nlohmann::json methods_to_json();
std::string methods_markdown();

}  // namespace kvs::evict
