#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "evict/policy.h"
#include "evict/window_params.h"

namespace {

using kvs::evict::Policy;
using nlohmann::json;

std::string parse_error(const json& j) {
  try {
    kvs::evict::policy_from_json(j);
  } catch (const kvs::Error& e) {
    return e.what();
  }
  return "";
}

json minimal() { return json{{"kind", "greedy"}, {"budget", 64}, {"schedule", "pyramid"}}; }

const kvs::evict::WindowParams& w() { return kvs::evict::window_params(); }

TEST(Policy, RoundTripsThroughJson) {
  Policy p = kvs::evict::global_policy(64, 0.1, -0.15);
  p.name = "segments-3";
  p.params.set(w().lambda2, kvs::evict::Profile::segments({-0.3, 0.15, 0.45}));
  p.params.set(w().lambda1, kvs::evict::Profile::curve(0.1, -0.2, 0.3));
  p.params.set(w().granularity, std::string("kv_head"));
  p.params.set(w().group_reduce, std::string("max"));
  p.params.set(w().pooling, std::string("avg"));
  p.params.set(w().kernel, int64_t{5});
  p.params.set(w().redistribute, true);
  p.params.set(w().candidate_factor, int64_t{3});
  p.validate();
  const Policy knorm = kvs::evict::policy_from_json({{"method", "knorm"}, {"budget", 16}});
  const Policy sinks =
      kvs::evict::policy_from_json({{"method", "streaming_llm"}, {"budget", 16}, {"n_sink", 2}});
  for (const Policy& q :
       {p, kvs::evict::snapkv_policy(32), kvs::evict::pyramidkv_policy(128), knorm, sinks}) {
    const Policy back = kvs::evict::policy_from_json(json::parse(kvs::evict::policy_to_string(q)));
    EXPECT_EQ(back, q) << kvs::evict::policy_to_string(q);
    EXPECT_EQ(kvs::evict::policy_to_json(back), kvs::evict::policy_to_json(q));
  }
}

TEST(Policy, MissingFieldsTakeTheDocumentedDefaults) {
  const Policy p = kvs::evict::policy_from_json(minimal());
  EXPECT_EQ(p.method_name(), "diverse");
  EXPECT_EQ(p.params.get(w().window), 8);
  EXPECT_EQ(p.params.get(w().kernel), 7);
  EXPECT_EQ(p.params.get(w().beta), 20);
  EXPECT_EQ(p.params.get(w().pooling), "max");
  EXPECT_EQ(p.params.get(w().granularity), "query_head");
  EXPECT_TRUE(p.params.get(w().corr));
  EXPECT_EQ(p.params.get(w().candidate_factor), 4);
  json topk = minimal();
  topk["kind"] = "topk";
  const Policy pyramid = kvs::evict::policy_from_json(topk);
  EXPECT_EQ(pyramid.method_name(), "pyramidkv");
  EXPECT_FALSE(pyramid.params.has(w().corr));
  // The method dialect's defaults: SnapKV scores by the mean alone, on uniform budgets.
  const Policy snap = kvs::evict::policy_from_json({{"method", "snapkv"}, {"budget", 64}});
  EXPECT_EQ(snap.params.get(w().schedule), "uniform");
  EXPECT_FALSE(snap.params.get(w().dispersion));
  EXPECT_EQ(snap.name, "snapkv");
}

// The older kind/schedule dialect of the paper's methods reads as the methods it names, and the
// paper's methods are written in it, so that every recorded policy keeps its exact JSON.
TEST(Policy, TheKindDialectIsTranslatedAndKept) {
  const json recorded = {{"name", "baseline"},
                         {"kind", "topk"},
                         {"budget", 64},
                         {"window", 8},
                         {"schedule", "uniform"},
                         {"beta", 20},
                         {"redistribute", false},
                         {"kernel", 7},
                         {"pooling", "max"},
                         {"granularity", "query_head"},
                         {"group_reduce", "mean"},
                         {"terms", {{"mean", true}, {"dispersion", false}, {"corr", false}}},
                         {"lambda1", {{"profile", "global"}, {"a", {0.0}}}},
                         {"lambda2", {{"profile", "global"}, {"a", {0.0}}}},
                         {"candidate_factor", 4}};
  const Policy snap = kvs::evict::policy_from_json(recorded);
  EXPECT_EQ(snap.method_name(), "snapkv");
  EXPECT_EQ(kvs::evict::policy_to_json(snap), recorded);
  json pyramid = recorded;
  pyramid["schedule"] = "pyramid";
  EXPECT_EQ(kvs::evict::policy_from_json(pyramid).method_name(), "pyramidkv");
  EXPECT_EQ(kvs::evict::policy_to_json(kvs::evict::policy_from_json(pyramid)), pyramid);
  json global = kvs::evict::policy_to_json(kvs::evict::global_policy(64));
  EXPECT_EQ(global.at("kind"), "greedy");
  EXPECT_FALSE(global.contains("method"));
  EXPECT_EQ(kvs::evict::policy_from_json(global), kvs::evict::global_policy(64));
  // A top-k policy with the terms left out has the older dialect's defaults (dispersion on, at
  // lambda1 = 0 it adds nothing).
  json bare = {{"kind", "topk"}, {"budget", 64}, {"schedule", "uniform"}};
  EXPECT_TRUE(kvs::evict::policy_from_json(bare).params.get(w().dispersion));
}

// The observation protocol is a field of either dialect, written only when not the default, so
// that every recorded policy keeps its JSON; it is part of the policy's identity.
TEST(Policy, ObserveIsAFieldLeftOutAtItsDefault) {
  const Policy snap = kvs::evict::snapkv_policy(64);
  EXPECT_EQ(snap.observe, kvs::evict::Observe::PromptEnd);
  EXPECT_FALSE(kvs::evict::policy_to_json(snap).contains("observe"));
  json j = kvs::evict::policy_to_json(snap);
  j["observe"] = "context";
  const Policy context = kvs::evict::policy_from_json(j);
  EXPECT_EQ(context.observe, kvs::evict::Observe::Context);
  EXPECT_NE(context, snap);
  EXPECT_EQ(kvs::evict::policy_to_json(context).at("observe"), "context");
  EXPECT_EQ(kvs::evict::policy_from_json(json::parse(kvs::evict::policy_to_string(context))),
            context);
  const json method = {{"method", "knorm"}, {"budget", 32}, {"observe", "question"}};
  const Policy knorm = kvs::evict::policy_from_json(method);
  EXPECT_EQ(knorm.observe, kvs::evict::Observe::Question);
  EXPECT_EQ(kvs::evict::policy_to_json(knorm), method);
  json prompt_end = method;
  prompt_end["observe"] = "prompt_end";
  EXPECT_FALSE(
      kvs::evict::policy_to_json(kvs::evict::policy_from_json(prompt_end)).contains("observe"));
  json snap_method = {{"method", "snapkv"}, {"budget", 64}, {"observe", "context"}};
  EXPECT_EQ(kvs::evict::policy_from_json(snap_method).observe, kvs::evict::Observe::Context);

  json bad = method;
  bad["observe"] = "answer";
  EXPECT_NE(parse_error(bad).find("policy.observe"), std::string::npos) << parse_error(bad);
  bad["observe"] = 1;
  EXPECT_NE(parse_error(bad).find("policy.observe"), std::string::npos) << parse_error(bad);
  const json wrapped = {{"method", "criticalkv"},
                        {"budget", 64},
                        {"base", {{"method", "knorm"}, {"observe", "context"}}}};
  EXPECT_NE(parse_error(wrapped).find("policy.base.observe"), std::string::npos)
      << parse_error(wrapped);
}

TEST(Policy, ErrorsNameTheField) {
  const auto expect_error = [](const json& j, const std::string& field) {
    const std::string e = parse_error(j);
    EXPECT_NE(e.find(field), std::string::npos) << "got: '" << e << "' for " << j.dump();
  };
  json j = minimal();
  j.erase("kind");
  expect_error(j, "policy.method: missing");
  j = minimal();
  j["budget"] = "64";
  expect_error(j, "policy.budget");
  j = minimal();
  j["budget"] = 7;  // under the window of 8
  expect_error(j, "policy.budget");
  j = minimal();
  j["kernel"] = 6;
  expect_error(j, "policy.kernel");
  j = minimal();
  j["pooling"] = "median";
  expect_error(j, "policy.pooling: expected one of max, avg, none");
  j = minimal();
  j["budjet"] = 64;
  expect_error(j, "policy.budjet: not a parameter of diverse");
  j = minimal();
  j["kind"] = "topk";
  j["terms"] = {{"corr", true}};
  expect_error(j, "policy.terms.corr");
  j = minimal();
  j["terms"] = {{"mean", false}, {"dispersion", false}};
  expect_error(j, "policy.terms");
  j = minimal();
  j["lambda2"] = {{"profile", "curve"}, {"a", {1, 2}}};
  expect_error(j, "policy.lambda2.a");
  j = minimal();
  j["lambda1"] = {{"profile", "spline"}, {"a", {1}}};
  expect_error(j, "policy.lambda1.profile");
  j = minimal();
  j["lambda1"] = {{"profile", "global"}, {"a", {"x"}}};
  expect_error(j, "policy.lambda1.a[0]");
  expect_error(json::array(), "policy: expected a JSON object");
  j = minimal();
  j["kind"] = "beam";
  expect_error(j, "policy.kind");
}

// The typed parameters of a method: a misspelled name, a text where a number goes, a value out
// of its declared range, each one line naming the field.
TEST(Policy, ParametersAreCheckedAgainstTheDeclaration) {
  const auto error = [](const json& j) { return parse_error(j); };
  json j = {{"method", "streaming_llm"}, {"budget", 64}, {"n_snk", 4}};
  EXPECT_EQ(error(j), "policy.n_snk: not a parameter of streaming_llm (its parameters: n_sink)");
  j = {{"method", "streaming_llm"}, {"budget", 64}, {"n_sink", "four"}};
  EXPECT_NE(error(j).find("policy.n_sink: expected an integer"), std::string::npos) << error(j);
  j = {{"method", "adakv"}, {"budget", 64}, {"alpha", 1.5}, {"base", {{"method", "knorm"}}}};
  EXPECT_EQ(error(j), "policy.alpha: must be in [0, 1], got 1.5");
  j = {{"method", "r_kv"}, {"budget", 64}, {"window", 0}};
  EXPECT_EQ(error(j), "policy.window: must be >= 1, got 0");
  j = {{"method", "observed_attention"}, {"budget", 64}, {"normalize", 1}};
  EXPECT_NE(error(j).find("policy.normalize: expected"), std::string::npos) << error(j);
  j = {{"method", "mixkv"}, {"budget", 64}, {"host", "pyramid"}};
  EXPECT_EQ(error(j), "policy.host: expected one of snapkv, adakv, got 'pyramid'");
  j = {{"method", "knorm"}, {"budget", 64}, {"window", 8}};
  EXPECT_EQ(error(j), "policy.window: not a parameter of knorm (its parameters: none)");
  j = {{"method", "streaming_llm"}, {"budget", 3}};
  EXPECT_NE(error(j).find("policy.budget: 3 does not hold the 4 entries"), std::string::npos)
      << error(j);
  // A value set in code is checked by validate() against the same declaration.
  Policy p = kvs::evict::snapkv_policy(64);
  p.params.set(w().pooling, std::string("median"));
  EXPECT_THROW(p.validate(), kvs::Error);
  p = kvs::evict::snapkv_policy(64);
  p.params.set(w().corr, true);  // not a parameter of snapkv
  EXPECT_THROW(p.validate(), kvs::Error);
}

TEST(Policy, LoadsFilesAndNamesThemInErrors) {
  const kvs::test::ScratchDir scratch;
  const std::string path = scratch.file("policy.json");
  std::ofstream(path) << minimal().dump();
  EXPECT_EQ(kvs::evict::load_policy(path).budget, 64);
  std::ofstream(path) << "{\"kind\": ";
  try {
    kvs::evict::load_policy(path);
    FAIL();
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Policy, TermsSwitchTheCoefficientsOff) {
  Policy p = kvs::evict::global_policy(64, 0.3, -0.15);
  EXPECT_NEAR(kvs::evict::lambda1_at(p.params, 0, 32), 0.3, 1e-12);
  EXPECT_NEAR(kvs::evict::lambda2_at(p.params, 0, 32), -0.15, 1e-12);
  p.params.set(w().dispersion, false);
  p.params.set(w().corr, false);
  EXPECT_EQ(kvs::evict::lambda1_at(p.params, 0, 32), 0.0);
  EXPECT_EQ(kvs::evict::lambda2_at(p.params, 0, 32), 0.0);
  EXPECT_EQ(kvs::evict::lambda2_at(kvs::evict::snapkv_policy(64).params, 0, 32), 0.0);
}

TEST(Policy, ShorthandsOfGenerate) {
  EXPECT_EQ(kvs::evict::shorthand_policy(64, "baseline"), kvs::evict::snapkv_policy(64));
  EXPECT_EQ(kvs::evict::shorthand_policy(64, "pyramid"), kvs::evict::pyramidkv_policy(64));
  const Policy g = kvs::evict::shorthand_policy(32, "global", std::nullopt, 0.2);
  EXPECT_EQ(g.method_name(), "diverse");
  EXPECT_EQ(g.params.get(w().schedule), "pyramid");
  EXPECT_EQ(g.budget, 32);
  EXPECT_NEAR(kvs::evict::lambda2_at(g.params, 7, 32), 0.2, 1e-12);
  EXPECT_EQ(kvs::evict::lambda1_at(g.params, 7, 32), 0.0);
  EXPECT_NEAR(kvs::evict::lambda2_at(kvs::evict::shorthand_policy(64, "global").params, 0, 32),
              -0.15, 1e-12);
  EXPECT_THROW(kvs::evict::shorthand_policy(64, "pyramid", 0.1), kvs::Error);
  EXPECT_THROW(kvs::evict::shorthand_policy(64, "segments"), kvs::Error);
  EXPECT_THROW(kvs::evict::shorthand_policy(7, "baseline"), kvs::Error);  // under the window
}

}  // namespace

namespace {

TEST(Policy, DecodingScheduleRoundTripsAndMakesTheBudgetOptional) {
  const json decode_only = {{"method", "knorm"},
                            {"decoding", {{"interval", 64}, {"target", 512}, {"buffer", 16}}}};
  const Policy p = kvs::evict::policy_from_json(decode_only);
  EXPECT_EQ(p.budget, 0);
  ASSERT_TRUE(p.decoding.has_value());
  EXPECT_EQ(p.decoding->interval, 64);
  EXPECT_EQ(p.decoding->target, 512);
  EXPECT_EQ(p.decoding->buffer, 16);
  EXPECT_EQ(p.decoding->bound(), 576);
  EXPECT_EQ(kvs::evict::policy_to_json(p), decode_only);  // no budget written

  const json both = {
      {"method", "keydiff"}, {"budget", 128}, {"decoding", {{"interval", 32}, {"target", 256}}}};
  const Policy q = kvs::evict::policy_from_json(both);
  EXPECT_EQ(q.budget, 128);
  EXPECT_EQ(q.decoding->buffer, 128);  // the default, written back
  EXPECT_EQ(kvs::evict::policy_from_json(kvs::evict::policy_to_json(q)), q);
  EXPECT_NE(q, kvs::evict::policy_from_json(json{{"method", "keydiff"}, {"budget", 128}}));
  // Positions within the cache: written when asked for, a bad value names the field.
  const json rotated = {
      {"method", "streaming_llm"},
      {"n_sink", 4},
      {"decoding", {{"interval", 1}, {"target", 256}, {"buffer", 1}, {"positions", "cache"}}}};
  const Policy r = kvs::evict::policy_from_json(rotated);
  EXPECT_EQ(r.decoding->positions, kvs::evict::DecodePositions::Cache);
  EXPECT_EQ(kvs::evict::policy_to_json(r), rotated);
  json bad = rotated;
  bad["decoding"]["positions"] = "rolling";
  EXPECT_NE(parse_error(bad).find("policy.decoding.positions"), std::string::npos)
      << parse_error(bad);
  // R-KV's trigger: divide_length instead of interval, not both.
  const json rkv = {{"method", "r_kv"},
                    {"budget", 128},
                    {"decoding", {{"divide_length", 128}, {"target", 128}, {"buffer", 8}}}};
  const Policy k = kvs::evict::policy_from_json(rkv);
  EXPECT_EQ(k.decoding->divide_length, 128);
  EXPECT_EQ(k.decoding->bound(), 256);
  EXPECT_EQ(kvs::evict::policy_to_json(k)["decoding"], rkv["decoding"]);
  EXPECT_EQ(kvs::evict::policy_from_json(kvs::evict::policy_to_json(k)), k);
  json both_triggers = rkv;
  both_triggers["decoding"]["interval"] = 64;
  EXPECT_NE(parse_error(both_triggers).find("policy.decoding.interval"), std::string::npos)
      << parse_error(both_triggers);
  // Without a schedule the budget stays required.
  EXPECT_NE(parse_error(json{{"method", "knorm"}}).find("field \"budget\""), std::string::npos);
}

// A template (an experiment's method, a run's policy) at budget B: B is the budget, or a
// decode-time policy's target; a decode-time template's own budget stays (the prompt compressed to
// it first).
TEST(Policy, TemplateAtBudgetSetsTheBudgetOrTheTarget) {
  using kvs::evict::policy_json_at_budget;
  EXPECT_EQ(policy_json_at_budget(json{{"method", "knorm"}}, 64, "t"),
            (json{{"method", "knorm"}, {"budget", 64}}));
  const json decode_only = {{"method", "knorm"}, {"decoding", {{"interval", 4}}}};
  EXPECT_EQ(policy_json_at_budget(decode_only, 64, "t"),
            (json{{"method", "knorm"}, {"decoding", {{"interval", 4}, {"target", 64}}}}));
  const json prefill_first = {{"method", "knorm"}, {"budget", 16}, {"decoding", {{"interval", 4}}}};
  const json at_64 = policy_json_at_budget(prefill_first, 64, "t");
  EXPECT_EQ(
      at_64,
      (json{{"method", "knorm"}, {"budget", 16}, {"decoding", {{"interval", 4}, {"target", 64}}}}));
  EXPECT_EQ(kvs::evict::policy_from_json(at_64).budget, 16);
  auto error = [](const json& t) {
    try {
      policy_json_at_budget(t, 64, "t");
    } catch (const kvs::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(json{{"method", "knorm"}, {"budget", 16}}).find("t.budget: the method's budgets"),
            std::string::npos);
  EXPECT_NE(error(json{{"method", "knorm"}, {"decoding", {{"target", 8}}}})
                .find("t.decoding.target: the method's budgets set"),
            std::string::npos);
}

TEST(Policy, DecodingScheduleErrorsNameTheField) {
  auto with = [](json policy, json decoding) {
    policy["decoding"] = std::move(decoding);
    return parse_error(policy);
  };
  const json knorm = {{"method", "knorm"}};
  EXPECT_NE(with(knorm, {{"interval", 0}, {"target", 16}}).find("policy.decoding.interval"),
            std::string::npos);
  EXPECT_NE(
      with(knorm, {{"interval", 4}}).find("policy.decoding: missing required field \"target\""),
      std::string::npos);
  EXPECT_NE(
      with(knorm, {{"interval", 4}, {"target", 8}, {"every", 2}}).find("policy.decoding.every"),
      std::string::npos);
  const std::string sinks =
      with({{"method", "streaming_llm"}, {"n_sink", 8}}, {{"interval", 4}, {"target", 4}});
  EXPECT_NE(sinks.find("policy.decoding.target"), std::string::npos) << sinks;
  const std::string column =
      with({{"method", "observed_attention"}}, {{"interval", 4}, {"target", 64}});
  EXPECT_NE(column.find("cannot compress while decoding"), std::string::npos) << column;
  const std::string cake = with({{"method", "cake"}}, {{"interval", 4}, {"target", 64}});
  EXPECT_NE(cake.find("between layers"), std::string::npos) << cake;
  const std::string granularity = with({{"method", "snapkv"}}, {{"interval", 64}, {"target", 128}});
  EXPECT_NE(granularity.find("kv_head"), std::string::npos) << granularity;
  // snapkv's window of 32 query rows, from 16 steps between compressions.
  const std::string window =
      with({{"method", "snapkv"}, {"granularity", "kv_head"}, {"window", 32}},
           {{"interval", 16}, {"target", 128}});
  EXPECT_NE(window.find("policy.decoding.interval"), std::string::npos) << window;
  // expected_attention leaves its n_sink first query rows out of its statistics.
  const std::string rows =
      with({{"method", "expected_attention"}}, {{"interval", 64}, {"target", 128}, {"buffer", 4}});
  EXPECT_NE(rows.find("policy.decoding.buffer"), std::string::npos) << rows;
  EXPECT_EQ(with({{"method", "snapkv"}, {"granularity", "kv_head"}, {"window", 32}},
                 {{"interval", 32}, {"target", 128}, {"buffer", 32}}),
            "");
}

}  // namespace
