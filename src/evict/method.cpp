#include "evict/method.h"

#include <ATen/ATen.h>

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

at::Tensor Method::select(const LayerView& view, const Params& params) const {
  return select_topk(scores(view, params).to(at::kFloat).contiguous(), view.budget);
}

at::Tensor Method::select_counts(const LayerView& view, const Params& params,
                                 const std::vector<int64_t>& counts) const {
  return select_counts_topk(scores(view, params).to(at::kFloat).contiguous(), counts);
}

int64_t Method::observation_window(const Params&) const {
  return info().needs & kNeedsLastQuery ? 1 : 0;
}

Method::LayerScores Method::layer_scores(const LayerView&, const Params&) const {
  throw Error("method " + info().name + " does not move its budget between layers");
}

std::vector<int64_t> Method::allocate_layers(const std::vector<double>&, int64_t, int64_t,
                                             const Params&) const {
  throw Error("method " + info().name + " does not move its budget between layers");
}

int64_t Method::layer_budget_cap(int64_t n, int64_t, int64_t, const Params&) const { return n; }

nlohmann::json Method::to_json(const std::string& label, int64_t budget,
                               const Params& params) const {
  nlohmann::json out{{"method", info().name}, {"budget", budget}};
  if (label != info().name) out["name"] = label;
  for (const auto& [name, value] : params.values()) out[name] = param_value_to_json(value);
  return out;
}

MethodRegistration::MethodRegistration(const Method& method) { registry().push_back(&method); }

std::vector<const Method*> registered_methods() {
  std::vector<const Method*> methods = registry();
  std::sort(methods.begin(), methods.end(),
            [](const Method* a, const Method* b) { return a->info().name < b->info().name; });
  return methods;
}

const Method& find_method(const std::string& name, const std::string& where) {
  for (const Method* m : registry())
    if (m->info().name == name) return *m;
  std::string names;
  for (const Method* m : registered_methods())
    names += (names.empty() ? "" : ", ") + m->info().name;
  throw error_at(where, "unknown method '" + name + "' (registered: " + names + ")");
}

at::Tensor select_counts_topk(const at::Tensor& scores, const std::vector<int64_t>& counts) {
  std::vector<at::Tensor> rows;
  for (size_t h = 0; h < counts.size(); ++h) {
    const int64_t count = std::clamp<int64_t>(counts[h], 0, scores.size(1));
    rows.push_back(select_topk(scores.narrow(0, int64_t(h), 1), count).reshape({-1}));
  }
  return pad_ragged(rows, scores.options());
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

namespace {

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
    for (const ParamSpec& p : i.params) params.push_back(param_spec_to_json(p));
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
