// One eviction setting: a registered method (method.h, `kvsearch methods`), its budget and its
// parameters, a wrapper's base policy, and the observation protocol. Its JSON is what the search
// records and what `generate --policy` and `select --policy` read:
//   {"method": "knorm", "budget": 128}
//   {"method": "streaming_llm", "budget": 128, "n_sink": 4}
//   {"method": "snapkv", "budget": 128, "window": 64, "kernel": 5, "pooling": "avg",
//    "granularity": "kv_head"}
//   {"method": "diverse", "budget": 64, "lambda2": {"profile": "segments", "a": [-0.3, 0.1]}}
// B counts every entry kept per cache head and layer. A parameter left out takes its declared
// default; an unknown field, a wrong type or a value out of range is an error naming the field.
// A wrapper takes its base policy as "base" (its budget, when given, must equal the wrapper's):
//   {"method": "criticalkv", "budget": 128, "base": {"method": "snapkv", "window": 64, ...}}
// Any policy takes "observe": "prompt_end" (the default, never written) | "question" |
// "context", the observation protocol (Observe below); a wrapper's base takes none of its own.
// A policy compresses while decoding with a "decoding" schedule (decoding.h); its budget is then
// optional (without one the prompt is kept whole until the first decode-time compression):
//   {"method": "knorm", "decoding": {"interval": 64, "target": 512, "buffer": 128}}
//
// The older dialect of the paper's methods still reads (every recorded policy is in it), and they
// are written in it, so recorded runs keep their identity:
//   {"name": "global", "kind": "greedy", "budget": 64, "window": 8, "schedule": "pyramid",
//    "terms": {"mean": true, "dispersion": true, "corr": true}, "lambda1": {...}, ...}
// kind greedy is diverse; topk is snapkv (uniform schedule) or pyramidkv (pyramid).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "evict/decoding.h"
#include "evict/params.h"

namespace kvs::evict {

class Method;

// The observation protocol (docs/methods.md, "Observation protocols"): which query rows observe
// and what is compressed. prompt_end (the default; omitted from the JSON): the whole prompt, its
// last W rows observing. question: the prompt through the question's last token, the question's
// last W rows observing; the chat suffix and answer prefix then follow uncompressed. context
// (kvpress's default): the context alone (everything before the question), its last W rows
// observing; the question, chat suffix and answer prefix then follow uncompressed, positions
// continuing. question and context need the prompt's question span (a data record's, questions.h).
enum class Observe { PromptEnd, Question, Context };

struct Policy {
  std::string name;                // a label for tables and logs; no effect on the selection
  const Method* method = nullptr;  // a registered method
  // B: the entries kept per cache head and layer after the prefill; 0: the prompt is kept whole
  // (a decode-only policy, which has a decoding schedule)
  int64_t budget = 0;
  Params params;                   // every parameter the method declares
  // A wrapper method's (criticalkv's, adakv's) base policy, whose scores it rescores; null
  // otherwise.
  std::shared_ptr<const Policy> base;
  Observe observe = Observe::PromptEnd;  // JSON "observe"; a wrapper's decides
  std::optional<DecodingSchedule> decoding;  // JSON "decoding": compression while decoding

  const std::string& method_name() const;
  // How many trailing query rows the policy reads from the prefill.
  int64_t observation_window() const;
  // The window its window statistics are computed over (its own, or its base's), or none for a
  // method scored otherwise: policies of one cache batch share the statistics.
  std::optional<int64_t> statistics_window() const;
  // true: its cache holds a row per query head (the paper's query_head granularity); false: a row
  // per KV head.
  bool cache_per_query_head() const;
  // The rows of its cache: heads or kv_heads.
  int64_t cache_heads(int64_t heads, int64_t kv_heads) const;
  // What it reads from the prefill (method.h's Needs): its method's, a wrapper's with its base's.
  uint32_t needs() const;

  // Throws kvs::Error naming the first invalid field ("<where>.<field>: ...").
  void validate(const std::string& where = "policy") const;

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

// A policy JSON without a budget (an experiment's or a run's template) at budget B: B is its
// "budget", or for a policy with a "decoding" schedule its target: the cache holds B entries per
// KV head and layer after each decode-time compression (kvpress's DecodingPress with target_size
// B). A decode-time template without a "budget" keeps the prompt whole until the first
// compression; with one, the prompt is compressed to that fixed budget first (kvpress's
// PrefillDecodingPress), whatever B. Errors name `where` when the template sets what B sets.
nlohmann::json policy_json_at_budget(nlohmann::json policy, int64_t budget,
                                     const std::string& where);

// The most entries one KV head of one layer may hold under a decode-time policy (one with a
// decoding schedule) after a prompt of `prompt_tokens`, on a model of `num_layers` layers: its
// schedule's bound (target + period; a layer schedule's largest share in place of the target), or
// the prompt it keeps (its budget, or whole) + period until the first compression.
int64_t decode_cache_bound(const Policy& policy, int64_t prompt_tokens, int64_t num_layers);

const char* observe_name(Observe observe);  // "prompt_end" | "question" | "context"

}  // namespace kvs::evict
