// One eviction setting: everything that decides which prompt entries a layer keeps. Its JSON is
// what the search records and what `generate --policy` and `select --policy` read. Torch-free.
//
//   {"name": "global", "kind": "greedy", "budget": 64, "window": 8, "schedule": "pyramid",
//    "beta": 20, "redistribute": false, "kernel": 7, "pooling": "max",
//    "granularity": "query_head", "group_reduce": "mean",
//    "terms": {"mean": true, "dispersion": true, "corr": true},
//    "lambda1": {"profile": "global", "a": [0.0]},
//    "lambda2": {"profile": "segments", "a": [-0.3, 0.1, 0.2]}, "candidate_factor": 4}
//
// Required: kind, budget, schedule. Every other field has the default shown in the struct;
// terms.corr defaults to (kind == greedy). Unknown fields are errors, so a typo never silently
// falls back to a default.
//
// The method dialect names a registered method (method.h, `kvsearch methods`) and sets its
// parameters as fields; B counts every entry kept per cache head and layer:
//   {"method": "knorm", "budget": 128}
//   {"method": "streaming_llm", "budget": 128, "n_sink": 4}
//   {"method": "snapkv", "budget": 128, "window": 64, "kernel": 5, "pooling": "avg",
//    "granularity": "kv_head"}
// A wrapper takes its base policy as "base" (its budget, when given, must equal the wrapper's):
//   {"method": "criticalkv", "budget": 128, "base": {"method": "snapkv", "window": 64, ...}}
// Either dialect takes "observe": "prompt_end" (the default, never written) | "question" |
// "context", the observation protocol (Observe below); a wrapper's base takes none of its own.
// snapkv, pyramidkv and diverse (the paper's score) are the fields above under another name:
// they read and write as kind/schedule policies, so recorded policies keep their JSON.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "evict/budget.h"
#include "evict/profile.h"

namespace kvs::evict {

// topk: the baselines (SnapKV with the uniform schedule, PyramidKV with the pyramid one).
// greedy: the diversity-aware admission (MMR over the top candidate_factor * B_sel tokens).
enum class SelectorKind { TopK, Greedy };
enum class Pooling { Max, Avg, None };  // along the token axis, kernel `kernel`, stride 1
// query_head: every query head selects, the cache holds the K/V repeated per query head (the
// reference default). kv_head: the group's scores are reduced (mean or max) before pooling and the
// cache holds the KV heads.
enum class Granularity { QueryHead, KvHead };
enum class GroupReduce { Mean, Max };
// The observation protocol (docs/methods.md, "Observation protocols"): which query rows observe
// and what is compressed. prompt_end (the default; omitted from the JSON): the whole prompt, its
// last W rows observing. question: the prompt through the question's last token, the question's
// last W rows observing; the chat suffix and answer prefix then follow uncompressed. context
// (kvpress's default): the context alone (everything before the question), its last W rows
// observing; the question, chat suffix and answer prefix then follow uncompressed, positions
// continuing. question and context need the prompt's question span (a data record's, questions.h).
enum class Observe { PromptEnd, Question, Context };

// The score-term switches of the ablations (docs/reference.md §1, Table 3).
//   s = [mean] mu + [dispersion] lambda1 * sigma;   greedy objective s~ + [corr] lambda2 * corr
struct ScoreTerms {
  bool mean = true;
  bool dispersion = true;
  bool corr = false;
  bool operator==(const ScoreTerms& o) const {
    return mean == o.mean && dispersion == o.dispersion && corr == o.corr;
  }
};

// A scoring method's parameters (method.h): name -> value, every declared parameter present.
using MethodParams = std::map<std::string, double>;

struct Policy {
  std::string name;  // a label for tables and logs; no effect on the selection
  // A scoring method's registry name, with its parameters; empty for the window-statistics
  // methods, which the fields below describe. A scoring method keeps budget.budget entries per KV
  // head and layer (budget.window 0, granularity kv_head) and uses none of the other fields.
  std::string method;
  MethodParams params;
  // A wrapper method's (criticalkv's) base policy, whose scores it rescores; null otherwise.
  std::shared_ptr<const Policy> base;
  SelectorKind kind = SelectorKind::TopK;
  BudgetSpec budget;   // B, W, schedule, beta, redistribute
  int64_t kernel = 7;  // odd, so the pooled scores stay aligned with the tokens
  Pooling pooling = Pooling::Max;
  Granularity granularity = Granularity::QueryHead;
  GroupReduce group_reduce = GroupReduce::Mean;  // kv_head granularity only
  ScoreTerms terms;
  Profile lambda1 = Profile::global(0.0);
  Profile lambda2 = Profile::global(0.0);
  int64_t candidate_factor = 4;  // greedy candidates: top min(n - W, factor * B_sel)
  Observe observe = Observe::PromptEnd;  // JSON "observe", either dialect; a wrapper's decides

  bool is_scoring() const { return !method.empty(); }
  // The registry name: `method`, else snapkv / pyramidkv (top-k, by schedule) or diverse (greedy).
  std::string method_name() const;
  // How many trailing query rows the policy reads from the prefill.
  int64_t observation_window() const;
  // The window its window statistics are computed over (its own, or its base's), or none for a
  // method scored otherwise: policies of one cache batch share the statistics, so they must agree
  // on it, while the others read their own last rows of the widest window.
  std::optional<int64_t> statistics_window() const;

  // Throws kvs::Error naming the first invalid field ("<where>.<field>: ...").
  void validate(const std::string& where = "policy") const;

  // The coefficients a layer uses; 0 when the term is switched off (or, for lambda2, top-k).
  double lambda1_at(int64_t layer, int64_t num_layers) const;
  double lambda2_at(int64_t layer, int64_t num_layers) const;

  bool operator==(const Policy& o) const;
  bool operator!=(const Policy& o) const { return !(*this == o); }
};

// The paper's three reference settings.
Policy snapkv_policy(int64_t budget);     // top-k, uniform schedule, mean only
Policy pyramidkv_policy(int64_t budget);  // top-k, pyramid schedule, mean only
// Greedy on the pyramid schedule with Global profiles; the default Global setting is
// lambda1 = 0, lambda2 = -0.15.
Policy global_policy(int64_t budget, double lambda1 = 0.0, double lambda2 = -0.15);

// The `generate` shorthands: --budget B --profile baseline|pyramid|global [--lambda1 X
// --lambda2 Y]. baseline = SnapKV, pyramid = PyramidKV, global = global_policy; the lambdas apply
// to global only (an error otherwise).
Policy shorthand_policy(int64_t budget, const std::string& profile,
                        std::optional<double> lambda1 = std::nullopt,
                        std::optional<double> lambda2 = std::nullopt);

nlohmann::json policy_to_json(const Policy& policy);
// Validates types, values and field names; errors read "<where>.<field>: what is wrong".
Policy policy_from_json(const nlohmann::json& json, const std::string& where = "policy");
Policy load_policy(const std::string& path);         // errors name the file
std::string policy_to_string(const Policy& policy);  // compact JSON, one line

const char* selector_kind_name(SelectorKind kind);      // "topk" | "greedy"
const char* pooling_name(Pooling pooling);              // "max" | "avg" | "none"
const char* granularity_name(Granularity granularity);  // "query_head" | "kv_head"
const char* group_reduce_name(GroupReduce reduce);      // "mean" | "max"
const char* observe_name(Observe observe);              // "prompt_end" | "question" | "context"

}  // namespace kvs::evict
