#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "evict/policy.h"
#include "experiment/job_kinds.h"
#include "experiment/plan.h"
#include "experiment/spec.h"
#include "experiment/spec_fixtures.h"
#include "model/config.h"
#include "search/run.h"

namespace kvs::experiment {
namespace {

using test_support::kSpecJson;
using test_support::write_text;

// The error load_spec throws for the spec with `field` set to `value` (JSON).
std::string error_for(const std::string& field, const std::string& value) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(kSpecJson);
  json[field] = nlohmann::json::parse(value);
  try {
    load_spec(write_text(dir, "bad.json", json.dump()));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ExperimentSpec, LoadsEveryField) {
  kvs::test::ScratchDir dir;
  const ExperimentSpec spec = load_spec(write_text(dir, "mini.json", kSpecJson));
  EXPECT_EQ(spec.name, "mini");
  EXPECT_EQ(spec.datasets, (std::vector<std::string>{"qasper", "hotpotqa"}));
  EXPECT_EQ(spec.dev_limit, 5);
  ASSERT_EQ(spec.methods.size(), 4u);
  EXPECT_EQ(spec.methods[0].budgets, (std::vector<int64_t>{32, 64}));  // the experiment's
  EXPECT_TRUE(spec.methods[2].searched());
  EXPECT_EQ(spec.methods[2].evals, 14);
  const MethodSpec& transfer = spec.method("Segments (B=64 profile)");
  EXPECT_FALSE(transfer.searched());
  EXPECT_EQ(transfer.family, "segments");  // its source's
  EXPECT_EQ(spec.tables[0].reference.at("macro").at("Global"), 34.44);
  // Paths, tables and figures are not part of the results' identity.
  const auto identity = nlohmann::json::parse(spec.identity_json);
  EXPECT_FALSE(identity.contains("tables"));
  EXPECT_TRUE(identity.contains("methods"));
}

TEST(ExperimentSpec, ErrorsNameTheFileAndField) {
  EXPECT_NE(error_for("datasets", R"(["qasper", "no_such_set"])").find("bad.json.datasets"), std::string::npos);
  EXPECT_NE(error_for("budgets", "[8]").find("budgets"), std::string::npos);
  EXPECT_NE(error_for("split_seed", "\"42\"").find("split_seed"), std::string::npos);
  EXPECT_NE(error_for("name", "\"Has Spaces\"").find("name"), std::string::npos);
  EXPECT_NE(error_for("budgetz", "[64]").find("budgetz: unknown field"), std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "A", "profile": "zigzag"}])").find("methods[0].profile"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "A", "profile": "global"}, {"name": "A", "profile": "pyramid"}])")
                .find("twice"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "A", "profile": "pyramid", "lambda1": 0.3}])").find("global"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "G", "profile": "global"}, {"name": "T", "transfer": "G"}])")
                .find("not a search"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "A", "profile": "global", "schedule": "steps"}])")
                .find("methods[0].schedule: unknown schedule 'steps'"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "S", "profile": "segments", "budgets": [64]},
                                     {"name": "T", "transfer": "S", "schedule": "uniform"}])")
                .find("methods[1].schedule"),
            std::string::npos);
  EXPECT_NE(error_for("tables", R"([{"name": "t", "kind": "datasets", "budget": 64, "methods": ["Nope"]}])")
                .find("'Nope' is not one of the spec's methods"),
            std::string::npos);
  EXPECT_NE(error_for("figures", R"([{"name": "f", "kind": "pie", "dataset": "qasper", "methods": ["Global"]}])")
                .find("figures[0].kind"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "F", "profile": "full", "budgets": [64]}])")
                .find("methods[0].budgets: the full cache evicts nothing"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "A", "profile": "global", "datasets": ["trec"]}])")
                .find("methods[0].datasets: 'trec' is not one of the spec's datasets"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "S", "profile": "segments", "budgets": [64], "datasets": ["qasper"]},
                                     {"name": "T", "transfer": "S", "datasets": ["qasper"]}])")
                .find("methods[1].datasets: a transfer runs on its source's datasets"),
            std::string::npos);
}

// "thinking": "strip" reaches the evaluation of every job and the recorded run's identity; the
// default leaves both as runs recorded before the rule had them (their keys unchanged).
TEST(ExperimentSpec, ThinkingRuleReachesTheRunAndItsIdentity) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  JobSettings settings;
  settings.model_dir = dir.file("model");
  settings.longbench_dir = dir.file("longbench");
  std::map<std::string, std::string> search_json;
  for (const char* rule : {"keep", "strip"}) {
    if (std::string(rule) == "strip") json["thinking"] = rule;
    const ExperimentSpec spec =
        load_spec(write_text(dir, std::string(rule) + ".json", json.dump()));
    const Plan plan = make_plan(spec);
    const auto request =
        method_request(spec, plan.job("mini/qasper/evaluate"), spec.methods[0], 32, settings);
    EXPECT_EQ(longbench::thinking_name(request.session.thinking), rule);
    search_json[rule] = search::run_spec(request, search::request_policy(request)).search_json;
  }
  EXPECT_EQ(nlohmann::json::parse(search_json["strip"]).value("thinking", ""), "strip");
  EXPECT_FALSE(nlohmann::json::parse(search_json["keep"]).contains("thinking"));
  EXPECT_NE(
      error_for("thinking", "\"drop\"").find("bad.json.thinking: unknown thinking rule 'drop'"),
      std::string::npos);
}

// A registered method as a policy: the method dialect without budget, evaluated at every budget
// on the dataset's shared prefill, recorded under the method's name.
TEST(ExperimentSpec, MethodsGivenAsPolicies) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["methods"].push_back({{"name", "Knorm"}, {"policy", {{"method", "knorm"}}}});
  json["methods"].push_back(
      {{"name", "SnapKV-64"},
       {"policy", {{"method", "snapkv"}, {"window", 16}, {"kernel", 5}, {"pooling", "avg"}}},
       {"budgets", {64}}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "mini.json", json.dump()));
  EXPECT_EQ(spec.method("Knorm").family, "policy");
  EXPECT_EQ(spec.method("Knorm").budgets, (std::vector<int64_t>{32, 64}));
  const Plan plan = make_plan(spec);
  JobSettings settings;  // run_spec records the paths absolute
  settings.model_dir = dir.file("model");
  settings.longbench_dir = dir.file("longbench");
  const auto request =
      method_request(spec, plan.job("mini/qasper/evaluate"), spec.method("Knorm"), 32, settings);
  const evict::Policy policy = search::request_policy(request);
  EXPECT_EQ(policy.method_name(), "knorm");
  EXPECT_EQ(policy.budget, 32);
  EXPECT_EQ(search::run_spec(request, policy).profile_family, "knorm");
  const auto snap = method_request(spec, plan.job("mini/qasper/evaluate"), spec.method("SnapKV-64"),
                                   64, settings);
  EXPECT_EQ(search::request_policy(snap).params.get(evict::window_params().window), 16);
  EXPECT_EQ(search::run_spec(snap, search::request_policy(snap)).profile_family, "snapkv");

  EXPECT_NE(error_for("methods", R"([{"name": "K", "policy": {"method": "knorm", "budget": 64}}])")
                .find("methods[0].policy.budget: the method's budgets set B: leave budget out"),
            std::string::npos);
  EXPECT_NE(
      error_for("methods", R"([{"name": "K", "policy": {"method": "knorm"}, "profile": "global"}])")
          .find("methods[0].profile: a method given as a policy sets everything"),
      std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "K", "policy": {"method": "quest"}}])")
                .find("methods[0].policy.method: unknown method 'quest'"),
            std::string::npos);
  EXPECT_NE(error_for("methods",
                      R"([{"name": "S", "policy": {"method": "streaming_llm", "n_sink": 40}}])")
                .find("methods[0].policy.budget: 32 does not hold the 40 entries"),
            std::string::npos);
}

// A profile under an allocation: the family's policy becomes an allocating wrapper's base (at
// KV-head granularity), with the fixed lambdas and the schedule on the base, and a search's
// latent moves the base's profiles; what does not allocate, or a policy method, is refused.
TEST(ExperimentSpec, ProfilesRunUnderAnAllocation) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["methods"].push_back({{"name", "Global on AdaKV"},
                             {"profile", "global"},
                             {"lambda2", -0.3},
                             {"schedule", "uniform"},
                             {"allocation", {{"method", "adakv"}, {"rule", "original"}}}});
  json["methods"].push_back({{"name", "Segments on AdaKV"},
                             {"profile", "segments"},
                             {"segments", 2},
                             {"budgets", {32}},
                             {"allocation", {{"method", "adakv"}}}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "mini.json", json.dump()));
  const Plan plan = make_plan(spec);
  JobSettings settings;
  settings.model_dir = dir.file("model");
  settings.longbench_dir = dir.file("longbench");
  const auto request = method_request(spec, plan.job("mini/qasper/evaluate"),
                                      spec.method("Global on AdaKV"), 64, settings);
  const evict::Policy policy = search::request_policy(request);
  const evict::WindowParams& w = evict::window_params();
  EXPECT_EQ(policy.method_name(), "adakv");
  EXPECT_EQ(evict::policy_to_json(policy).at("rule"), "original");
  ASSERT_NE(policy.base, nullptr);
  EXPECT_EQ(policy.base->params.get(w.granularity), "kv_head");
  EXPECT_EQ(policy.base->params.get(w.schedule), "uniform");
  EXPECT_NEAR(evict::lambda2_at(search::profile_policy(policy).params, 0, 4), -0.3, 1e-12);
  EXPECT_EQ(policy.budget, 64);

  search::RunRequest segments;
  segments.family = "segments";
  segments.segments = 2;
  segments.budget = 32;
  segments.allocation_json = R"({"method": "adakv"})";
  const std::vector<double> latent = {0.1, 0.2, -0.3, -0.4};
  const evict::Policy searched = search::request_policy(segments, latent);
  const evict::Policy plain = search::request_policy(
      [&] {
        search::RunRequest r = segments;
        r.allocation_json.clear();
        return r;
      }(),
      latent);
  for (int64_t l = 0; l < 4; ++l) {
    EXPECT_EQ(evict::lambda1_at(search::profile_policy(searched).params, l, 4),
              evict::lambda1_at(plain.params, l, 4));
    EXPECT_EQ(evict::lambda2_at(search::profile_policy(searched).params, l, 4),
              evict::lambda2_at(plain.params, l, 4));
  }

  EXPECT_NE(error_for("methods", R"([{"name": "G", "profile": "global",
                                     "allocation": {"method": "knorm"}}])")
                .find("methods[0].allocation.method: knorm does not allocate a base policy's "
                      "budget (adakv does)"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "G", "profile": "global",
                                     "allocation": {"method": "adakv", "alpha": 2}}])")
                .find("methods[0].allocation.alpha: must be in [0, 1], got 2"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "K", "policy": {"method": "knorm"},
                                     "allocation": {"method": "adakv"}}])")
                .find("methods[0].allocation: only a profile's policy runs under an allocation"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "G", "profile": "global",
                                     "allocation": {"method": "adakv", "budget": 9}}])")
                .find("methods[0].allocation: leave out base and budget"),
            std::string::npos);
}

// A search may score its states on dev questions of its own; fixed policies keep the spec's.
TEST(ExperimentSpec, SearchesTakeTheirOwnDevQuestions) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["methods"].push_back(
      {{"name", "Wide segments"}, {"profile", "segments"}, {"budgets", {32}}, {"dev_limit", 12}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "mini.json", json.dump()));
  ASSERT_TRUE(spec.method("Wide segments").dev_limit.has_value());
  EXPECT_FALSE(spec.method("PyramidKV").dev_limit.has_value());
  const Plan plan = make_plan(spec);
  JobSettings settings;
  settings.model_dir = dir.file("model");
  settings.longbench_dir = dir.file("longbench");
  const Job* search = nullptr;
  for (const Job& job : plan.jobs)
    if (job.kind == JobKind::Search && job.evaluations.at(0).method == "Wide segments")
      search = &job;
  ASSERT_NE(search, nullptr);
  EXPECT_EQ(method_request(spec, *search, spec.method("Wide segments"), 32, settings).limit_dev,
            12);
  EXPECT_EQ(
      method_request(spec, plan.job("mini/qasper/evaluate"), spec.method("PyramidKV"), 32, settings)
          .limit_dev,
      spec.dev_limit);

  EXPECT_NE(error_for("methods", R"([{"name": "P", "profile": "pyramid", "dev_limit": 4}])")
                .find("methods[0].dev_limit: only a search (profile segments or curve) scores dev "
                      "questions of its own"),
            std::string::npos);
  EXPECT_NE(error_for("methods", R"([{"name": "S", "profile": "segments", "dev_limit": -1}])")
                .find("methods[0].dev_limit"),
            std::string::npos);
}

// The full cache is one run above every prompt; a method limited to some datasets runs only there,
// and its transfer with it.
TEST(ExperimentSpec, FullCacheAndMethodsOnSomeDatasets) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["methods"].push_back({{"name", "Full cache"}, {"profile", "full"}});
  json["methods"].push_back({{"name", "Curve"}, {"profile", "curve"}, {"budgets", {32}}, {"datasets", {"hotpotqa"}}});
  json["methods"].push_back({{"name", "Curve (B=32 profile)"}, {"transfer", "Curve"}});
  json["tables"].push_back({{"name", "t4"}, {"kind", "methods"}, {"budget", 32}, {"methods", {"Curve"}},
                            {"baseline", "Global"}, {"datasets", {"hotpotqa"}}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "mini.json", json.dump()));
  EXPECT_EQ(spec.method("Full cache").budgets, (std::vector<int64_t>{kFullCacheBudget}));
  EXPECT_TRUE(spec.method("Full cache").full_cache());
  EXPECT_EQ(spec.method("Curve (B=32 profile)").datasets, (std::vector<std::string>{"hotpotqa"}));
  EXPECT_EQ(spec.tables.at(3).datasets, (std::vector<std::string>{"hotpotqa"}));
  EXPECT_EQ(spec.tables.at(0).datasets, spec.datasets);
  const Plan plan = make_plan(spec);
  std::vector<std::string> keys;
  for (const Job& j : plan.jobs) keys.push_back(j.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"mini/qasper/search/segments/B64", "mini/hotpotqa/search/segments/B64",
                                            "mini/hotpotqa/search/curve/B32", "mini/qasper/evaluate",
                                            "mini/hotpotqa/evaluate"}));
  const auto evaluated = [&](const std::string& job) {
    std::vector<std::string> runs;
    for (const Evaluation& e : plan.job(job).evaluations) runs.push_back(e.run_key);
    return runs;
  };
  const std::string full = "mini/qasper/full-cache/B" + std::to_string(kFullCacheBudget);
  EXPECT_EQ(evaluated("mini/qasper/evaluate").size(), 7u);  // no Curve transfer on qasper
  EXPECT_EQ(evaluated("mini/qasper/evaluate").back(), full);
  EXPECT_EQ(evaluated("mini/hotpotqa/evaluate").size(), 9u);
  // The full cache is SnapKV above the prompt: nothing evicted.
  const auto request = method_request(spec, plan.job("mini/qasper/evaluate"), spec.method("Full cache"),
                                      kFullCacheBudget, JobSettings{});
  EXPECT_EQ(request.family, "baseline");
  EXPECT_EQ(request.budget, kFullCacheBudget);
  EXPECT_NE(plan_text(spec, plan).find("Full cache (the whole cache, no eviction)"), std::string::npos);
}

TEST(ExperimentSpec, MissingOrBrokenFile) {
  kvs::test::ScratchDir dir;
  EXPECT_THROW(load_spec(dir.file("missing.json")), Error);
  try {
    load_spec(write_text(dir, "broken.json", "{\"name\": "));
    FAIL() << "broken JSON was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos);
  }
}

std::string small_config_json(const std::string& model_type) {
  kvs::model::ModelConfig c;
  c.model_type = model_type;
  c.vocab_size = 32;
  c.hidden_size = 16;
  c.intermediate_size = 32;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.num_key_value_heads = 1;
  c.head_dim = 8;
  c.max_position_embeddings = 64;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 1e4;
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  return kvs::model::config_to_json(c);
}

TEST(ExperimentSpec, ModelTypeIsChecked) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(kSpecJson);
  json["model_type"] = "llama";
  const ExperimentSpec spec = load_spec(write_text(dir, "llama.json", json.dump()));
  write_text(dir, "config.json", small_config_json("mistral"));
  EXPECT_THROW(check_model_type(spec, dir.path()), Error);
  write_text(dir, "config.json", small_config_json("llama"));
  EXPECT_NO_THROW(check_model_type(spec, dir.path()));
  // A GGUF checkpoint by its registered name: SmolLM2 is a Llama.
  EXPECT_NO_THROW(check_model_type(spec, "smollm2-135m"));
}

TEST(ExperimentSpec, Slug) {
  EXPECT_EQ(slug("Segments (B=64 profile)"), "segments-b-64-profile");
  EXPECT_EQ(slug("mean & dispersion"), "mean-dispersion");
  EXPECT_EQ(slug("demo/qasper/evaluate"), "demo-qasper-evaluate");
}

}  // namespace
}  // namespace kvs::experiment
