#include "experiment/spec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/files.h"
#include "core/json_fields.h"
#include "core/strfmt.h"
#include "evict/budget.h"
#include "evict/window_params.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "model/config.h"
#include "search/policy_family.h"
#include "search/run.h"

namespace kvs::experiment {

namespace {

using nlohmann::json;

// The spec's fields: JsonFields plus the lists a spec holds.
class Fields : public JsonFields {
 public:
  using JsonFields::JsonFields;

  std::optional<double> optional_number(const char* key) {
    if (!has(key)) return std::nullopt;
    return number(key, 0);
  }
  std::vector<std::string> texts(const char* key, bool required = false) {
    std::vector<std::string> out;
    for (const json& item : array(key, required)) {
      if (!item.is_string()) throw error_at(at(key), "expected an array of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  std::vector<int64_t> budgets(const char* key, bool required = false) {
    const int64_t window = evict::BudgetSpec{}.window;  // the window every policy of a spec has
    std::vector<int64_t> out;
    for (const json& item : array(key, required)) {
      if (!item.is_number_integer() || item.get<int64_t>() <= window)
        throw error_at(at(key), strfmt("expected budgets as integers above the window of %lld tokens",
                                       static_cast<long long>(window)));
      out.push_back(item.get<int64_t>());
    }
    return out;
  }
};

const std::set<std::string> kProfiles = {"full", "baseline", "pyramid", "global", "segments", "curve"};

evict::ScoreTerms parse_terms(const json& object, const std::string& where) {
  Fields f(object, where);
  evict::ScoreTerms terms;
  terms.mean = f.boolean("mean", true);
  terms.dispersion = f.boolean("dispersion", true);
  terms.corr = f.boolean("corr", true);
  f.check_all_read();
  return terms;
}

// A list of the spec's datasets (a subset, in any order); empty when the field is absent.
std::vector<std::string> dataset_subset(Fields& f, const std::vector<std::string>& all) {
  const std::vector<std::string> out = f.texts("datasets");
  if (f.has("datasets") && out.empty()) throw error_at(f.at("datasets"), "names no datasets");
  for (const auto& d : out)
    if (std::find(all.begin(), all.end(), d) == all.end())
      throw error_at(f.at("datasets"), "'" + d + "' is not one of the spec's datasets");
  return out;
}

MethodSpec parse_method(const json& object, const std::string& where, const ExperimentSpec& spec) {
  Fields f(object, where);
  MethodSpec m;
  m.name = f.text("name", "", true);
  m.transfer = f.text("transfer");
  const json* policy = f.object("policy");
  m.family = policy ? "policy" : f.text("profile", "", m.transfer.empty());
  for (const char* key : {"profile", "transfer", "segments", "evals", "step", "tau", "lambda1",
                          "lambda2", "terms", "schedule"}) {
    if (policy && f.has(key))
      throw error_at(f.at(key), "a method given as a policy sets everything in \"policy\": leave " +
                                    std::string(key) + " out");
  }
  if (!m.transfer.empty() && f.has("profile"))
    throw error_at(f.at("profile"), "a transfer evaluates its source's profile: leave profile out");
  if (m.transfer.empty() && !policy && !kProfiles.count(m.family))
    throw error_at(f.at("profile"), "'" + m.family +
                                        "' is not a profile (full, baseline, pyramid, global, segments, curve)");
  m.segments = static_cast<int>(f.integer("segments", 3, 1));
  if (f.has("segments") && m.family != "segments")
    throw error_at(f.at("segments"), "only the segments profile has segments");
  m.budgets = f.budgets("budgets");
  if (m.full_cache()) {
    for (const char* key : {"budgets", "schedule", "terms"})
      if (f.has(key)) throw error_at(f.at(key), "the full cache evicts nothing: leave it out");
    m.budgets = {kFullCacheBudget};
  }
  if (m.budgets.empty()) m.budgets = spec.budgets;
  if (policy) {
    // Checked at every budget it runs at (a budget may not hold what the method always keeps).
    // A decode-time policy's budgets are its targets (evict::policy_json_at_budget).
    for (int64_t budget : m.budgets)
      evict::policy_from_json(evict::policy_json_at_budget(*policy, budget, f.at("policy")),
                              f.at("policy"));
    m.policy_json = policy->dump();
    m.decode_time = policy->contains("decoding");
  }
  m.datasets = dataset_subset(f, spec.datasets);
  if (!m.transfer.empty() && !m.datasets.empty())
    throw error_at(f.at("datasets"), "a transfer runs on its source's datasets: leave datasets out");
  m.evals = static_cast<int>(f.integer("evals", 14, 1));
  if (f.has("dev_limit")) {
    if (!m.searched())
      throw error_at(f.at("dev_limit"),
                     "only a search (profile segments or curve) scores dev questions of its own: "
                     "leave dev_limit out");
    m.dev_limit = f.integer("dev_limit", 0, 0);
  }
  m.step = f.number("step", 0.3);
  m.tau = f.number("tau", 0.1);
  m.lambda1 = f.optional_number("lambda1");
  m.lambda2 = f.optional_number("lambda2");
  if ((m.lambda1 || m.lambda2) && m.family != "global")
    throw error_at(where, "lambda1/lambda2 fix the coefficients of the global profile only");
  if (const json* terms = f.object("terms")) m.terms = parse_terms(*terms, f.at("terms"));
  if (f.has("schedule")) {
    if (!m.transfer.empty())
      throw error_at(f.at("schedule"), "a transfer evaluates its source's schedule: leave schedule out");
    m.schedule = evict::parse_schedule(f.text("schedule"), f.at("schedule"));
  }
  if (const json* allocation = f.object("allocation")) {
    if (policy || !m.transfer.empty() || m.full_cache())
      throw error_at(f.at("allocation"),
                     "only a profile's policy runs under an allocation (a policy method wraps "
                     "itself; a transfer keeps its source's)");
    m.allocation_json = allocation->dump();
    // Checked at every budget, on the family's warm start.
    for (int64_t budget : m.budgets) {
      const search::PolicyFamily family(m.family, m.segments, budget);
      evict::Policy base = family.policy(family.warm_start());
      if (m.schedule)
        base.params.set(evict::window_params().schedule,
                        std::string(evict::schedule_name(*m.schedule)));
      search::allocated_policy(base, m.allocation_json, f.at("allocation"));
    }
  }
  f.check_all_read();
  return m;
}

std::map<std::string, std::map<std::string, double>> parse_reference(const json* object,
                                                                     const std::string& where) {
  std::map<std::string, std::map<std::string, double>> out;
  if (!object) return out;
  for (const auto& row : object->items()) {
    if (!row.value().is_object()) throw error_at(where + "." + row.key(), "expected {column: number}");
    for (const auto& cell : row.value().items()) {
      if (!cell.value().is_number())
        throw error_at(where + "." + row.key() + "." + cell.key(), "expected a number");
      out[row.key()][cell.key()] = cell.value().get<double>();
    }
  }
  return out;
}

void check_methods_exist(const ExperimentSpec& spec, const std::vector<std::string>& names,
                         const std::string& where) {
  if (names.empty()) throw error_at(where, "names no methods");
  for (const auto& n : names)
    if (std::none_of(spec.methods.begin(), spec.methods.end(), [&](const MethodSpec& m) { return m.name == n; }))
      throw error_at(where, "'" + n + "' is not one of the spec's methods");
}

// The name, kind (one of `kinds`) and title that every table and figure starts with.
template <class Item>
void read_heading(Fields& f, Item& item, const std::string& what, const std::vector<std::string>& kinds) {
  item.name = f.text("name", "", true);
  item.kind = f.text("kind", "", true);
  if (std::find(kinds.begin(), kinds.end(), item.kind) == kinds.end())
    throw error_at(f.at("kind"), "'" + item.kind + "' is not a " + what + " kind (" + join(kinds, ", ") + ")");
  item.title = f.text("title", item.name);
}

TableSpec parse_table(const json& object, const std::string& where, const ExperimentSpec& spec) {
  Fields f(object, where);
  TableSpec t;
  read_heading(f, t, "table", {"datasets", "budgets", "methods"});
  t.methods = f.texts("methods", true);
  check_methods_exist(spec, t.methods, f.at("methods"));
  t.datasets = dataset_subset(f, spec.datasets);
  if (t.datasets.empty()) t.datasets = spec.datasets;
  t.budget = f.integer("budget", 0, 0);
  t.baseline = f.text("baseline", "", t.kind != "datasets");
  if (!t.baseline.empty()) check_methods_exist(spec, {t.baseline}, f.at("baseline"));
  if (t.kind != "budgets" && t.budget == 0) throw error_at(f.at("budget"), "missing (required)");
  t.reference = parse_reference(f.object("reference"), f.at("reference"));
  f.check_all_read();
  return t;
}

FigureSpec parse_figure(const json& object, const std::string& where, const ExperimentSpec& spec) {
  Fields f(object, where);
  FigureSpec g;
  read_heading(f, g, "figure", {"profiles", "trajectory", "budgets"});
  g.dataset = f.text("dataset", "", true);
  if (std::find(spec.datasets.begin(), spec.datasets.end(), g.dataset) == spec.datasets.end())
    throw error_at(f.at("dataset"), "'" + g.dataset + "' is not one of the spec's datasets");
  g.methods = f.texts("methods", true);
  check_methods_exist(spec, g.methods, f.at("methods"));
  g.budget = f.integer("budget", 0, 0);
  if (g.kind != "budgets" && g.budget == 0) throw error_at(f.at("budget"), "missing (required)");
  f.check_all_read();
  return g;
}

SlurmResources parse_slurm(const json* object, const std::string& where) {
  SlurmResources r;
  if (!object) return r;
  Fields f(*object, where);
  r.partition = f.text("partition");
  r.time = f.text("time");
  r.mem = f.text("mem");
  r.gpus = static_cast<int>(f.integer("gpus", 0, 0));
  r.cpus = static_cast<int>(f.integer("cpus", 0, 0));
  f.check_all_read();
  return r;
}

// Unique names; a transfer takes its source's profile.
void check_methods(ExperimentSpec& spec) {
  std::set<std::string> names, slugs;
  for (MethodSpec& m : spec.methods) {
    const std::string where = spec.path + ": method '" + m.name + "'";
    if (!names.insert(m.name).second) throw Error(where + " appears twice");
    if (!slugs.insert(slug(m.name)).second)
      throw Error(where + ": its file name '" + slug(m.name) + "' clashes with another method's");
    if (m.transfer.empty()) continue;
    const MethodSpec& source = spec.method(m.transfer);
    if (!source.searched())
      throw Error(where + ": transfers '" + m.transfer + "', which is not a search");
    if (source.budgets.size() != 1)
      throw Error(where + ": transfers '" + m.transfer + "', which must search at exactly one budget");
    m.family = source.family;
    m.segments = source.segments;
    m.datasets = source.datasets;
  }
}

}  // namespace

bool MethodSpec::runs_on(const std::string& dataset) const {
  return datasets.empty() || std::find(datasets.begin(), datasets.end(), dataset) != datasets.end();
}

const MethodSpec& ExperimentSpec::method(const std::string& method_name) const {
  for (const MethodSpec& m : methods)
    if (m.name == method_name) return m;
  throw error_at(path, "no method named '" + method_name + "'");
}

std::string slug(const std::string& name) {
  std::string out;
  for (const unsigned char c : name) {
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

ExperimentSpec load_spec(const std::string& path, const std::string& longbench_dir) {
  const json root = read_json_file(path, "the experiment spec");
  ExperimentSpec spec;
  spec.path = path;
  Fields f(root, path);
  spec.name = f.text("name", "", true);
  if (spec.name.empty() || spec.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    throw error_at(f.at("name"), "'" + spec.name + "' must be lower-case letters, digits, '_' and '-'");
  spec.description = f.text("description");
  spec.model = f.text("model");
  spec.longbench = f.text("longbench");
  spec.model_type = f.text("model_type");
  spec.datasets = f.texts("datasets", true);
  if (spec.datasets.empty()) throw error_at(f.at("datasets"), "names no datasets");
  const std::string data_dir = longbench_dir.empty() ? spec.longbench : longbench_dir;
  for (const auto& d : spec.datasets) {
    try {
      if (!longbench::is_english_dataset(d) && !data_dir.empty() &&
          std::filesystem::exists(longbench::metric_config_path(data_dir)))
        longbench::load_config(data_dir);  // registers the directory's own datasets
      longbench::dataset_info(d);
    } catch (const Error& e) {
      throw error_at(f.at("datasets"), e.what());
    }
  }
  spec.budgets = f.budgets("budgets", true);
  spec.split_seed = static_cast<uint64_t>(f.integer("split_seed", 42, 0));
  spec.dev_limit = f.integer("dev_limit", 0, 0);
  spec.test_limit = f.integer("test_limit", 0, 0);
  spec.max_length = f.integer("max_length", 0, 0);
  spec.chat_template = f.text("chat_template", "auto");
  try {
    spec.thinking = longbench::parse_thinking(f.text("thinking", "keep"));
  } catch (const Error& e) {
    throw error_at(f.at("thinking"), e.what());
  }
  spec.speculation = static_cast<int>(f.integer("speculation", 12, 1));
  const json& methods = f.array("methods", true);
  for (size_t i = 0; i < methods.size(); ++i)
    spec.methods.push_back(parse_method(methods[i], f.at("methods[" + std::to_string(i) + "]"), spec));
  if (spec.methods.empty()) throw error_at(f.at("methods"), "names no methods");
  check_methods(spec);
  const json& tables = f.array("tables", false);
  for (size_t i = 0; i < tables.size(); ++i)
    spec.tables.push_back(parse_table(tables[i], f.at("tables[" + std::to_string(i) + "]"), spec));
  const json& figures = f.array("figures", false);
  for (size_t i = 0; i < figures.size(); ++i)
    spec.figures.push_back(parse_figure(figures[i], f.at("figures[" + std::to_string(i) + "]"), spec));
  spec.slurm = parse_slurm(f.object("slurm"), f.at("slurm"));
  f.check_all_read();

  json identity = root;
  for (const char* key : {"model", "longbench", "description", "tables", "figures", "slurm"})
    identity.erase(key);
  spec.identity_json = identity.dump();
  return spec;
}

void check_model_type(const ExperimentSpec& spec, const std::string& model_arg) {
  if (spec.model_type.empty()) return;
  const std::string found = model::load_model_config(model_arg).model_type;
  if (found != spec.model_type)
    throw error_at(spec.path, "model_type: the spec is for '" + spec.model_type + "' models, but " +
                                  model_arg + " is a '" + found + "' model (pass the right --model)");
}

}  // namespace kvs::experiment
