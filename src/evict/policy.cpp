#include "evict/policy.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/enum_names.h"
#include "core/error.h"
#include "core/files.h"
#include "core/json_fields.h"
#include "core/strfmt.h"
#include "evict/method.h"

namespace kvs::evict {

using nlohmann::json;

namespace {

const EnumName<SelectorKind> kSelectorKinds[] = {{SelectorKind::TopK, "topk"}, {SelectorKind::Greedy, "greedy"}};
const EnumName<Pooling> kPoolings[] = {{Pooling::Max, "max"}, {Pooling::Avg, "avg"}, {Pooling::None, "none"}};
const EnumName<Granularity> kGranularities[] = {{Granularity::QueryHead, "query_head"},
                                                {Granularity::KvHead, "kv_head"}};
const EnumName<GroupReduce> kGroupReduces[] = {{GroupReduce::Mean, "mean"}, {GroupReduce::Max, "max"}};
const EnumName<Observe> kObserves[] = {{Observe::PromptEnd, "prompt_end"},
                                       {Observe::Question, "question"},
                                       {Observe::Context, "context"}};

}  // namespace

const char* selector_kind_name(SelectorKind kind) { return enum_name(kind, kSelectorKinds); }
const char* pooling_name(Pooling pooling) { return enum_name(pooling, kPoolings); }
const char* granularity_name(Granularity granularity) { return enum_name(granularity, kGranularities); }
const char* group_reduce_name(GroupReduce reduce) { return enum_name(reduce, kGroupReduces); }
const char* observe_name(Observe observe) { return enum_name(observe, kObserves); }

std::string Policy::method_name() const {
  if (is_scoring()) return method;
  if (kind == SelectorKind::Greedy) return "diverse";
  return budget.schedule == Schedule::Pyramid ? "pyramidkv" : "snapkv";
}

int64_t Policy::observation_window() const {
  if (!is_scoring()) return budget.window;
  if (base) return base->observation_window();
  const uint32_t needs = find_method(method, "method").info().needs;
  if (needs & kNeedsWindowQueries) return static_cast<int64_t>(params.at("window"));
  return needs & kNeedsLastQuery ? 1 : 0;
}

std::optional<int64_t> Policy::statistics_window() const {
  if (!is_scoring()) return budget.window;
  return base ? base->statistics_window() : std::nullopt;
}

namespace {

// A scoring method's policy: its registered parameters, each at least its minimum, and a budget
// that holds the sinks it always keeps.
void validate_scoring(const Policy& p, const std::string& where) {
  const MethodInfo& info = find_method(p.method, where + ".method").info();
  if (info.window_statistics) {
    throw error_at(where + ".method", info.name + " is a window-statistics method, set by kind");
  }
  if (p.budget.budget < 1) {
    throw error_at(where + ".budget", strfmt("must be >= 1, got %lld", (long long)p.budget.budget));
  }
  for (const MethodParam& param : info.params) {
    const auto it = p.params.find(param.name);
    if (it == p.params.end()) throw error_at(where + "." + param.name, "missing");
    if (it->second < param.minimum || it->second > param.maximum) {
      throw error_at(
          where + "." + param.name,
          std::isinf(param.maximum)
              ? strfmt("must be >= %g, got %g", param.minimum, it->second)
              : strfmt("must be in [%g, %g], got %g", param.minimum, param.maximum, it->second));
    }
  }
  for (const auto& [name, value] : p.params) {
    const bool declared = std::any_of(info.params.begin(), info.params.end(),
                                      [&](const MethodParam& q) { return q.name == name; });
    if (!declared) throw error_at(where + "." + name, "not a parameter of " + info.name);
  }
  if (info.wrapper) {
    if (!p.base) throw error_at(where + ".base", info.name + " wraps a base policy: none given");
    p.base->validate(where + ".base");
    if (p.base->observe != Observe::PromptEnd) {
      throw error_at(where + ".base.observe",
                     "set the protocol on the wrapper: its base observes as it does");
    }
    const bool greedy_ok = info.allocates && !p.base->is_scoring();
    if (p.base->is_scoring() ? p.base->base != nullptr
                             : p.base->kind != SelectorKind::TopK && !greedy_ok) {
      throw error_at(where + ".base",
                     p.base->method_name() + " has no scores of its own to rescore (" +
                         (p.base->is_scoring() ? "a wrapper" : "the greedy admission") + ")");
    }
    if (!p.base->is_scoring() && p.base->granularity != Granularity::KvHead) {
      throw error_at(where + ".base.granularity", info.name + " rescores per KV head: set kv_head");
    }
    if (p.base->budget.budget != p.budget.budget) {
      throw error_at(where + ".base.budget",
                     strfmt("%lld differs from the wrapper's budget %lld, which decides",
                            (long long)p.base->budget.budget, (long long)p.budget.budget));
    }
  } else if (p.base) {
    throw error_at(where + ".base", info.name + " is not a wrapper: it takes no base");
  }
  for (const char* kept : {"n_sink", "window"}) {  // what the method always keeps
    const auto it = p.params.find(kept);
    if (it != p.params.end() && p.budget.budget < it->second) {  // equal: those alone are kept
      throw error_at(
          where + ".budget",
          strfmt("%lld does not hold the %g %s it always keeps", (long long)p.budget.budget,
                 it->second, std::string(kept) == "n_sink" ? "sinks" : "window tokens"));
    }
  }
}

}  // namespace

void Policy::validate(const std::string& where) const {
  if (is_scoring()) return validate_scoring(*this, where);
  validate_budget(budget, where);
  if (kernel < 1 || kernel % 2 == 0) {
    throw error_at(where + ".kernel", strfmt("must be odd and >= 1, got %lld", (long long)kernel));
  }
  if (candidate_factor < 1) {
    throw error_at(where + ".candidate_factor",
                   strfmt("must be >= 1, got %lld", (long long)candidate_factor));
  }
  if (!terms.mean && !terms.dispersion) {
    throw error_at(where + ".terms", "mean and dispersion are both off: the score would be 0");
  }
  if (terms.dispersion && budget.window < 2) {
    throw error_at(where + ".window", "the dispersion term needs at least 2 window queries");
  }
  if (terms.corr && kind != SelectorKind::Greedy) {
    throw error_at(where + ".terms.corr", "the corr term needs kind \"greedy\"");
  }
}

double Policy::lambda1_at(int64_t layer, int64_t num_layers) const {
  return terms.dispersion ? lambda1.lambda_at(layer, num_layers) : 0.0;
}

double Policy::lambda2_at(int64_t layer, int64_t num_layers) const {
  return terms.corr && kind == SelectorKind::Greedy ? lambda2.lambda_at(layer, num_layers) : 0.0;
}

bool Policy::operator==(const Policy& o) const {
  const bool same_base = base && o.base ? *base == *o.base : base == o.base;
  return name == o.name && method == o.method && params == o.params && same_base &&
         kind == o.kind && budget.schedule == o.budget.schedule &&
         budget.budget == o.budget.budget && budget.window == o.budget.window &&
         budget.beta == o.budget.beta && budget.redistribute == o.budget.redistribute &&
         kernel == o.kernel && pooling == o.pooling && granularity == o.granularity &&
         group_reduce == o.group_reduce && terms == o.terms && lambda1 == o.lambda1 &&
         lambda2 == o.lambda2 && candidate_factor == o.candidate_factor && observe == o.observe;
}

Policy snapkv_policy(int64_t budget) {
  Policy p;
  p.name = "snapkv";
  p.kind = SelectorKind::TopK;
  p.budget.schedule = Schedule::Uniform;
  p.budget.budget = budget;
  p.terms = {true, false, false};
  p.validate();
  return p;
}

Policy pyramidkv_policy(int64_t budget) {
  Policy p = snapkv_policy(budget);
  p.name = "pyramidkv";
  p.budget.schedule = Schedule::Pyramid;
  return p;
}

Policy global_policy(int64_t budget, double lambda1, double lambda2) {
  Policy p = pyramidkv_policy(budget);
  p.name = "global";
  p.kind = SelectorKind::Greedy;
  p.terms = {true, true, true};
  p.lambda1 = Profile::global_lambda(lambda1);
  p.lambda2 = Profile::global_lambda(lambda2);
  p.validate();
  return p;
}

Policy shorthand_policy(int64_t budget, const std::string& profile, std::optional<double> lambda1,
                        std::optional<double> lambda2) {
  if (profile == "global") {
    return global_policy(budget, lambda1.value_or(0.0), lambda2.value_or(-0.15));
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

namespace {

json profile_to_json(const Profile& profile) {
  return json{{"profile", profile_kind_name(profile.kind())}, {"a", profile.params()}};
}

Profile profile_from_json(const json& value, const std::string& where) {
  JsonFields r(value, where);
  const ProfileKind kind = parse_profile_kind(r.text("profile", "", true), r.at("profile"));
  const json& a = r.require("a");
  if (!a.is_array()) throw error_at(r.at("a"), "expected an array of numbers, got " + a.dump());
  std::vector<double> params;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number()) {
      throw error_at(strfmt("%s[%zu]", r.at("a").c_str(), i),
                     "expected a number, got " + a[i].dump());
    }
    params.push_back(a[i].get<double>());
  }
  r.check_all_read();
  return Profile::make(kind, std::move(params), r.at("a"));
}

}  // namespace

json policy_to_json(const Policy& p) {
  if (p.is_scoring()) {
    json out{{"method", p.method}, {"budget", p.budget.budget}};
    if (p.name != p.method) out["name"] = p.name;
    for (const MethodParam& param : find_method(p.method, "method").info().params) {
      const double v = p.params.at(param.name);
      if (param.type == MethodParam::Type::Integer)
        out[param.name] = static_cast<int64_t>(v);
      else if (param.type == MethodParam::Type::Boolean)
        out[param.name] = v != 0.0;
      else if (param.type == MethodParam::Type::Text)
        out[param.name] = param.choices.at(static_cast<size_t>(v));
      else
        out[param.name] = v;
    }
    if (p.base) out["base"] = policy_to_json(*p.base);
    if (p.observe != Observe::PromptEnd) out["observe"] = observe_name(p.observe);
    return out;
  }
  json out{{"name", p.name},
           {"kind", selector_kind_name(p.kind)},
           {"budget", p.budget.budget},
           {"window", p.budget.window},
           {"schedule", schedule_name(p.budget.schedule)},
           {"beta", p.budget.beta},
           {"redistribute", p.budget.redistribute},
           {"kernel", p.kernel},
           {"pooling", pooling_name(p.pooling)},
           {"granularity", granularity_name(p.granularity)},
           {"group_reduce", group_reduce_name(p.group_reduce)},
           {"terms",
            {{"mean", p.terms.mean}, {"dispersion", p.terms.dispersion}, {"corr", p.terms.corr}}},
           {"lambda1", profile_to_json(p.lambda1)},
           {"lambda2", profile_to_json(p.lambda2)},
           {"candidate_factor", p.candidate_factor}};
  // The default protocol is left out, so that every recorded policy keeps its exact JSON.
  if (p.observe != Observe::PromptEnd) out["observe"] = observe_name(p.observe);
  return out;
}

namespace {

Policy legacy_policy_from_json(const json& value, const std::string& where);

Observe read_observe(JsonFields& r) {
  if (!r.find("observe")) return Observe::PromptEnd;
  return parse_enum(r.text("observe", "", true), r.at("observe"), "observation protocol",
                    kObserves);
}

// The method dialect: {"method": NAME, "budget": B, ...the method's parameters}.
Policy method_policy_from_json(const json& value, const std::string& where) {
  const std::string method =
      value.at("method").is_string() ? value.at("method").get<std::string>() : std::string();
  if (method.empty()) {
    throw error_at(where + ".method", "expected a method name, got " + value.at("method").dump());
  }
  const MethodInfo& info = find_method(method, where + ".method").info();
  if (value.contains("kind")) {
    throw error_at(where + ".kind", "not a field of the method dialect: \"method\" decides it");
  }
  if (info.window_statistics) {
    // The kind/schedule dialect under a method's name: its defaults, then the given fields.
    json legacy = value;
    legacy.erase("method");
    if (!legacy.contains("name")) legacy["name"] = method;
    legacy["kind"] = method == "diverse" ? "greedy" : "topk";
    if (!legacy.contains("schedule"))
      legacy["schedule"] = method == "snapkv" ? "uniform" : "pyramid";
    if (method == "diverse") {  // the Global setting's lambdas, as global_policy has them
      const json global = policy_to_json(global_policy(64));
      if (!legacy.contains("lambda1")) legacy["lambda1"] = global["lambda1"];
      if (!legacy.contains("lambda2")) legacy["lambda2"] = global["lambda2"];
    } else if (!legacy.contains("terms")) {
      legacy["terms"] = {{"mean", true}, {"dispersion", false}, {"corr", false}};
    }
    return legacy_policy_from_json(legacy, where);
  }
  JsonFields r(value, where);
  r.text("method", "", true);
  Policy p;
  p.method = method;
  p.name = r.text("name", method);
  p.budget.budget = r.integer("budget", std::nullopt, 1);
  p.budget.window = 0;
  p.granularity = Granularity::KvHead;
  const MethodParams defaults = default_params(info);
  for (const MethodParam& param : info.params) {
    const char* field = param.name.c_str();
    const double fallback = defaults.at(param.name);
    switch (param.type) {
      case MethodParam::Type::Integer:
        p.params[param.name] = double(r.integer(field, static_cast<int64_t>(fallback)));
        break;
      case MethodParam::Type::Boolean:
        p.params[param.name] = r.boolean(field, fallback != 0.0) ? 1.0 : 0.0;
        break;
      case MethodParam::Type::Text: {
        const std::string text = r.text(field, param.choices.at(static_cast<size_t>(fallback)));
        const auto it = std::find(param.choices.begin(), param.choices.end(), text);
        if (it == param.choices.end()) {
          std::string names;
          for (const std::string& c : param.choices) names += (names.empty() ? "" : ", ") + c;
          throw error_at(where + "." + param.name,
                         "expected one of " + names + ", got '" + text + "'");
        }
        p.params[param.name] = double(it - param.choices.begin());
        break;
      }
      default:
        p.params[param.name] = r.number(field, fallback);
    }
  }
  p.observe = read_observe(r);
  if (info.wrapper && r.has("base")) {
    json base = *r.object("base");
    if (base.is_object() && !base.contains("budget")) base["budget"] = p.budget.budget;
    p.base = std::make_shared<const Policy>(policy_from_json(base, where + ".base"));
  }
  r.check_all_read();
  p.validate(where);
  return p;
}

}  // namespace

Policy policy_from_json(const json& value, const std::string& where) {
  if (value.is_object() && value.contains("method")) return method_policy_from_json(value, where);
  return legacy_policy_from_json(value, where);
}

namespace {

Policy legacy_policy_from_json(const json& value, const std::string& where) {
  JsonFields r(value, where);
  Policy p;  // what the JSON leaves out keeps the struct's default
  p.name = r.text("name");
  p.kind = parse_enum(r.text("kind", "", true), r.at("kind"), "selector kind", kSelectorKinds);
  p.budget.budget = r.integer("budget", std::nullopt);
  p.budget.window = r.integer("window", p.budget.window);
  p.budget.schedule = parse_schedule(r.text("schedule", "", true), r.at("schedule"));
  p.budget.beta = r.integer("beta", p.budget.beta);
  p.budget.redistribute = r.boolean("redistribute", p.budget.redistribute);
  p.kernel = r.integer("kernel", p.kernel);
  if (r.find("pooling")) p.pooling = parse_enum(r.text("pooling", "", true), r.at("pooling"), "pooling", kPoolings);
  if (r.find("granularity"))
    p.granularity = parse_enum(r.text("granularity", "", true), r.at("granularity"), "granularity", kGranularities);
  if (r.find("group_reduce"))
    p.group_reduce = parse_enum(r.text("group_reduce", "", true), r.at("group_reduce"), "group reduction", kGroupReduces);
  p.terms = {true, true, p.kind == SelectorKind::Greedy};
  if (const json* terms = r.find("terms")) {
    JsonFields t(*terms, r.at("terms"));
    p.terms.mean = t.boolean("mean", p.terms.mean);
    p.terms.dispersion = t.boolean("dispersion", p.terms.dispersion);
    p.terms.corr = t.boolean("corr", p.terms.corr);
    t.check_all_read();
  }
  if (const json* l1 = r.find("lambda1")) p.lambda1 = profile_from_json(*l1, r.at("lambda1"));
  if (const json* l2 = r.find("lambda2")) p.lambda2 = profile_from_json(*l2, r.at("lambda2"));
  p.candidate_factor = r.integer("candidate_factor", p.candidate_factor);
  p.observe = read_observe(r);
  r.check_all_read();
  p.validate(where);
  return p;
}

}  // namespace

Policy load_policy(const std::string& path) {
  return policy_from_json(read_json_file(path, "the policy file"), path + ": policy");
}

std::string policy_to_string(const Policy& policy) { return policy_to_json(policy).dump(); }

}  // namespace kvs::evict
