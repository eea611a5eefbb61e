#include "evict/policy.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/log.h"

namespace kvs::evict {

using nlohmann::json;

const char* selector_kind_name(SelectorKind kind) {
  return kind == SelectorKind::Greedy ? "greedy" : "topk";
}
const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::Max:
      return "max";
    case Pooling::Avg:
      return "avg";
    case Pooling::None:
      return "none";
  }
  return "?";
}
const char* granularity_name(Granularity granularity) {
  return granularity == Granularity::KvHead ? "kv_head" : "query_head";
}
const char* group_reduce_name(GroupReduce reduce) {
  return reduce == GroupReduce::Max ? "max" : "mean";
}

void Policy::validate(const std::string& where) const {
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
  return name == o.name && kind == o.kind && budget.schedule == o.budget.schedule &&
         budget.budget == o.budget.budget && budget.window == o.budget.window &&
         budget.beta == o.budget.beta && budget.redistribute == o.budget.redistribute &&
         kernel == o.kernel && pooling == o.pooling && granularity == o.granularity &&
         group_reduce == o.group_reduce && terms == o.terms && lambda1 == o.lambda1 &&
         lambda2 == o.lambda2 && candidate_factor == o.candidate_factor;
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

// Reads the fields of one JSON object, remembering which were used so that leftovers (typos,
// fields of another version) can be reported.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string where) : object_(object), where_(std::move(where)) {
    if (!object_.is_object()) throw error_at(where_, "expected a JSON object");
  }

  const json* find(const char* name) {
    used_.emplace_back(name);
    const auto it = object_.find(name);
    return it == object_.end() ? nullptr : &*it;
  }
  const json& require(const char* name) {
    const json* value = find(name);
    if (!value) throw error_at(where_, std::string("missing required field \"") + name + "\"");
    return *value;
  }
  std::string path(const char* name) const { return where_ + "." + name; }

  int64_t integer(const char* name, std::optional<int64_t> fallback) {
    const json* value = fallback ? find(name) : &require(name);
    if (!value) return *fallback;
    if (!value->is_number_integer())
      throw error_at(path(name), "expected an integer, got " + value->dump());
    return value->get<int64_t>();
  }
  bool boolean(const char* name, bool fallback) {
    const json* value = find(name);
    if (!value) return fallback;
    if (!value->is_boolean())
      throw error_at(path(name), "expected true or false, got " + value->dump());
    return value->get<bool>();
  }
  std::string string(const char* name, std::optional<std::string> fallback) {
    const json* value = fallback ? find(name) : &require(name);
    if (!value) return *fallback;
    if (!value->is_string()) throw error_at(path(name), "expected a string, got " + value->dump());
    return value->get<std::string>();
  }

  void reject_unknown() const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      if (std::find(used_.begin(), used_.end(), it.key()) == used_.end()) {
        throw error_at(where_ + "." + it.key(), "unknown field");
      }
    }
  }

 private:
  const json& object_;
  std::string where_;
  std::vector<std::string> used_;
};

template <typename Enum, size_t N>
Enum parse_enum(const std::string& value, const std::string& where,
                const std::pair<const char*, Enum> (&choices)[N]) {
  std::string names;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  throw error_at(where, "unknown value \"" + value + "\" (expected one of " + names + ")");
}

Profile profile_from_json(const json& value, const std::string& where) {
  ObjectReader r(value, where);
  const ProfileKind kind = parse_profile_kind(r.string("profile", std::nullopt), r.path("profile"));
  const json& a = r.require("a");
  if (!a.is_array()) throw error_at(r.path("a"), "expected an array of numbers, got " + a.dump());
  std::vector<double> params;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number()) {
      throw error_at(strfmt("%s[%zu]", r.path("a").c_str(), i),
                     "expected a number, got " + a[i].dump());
    }
    params.push_back(a[i].get<double>());
  }
  r.reject_unknown();
  return Profile::make(kind, std::move(params), r.path("a"));
}

}  // namespace

json policy_to_json(const Policy& p) {
  return json{
      {"name", p.name},
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
}

Policy policy_from_json(const json& value, const std::string& where) {
  static const std::pair<const char*, SelectorKind> kKinds[] = {{"topk", SelectorKind::TopK},
                                                                {"greedy", SelectorKind::Greedy}};
  static const std::pair<const char*, Pooling> kPoolings[] = {
      {"max", Pooling::Max}, {"avg", Pooling::Avg}, {"none", Pooling::None}};
  static const std::pair<const char*, Granularity> kGranularities[] = {
      {"query_head", Granularity::QueryHead}, {"kv_head", Granularity::KvHead}};
  static const std::pair<const char*, GroupReduce> kReduces[] = {{"mean", GroupReduce::Mean},
                                                                 {"max", GroupReduce::Max}};
  ObjectReader r(value, where);
  Policy p;
  p.name = r.string("name", "");
  p.kind = parse_enum(r.string("kind", std::nullopt), r.path("kind"), kKinds);
  p.budget.budget = r.integer("budget", std::nullopt);
  p.budget.window = r.integer("window", 8);
  p.budget.schedule = parse_schedule(r.string("schedule", std::nullopt), r.path("schedule"));
  p.budget.beta = r.integer("beta", 20);
  p.budget.redistribute = r.boolean("redistribute", false);
  p.kernel = r.integer("kernel", 7);
  p.pooling = parse_enum(r.string("pooling", "max"), r.path("pooling"), kPoolings);
  p.granularity =
      parse_enum(r.string("granularity", "query_head"), r.path("granularity"), kGranularities);
  p.group_reduce = parse_enum(r.string("group_reduce", "mean"), r.path("group_reduce"), kReduces);
  p.terms = {true, true, p.kind == SelectorKind::Greedy};
  if (const json* terms = r.find("terms")) {
    ObjectReader t(*terms, r.path("terms"));
    p.terms.mean = t.boolean("mean", p.terms.mean);
    p.terms.dispersion = t.boolean("dispersion", p.terms.dispersion);
    p.terms.corr = t.boolean("corr", p.terms.corr);
    t.reject_unknown();
  }
  if (const json* l1 = r.find("lambda1")) p.lambda1 = profile_from_json(*l1, r.path("lambda1"));
  if (const json* l2 = r.find("lambda2")) p.lambda2 = profile_from_json(*l2, r.path("lambda2"));
  p.candidate_factor = r.integer("candidate_factor", 4);
  r.reject_unknown();
  p.validate(where);
  return p;
}

Policy load_policy(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw error_at(path, "cannot open the policy file");
  std::stringstream text;
  text << in.rdbuf();
  json value;
  try {
    value = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw error_at(path, std::string("not valid JSON: ") + e.what());
  }
  return policy_from_json(value, path + ": policy");
}

std::string policy_to_string(const Policy& policy) { return policy_to_json(policy).dump(); }

}  // namespace kvs::evict
