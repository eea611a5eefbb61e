#include "evict/method.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "evict/topk_select.h"

namespace kvs::evict {

namespace {

std::vector<const Method*>& registry() {
  static std::vector<const Method*> methods;
  return methods;
}

}  // namespace

at::Tensor Method::scores(const LayerView&, const MethodParams&) const {
  throw Error("method " + info().name + " is scored from the window statistics, not by scores()");
}

at::Tensor Method::select(const LayerView& view, const MethodParams& params) const {
  return select_topk(scores(view, params).to(at::kFloat).contiguous(), view.budget);
}

Method::LayerScores Method::layer_scores(const LayerView&, const MethodParams&) const {
  throw Error("method " + info().name + " does not move its budget between layers");
}

std::vector<int64_t> Method::allocate_layers(const std::vector<double>&, int64_t, int64_t,
                                             const MethodParams&) const {
  throw Error("method " + info().name + " does not move its budget between layers");
}

int64_t Method::layer_budget_cap(int64_t n, int64_t, int64_t, const MethodParams&) const {
  return n;
}

MethodInfo budget_free(MethodInfo info) {
  info.budget_free = true;
  return info;
}

MethodRegistration::MethodRegistration(const Method& method) { registry().push_back(&method); }

std::vector<const Method*> registered_methods() {
  std::vector<const Method*> methods = registry();
  std::sort(methods.begin(), methods.end(),
            [](const Method* a, const Method* b) { return a->info().name < b->info().name; });
  return methods;
}

const Method& find_method(const std::string& name, const std::string& where) {
  // Called per layer and policy during prefill: a plain scan, the sorted list only for the error.
  for (const Method* m : registry())
    if (m->info().name == name) return *m;
  std::string names;
  for (const Method* m : registered_methods())
    names += (names.empty() ? "" : ", ") + m->info().name;
  throw error_at(where, "unknown method '" + name + "' (registered: " + names + ")");
}

MethodInfo method_info(std::string name, std::string summary, std::string paper, std::string code,
                       std::string kvpress, std::string budget, std::string checked,
                       std::vector<MethodParam> params, uint32_t needs, bool window_statistics,
                       bool wrapper) {
  return MethodInfo{std::move(name),
                    std::move(summary),
                    std::move(paper),
                    std::move(code),
                    std::move(kvpress),
                    std::move(budget),
                    std::move(checked),
                    std::move(params),
                    needs,
                    window_statistics,
                    wrapper};
}

MethodParam integer_param(std::string name, int64_t default_value, int64_t minimum,
                          std::string doc) {
  return {std::move(name), MethodParam::Type::Integer, std::to_string(default_value),
          double(minimum), std::move(doc)};
}

MethodParam number_param(std::string name, double default_value, double minimum, std::string doc) {
  return {std::move(name), MethodParam::Type::Number, nlohmann::json(default_value).dump(), minimum,
          std::move(doc)};
}

MethodParam number_param(std::string name, double default_value, double minimum, double maximum,
                         std::string doc) {
  MethodParam p = number_param(std::move(name), default_value, minimum, std::move(doc));
  p.maximum = maximum;
  return p;
}

MethodParam choice_param(std::string name, std::string default_value,
                         std::vector<std::string> choices, std::string doc) {
  MethodParam p{std::move(name), MethodParam::Type::Text, nlohmann::json(default_value).dump(), 0,
                std::move(doc)};
  p.choices = std::move(choices);
  return p;
}

MethodParam boolean_param(std::string name, bool default_value, std::string doc) {
  return {std::move(name), MethodParam::Type::Boolean, default_value ? "true" : "false", 0,
          std::move(doc)};
}

MethodParams default_params(const MethodInfo& info) {
  MethodParams params;
  for (const MethodParam& p : info.params) {
    if (p.type == MethodParam::Type::Integer || p.type == MethodParam::Type::Number)
      params[p.name] = std::stod(p.default_json);
    else if (p.type == MethodParam::Type::Boolean)
      params[p.name] = p.default_json == "true" ? 1.0 : 0.0;
    else if (p.type == MethodParam::Type::Text && !p.choices.empty()) {
      const std::string value = nlohmann::json::parse(p.default_json).get<std::string>();
      params[p.name] =
          double(std::find(p.choices.begin(), p.choices.end(), value) - p.choices.begin());
    }
  }
  return params;
}

nlohmann::json default_policy_json(const MethodInfo& info, int64_t budget) {
  nlohmann::json policy{{"method", info.name}, {"budget", budget}};
  if (info.wrapper) {
    policy["base"] = {{"method", "snapkv"},
                      {"window", 64},
                      {"kernel", 5},
                      {"pooling", "avg"},
                      {"granularity", "kv_head"}};
  }
  return policy;
}

uint32_t policy_needs(const Policy& policy) {
  if (!policy.is_scoring()) return kNeedsWindowQueries;
  const uint32_t own = find_method(policy.method, "method").info().needs;
  return policy.base ? own | policy_needs(*policy.base) : own;
}

namespace {

const char* param_type_name(MethodParam::Type type) {
  switch (type) {
    case MethodParam::Type::Integer:
      return "integer";
    case MethodParam::Type::Number:
      return "number";
    case MethodParam::Type::Boolean:
      return "boolean";
    case MethodParam::Type::Text:
      return "text";
    case MethodParam::Type::Profile:
      return "profile";
  }
  return "?";
}

nlohmann::json needs_to_json(uint32_t needs) {
  nlohmann::json out = nlohmann::json::array({"keys"});
  if (needs & kNeedsWindowQueries) out.push_back("window queries");
  if (needs & kNeedsLastQuery) out.push_back("last query");
  if (needs & kNeedsValues) out.push_back("values");
  if (needs & kNeedsColumnSums) out.push_back("attention column sums");
  if (needs & kNeedsPreRopeQueries) out.push_back("pre-RoPE queries");
  if (needs & kNeedsOutputProjection) out.push_back("output projection");
  return out;
}

// "arXiv <id>" for an arXiv id, else the text as given.
std::string paper_reference(const MethodInfo& i) {
  const bool arxiv = !i.paper.empty() && i.paper.find(' ') == std::string::npos;
  return arxiv ? "arXiv " + i.paper : i.paper;
}

}  // namespace

nlohmann::json methods_to_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const Method* m : registered_methods()) {
    const MethodInfo& i = m->info();
    nlohmann::json params = nlohmann::json::array();
    for (const MethodParam& p : i.params) {
      nlohmann::json param{{"name", p.name},
                           {"type", param_type_name(p.type)},
                           {"default", nlohmann::json::parse(p.default_json)},
                           {"doc", p.doc}};
      if (!p.choices.empty()) param["choices"] = p.choices;
      params.push_back(std::move(param));
    }
    out.push_back({{"name", i.name},
                   {"summary", i.summary},
                   {"paper", paper_reference(i)},
                   {"code", i.code},
                   {"kvpress", i.kvpress},
                   {"budget", "B = " + i.budget + ", per cache head and layer"},
                   {"checked", i.checked},
                   {"needs", needs_to_json(i.needs)},
                   {"wrapper", i.wrapper},
                   {"ragged", i.ragged},
                   {"layer_budgets", i.layer_budgets},
                   {"budget_free", i.budget_free},
                   {"params", params}});
  }
  return out;
}

std::string methods_markdown() {
  std::string out = "| method | reference | what B counts | checked against |\n|---|---|---|---|\n";
  for (const Method* m : registered_methods()) {
    const MethodInfo& i = m->info();
    const std::string paper = paper_reference(i);
    const std::string oracle = i.kvpress.empty()
                                   ? "`" + i.checked + "`"
                                   : "kvpress " + i.kvpress + " (`" + i.checked + "`)";
    out += "| `" + i.name + "` | " + paper + " | " + i.budget + " | " + oracle + " |\n";
  }
  return out;
}

}  // namespace kvs::evict
