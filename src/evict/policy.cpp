#include "evict/policy.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/enum_names.h"
#include "core/error.h"
#include "core/files.h"
#include "core/json_fields.h"
#include "core/strfmt.h"
#include "evict/method.h"
#include "evict/window_params.h"

namespace kvs::evict {

using nlohmann::json;

namespace {

const EnumName<Observe> kObserves[] = {{Observe::PromptEnd, "prompt_end"},
                                       {Observe::Question, "question"},
                                       {Observe::Context, "context"}};

}  // namespace

const char* observe_name(Observe observe) { return enum_name(observe, kObserves); }

const std::string& Policy::method_name() const { return method->info().name; }

int64_t Policy::observation_window() const {
  return base ? base->observation_window() : method->observation_window(params);
}

std::optional<int64_t> Policy::statistics_window() const {
  if (const auto own = method->statistics_window(params)) return own;
  return base ? base->statistics_window() : std::nullopt;
}

bool Policy::cache_per_query_head() const { return method->cache_per_query_head(params); }

int64_t Policy::cache_heads(int64_t heads, int64_t kv_heads) const {
  return cache_per_query_head() ? heads : kv_heads;
}

uint32_t Policy::needs() const {
  const uint32_t own = method->info().needs;
  return base ? own | base->needs() : own;
}

void Policy::validate(const std::string& where) const {
  if (!method) throw error_at(where + ".method", "no method set");
  const MethodInfo& info = method->info();
  if (budget < 1 && !(budget == 0 && decoding))
    throw error_at(where + ".budget", strfmt("must be >= 1, got %lld", (long long)budget));
  check_params(info.params, params, info.name, where);
  if (decoding) check_decoding(*this, *decoding, where);
  // A decode-only policy's budget is the decoding target, which check_decoding checked.
  method->check(budget > 0 ? budget : decoding->target, params, where);
  const int64_t kept = method->always_kept(params);
  if (budget > 0 && budget < kept) {  // equal: those alone are kept
    throw error_at(where + ".budget",
                   strfmt("%lld does not hold the %lld entries %s always keeps (its sinks or "
                          "window)",
                          (long long)budget, (long long)kept, info.name.c_str()));
  }
  if (!info.wrapper) {
    if (base) throw error_at(where + ".base", info.name + " is not a wrapper: it takes no base");
    return;
  }
  if (!base) throw error_at(where + ".base", info.name + " wraps a base policy: none given");
  base->validate(where + ".base");
  if (base->observe != Observe::PromptEnd) {
    throw error_at(where + ".base.observe",
                   "set the protocol on the wrapper: its base observes as it does");
  }
  const bool greedy_base = base->params.has(window_params().corr);
  if (base->base || (greedy_base && !info.allocates)) {
    throw error_at(where + ".base", base->method_name() + " has no scores of its own to rescore (" +
                                        (base->base ? "a wrapper" : "the greedy admission") + ")");
  }
  if (base->cache_per_query_head())
    throw error_at(where + ".base.granularity", info.name + " rescores per KV head: set kv_head");
  if (base->budget != (budget > 0 ? budget : decoding->target)) {
    throw error_at(
        where + ".base.budget",
        strfmt("%lld differs from the wrapper's budget %lld, which decides",
               (long long)base->budget, (long long)(budget > 0 ? budget : decoding->target)));
  }
}

bool Policy::operator==(const Policy& o) const {
  const bool same_base = base && o.base ? *base == *o.base : base == o.base;
  return name == o.name && method == o.method && budget == o.budget && params == o.params &&
         same_base && observe == o.observe && decoding == o.decoding;
}

Policy snapkv_policy(int64_t budget) {
  return policy_from_json(json{{"method", "snapkv"}, {"budget", budget}});
}

Policy pyramidkv_policy(int64_t budget) {
  return policy_from_json(json{{"method", "pyramidkv"}, {"budget", budget}});
}

Policy global_policy(int64_t budget, double lambda1, double lambda2) {
  return policy_from_json(json{{"method", "diverse"},
                               {"name", "global"},
                               {"budget", budget},
                               {"lambda1", profile_to_json(Profile::global_lambda(lambda1))},
                               {"lambda2", profile_to_json(Profile::global_lambda(lambda2))}});
}

Policy shorthand_policy(int64_t budget, const std::string& profile, std::optional<double> lambda1,
                        std::optional<double> lambda2) {
  if (profile == "global") {
    return global_policy(budget, lambda1.value_or(0.0), lambda2.value_or(kGlobalLambda2));
  }
  if (profile != "baseline" && profile != "pyramid") {
    throw error_at("--profile",
                   "unknown profile '" + profile + "' (expected baseline, pyramid or global)");
  }
  if (lambda1 || lambda2) {
    throw error_at(lambda1 ? "--lambda1" : "--lambda2",
                   "applies to --profile global only (" + profile + " scores by the mean alone)");
  }
  return profile == "baseline" ? snapkv_policy(budget) : pyramidkv_policy(budget);
}

// ---- JSON ----

json policy_to_json(const Policy& p) {
  json out = p.method->to_json(p.name, p.budget, p.params);
  if (p.base) out["base"] = policy_to_json(*p.base);
  // The default protocol is left out, so that every recorded policy keeps its exact JSON.
  if (p.observe != Observe::PromptEnd) out["observe"] = observe_name(p.observe);
  if (p.budget == 0) out.erase("budget");
  if (p.decoding) out["decoding"] = decoding_to_json(*p.decoding);
  return out;
}

namespace {

// The score terms of the paper's methods as an object {"mean", "dispersion", "corr"} (the older
// dialect's, still accepted) -> the methods' own parameters. corr exists for the greedy
// admission only.
void flatten_terms(json& policy, bool greedy, const std::string& where) {
  if (!policy.contains("terms")) return;
  json terms = policy["terms"];
  policy.erase("terms");
  JsonFields t(terms, where + ".terms");
  for (const char* term : {"mean", "dispersion", "corr"}) {
    if (!t.has(term)) continue;
    const bool on = t.boolean(term, false);
    if (std::string(term) == "corr" && !greedy) {
      if (on) throw error_at(where + ".terms.corr", "the corr term needs kind \"greedy\"");
      continue;
    }
    policy[term] = on;
  }
  t.check_all_read();
}

// The older dialect of the paper's methods, {"kind": "topk" | "greedy", "schedule": ..., ...},
// as the method dialect (policy.h).
json translate_kind_dialect(const json& value, const std::string& where) {
  json p = value;
  const json& kind = p["kind"];
  if (!kind.is_string() || (kind != "topk" && kind != "greedy"))
    throw error_at(where + ".kind", "expected \"topk\" or \"greedy\", got " + kind.dump());
  const bool greedy = kind == "greedy";
  if (!p.contains("schedule")) throw error_at(where + ".schedule", "missing");
  const std::string schedule = p["schedule"].is_string() ? p["schedule"].get<std::string>() : "";
  p.erase("kind");
  p["method"] = greedy ? "diverse" : schedule == "pyramid" ? "pyramidkv" : "snapkv";
  if (!p.contains("name")) p["name"] = "";
  // The older dialect's defaults: every term on but corr for top-k.
  json terms = p.contains("terms") ? p["terms"] : json::object();
  if (terms.is_object()) {
    if (!terms.contains("mean")) terms["mean"] = true;
    if (!terms.contains("dispersion")) terms["dispersion"] = true;
    if (!terms.contains("corr")) terms["corr"] = greedy;
    p["terms"] = terms;
  }
  if (!greedy) {  // top-k reads neither: they had no effect
    p.erase("lambda2");
    p.erase("candidate_factor");
  }
  return p;
}

Observe read_observe(JsonFields& r) {
  if (!r.find("observe")) return Observe::PromptEnd;
  return parse_enum(r.text("observe", "", true), r.at("observe"), "observation protocol",
                    kObserves);
}

}  // namespace

Policy policy_from_json(const json& given, const std::string& where) {
  if (!given.is_object()) throw error_at(where, "expected a JSON object, got " + given.dump());
  if (given.contains("kind") && given.contains("method"))
    throw error_at(where + ".kind", "not a field of the method dialect: \"method\" decides it");
  const json value = given.contains("kind") ? translate_kind_dialect(given, where) : given;
  if (!value.contains("method")) throw error_at(where + ".method", "missing");
  if (!value.at("method").is_string())
    throw error_at(where + ".method", "expected a method name, got " + value.at("method").dump());
  Policy p;
  p.method = &find_method(value.at("method").get<std::string>(), where + ".method");
  const MethodInfo& info = p.method->info();
  json fields = value;
  const std::string& corr = window_params().corr.spec.name;  // the greedy admission's term
  flatten_terms(fields,
                std::any_of(info.params.begin(), info.params.end(),
                            [&](const ParamSpec& s) { return s.name == corr; }),
                where);
  JsonFields r(fields, where);
  r.text("method", "", true);
  p.name = r.text("name", info.name);
  if (const json* decoding = r.find("decoding"))
    p.decoding = decoding_from_json(*decoding, where + ".decoding");
  p.budget = r.integer("budget", p.decoding ? std::optional<int64_t>(0) : std::nullopt, 1);
  p.params = read_params(info.params, r);
  p.observe = read_observe(r);
  if (info.wrapper && r.has("base")) {
    json base = *r.object("base");
    if (!base.contains("budget"))
      base["budget"] = p.budget > 0 ? p.budget : p.decoding ? p.decoding->target : 0;
    p.base = std::make_shared<const Policy>(policy_from_json(base, where + ".base"));
  }
  for (const auto& item : fields.items()) {
    const std::string& key = item.key();
    const bool known = key == "method" || key == "name" || key == "budget" || key == "observe" ||
                       key == "decoding" || (key == "base" && info.wrapper) ||
                       std::any_of(info.params.begin(), info.params.end(),
                                   [&](const ParamSpec& s) { return s.name == key; });
    if (known) continue;
    if (key == "base")
      throw error_at(where + ".base", info.name + " is not a wrapper: it takes no base");
    std::string names;
    for (const ParamSpec& s : info.params) names += (names.empty() ? "" : ", ") + s.name;
    throw error_at(where + "." + key, "not a parameter of " + info.name + " (its parameters: " +
                                          (names.empty() ? "none" : names) + ")");
  }
  r.check_all_read();
  p.validate(where);
  return p;
}

json policy_json_at_budget(json policy, int64_t budget, const std::string& where) {
  if (!policy.is_object()) throw error_at(where, "expected a JSON object, got " + policy.dump());
  json* decoding = policy.contains("decoding") ? &policy["decoding"] : nullptr;
  if (!decoding) {
    if (policy.contains("budget"))
      throw error_at(where + ".budget", "the method's budgets set B: leave budget out");
    policy["budget"] = budget;
    return policy;
  }
  if (!decoding->is_object())
    throw error_at(where + ".decoding", "expected a JSON object, got " + decoding->dump());
  if (decoding->contains("target"))
    throw error_at(where + ".decoding.target",
                   "the method's budgets set a decode-time policy's target: leave target out");
  (*decoding)["target"] = budget;
  return policy;
}

Policy load_policy(const std::string& path) {
  return policy_from_json(read_json_file(path, "the policy file"), path + ": policy");
}

std::string policy_to_string(const Policy& policy) { return policy_to_json(policy).dump(); }

int64_t decode_cache_bound(const Policy& policy, int64_t prompt_tokens, int64_t num_layers) {
  if (!policy.decoding) throw Error("decode_cache_bound: the policy has no decoding schedule");
  const DecodingSchedule& d = *policy.decoding;
  const int64_t prompt = policy.budget > 0 ? std::min(policy.budget, prompt_tokens) : prompt_tokens;
  // A layer schedule (PyramidKV's) gives some layers more than the target: its largest share, at
  // a length where nothing clamps it.
  constexpr int64_t kUnclamped = int64_t{1} << 40;
  int64_t largest = d.target;
  for (int64_t l = 0; l < num_layers; ++l)
    largest = std::max(
        largest, policy.method->layer_budget(kUnclamped, d.target, l, num_layers, policy.params));
  return std::max(d.bound() + (largest - d.target), prompt + d.period());
}

}  // namespace kvs::evict
