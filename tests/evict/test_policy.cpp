#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "evict/policy.h"
#include "common/scratch_dir.h"

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

TEST(Policy, RoundTripsThroughJson) {
  Policy p = kvs::evict::global_policy(64, 0.1, -0.15);
  p.name = "segments-3";
  p.lambda2 = kvs::evict::Profile::segments({-0.3, 0.15, 0.45});
  p.lambda1 = kvs::evict::Profile::curve(0.1, -0.2, 0.3);
  p.granularity = kvs::evict::Granularity::KvHead;
  p.group_reduce = kvs::evict::GroupReduce::Max;
  p.pooling = kvs::evict::Pooling::Avg;
  p.kernel = 5;
  p.budget.redistribute = true;
  p.candidate_factor = 3;
  for (const Policy& q : {p, kvs::evict::snapkv_policy(32), kvs::evict::pyramidkv_policy(128)}) {
    const Policy back = kvs::evict::policy_from_json(json::parse(kvs::evict::policy_to_string(q)));
    EXPECT_EQ(back, q) << kvs::evict::policy_to_string(q);
    EXPECT_EQ(kvs::evict::policy_to_json(back), kvs::evict::policy_to_json(q));
  }
}

TEST(Policy, MissingFieldsTakeTheDocumentedDefaults) {
  const Policy p = kvs::evict::policy_from_json(minimal());
  EXPECT_EQ(p.budget.window, 8);
  EXPECT_EQ(p.kernel, 7);
  EXPECT_EQ(p.budget.beta, 20);
  EXPECT_EQ(p.pooling, kvs::evict::Pooling::Max);
  EXPECT_EQ(p.granularity, kvs::evict::Granularity::QueryHead);
  EXPECT_TRUE(p.terms.corr);
  EXPECT_EQ(p.candidate_factor, 4);
  json topk = minimal();
  topk["kind"] = "topk";
  EXPECT_FALSE(kvs::evict::policy_from_json(topk).terms.corr);
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
  expect_error(j, "\"kind\"");
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
  expect_error(j, "policy.pooling");
  j = minimal();
  j["budjet"] = 64;
  expect_error(j, "policy.budjet: unknown field");
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
}

TEST(Policy, LoadsFilesAndNamesThemInErrors) {
  const kvs::test::ScratchDir scratch;
  const std::string path = scratch.file("policy.json");
  std::ofstream(path) << minimal().dump();
  EXPECT_EQ(kvs::evict::load_policy(path).budget.budget, 64);
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
  EXPECT_NEAR(p.lambda1_at(0, 32), 0.3, 1e-12);
  EXPECT_NEAR(p.lambda2_at(0, 32), -0.15, 1e-12);
  p.terms.dispersion = false;
  p.terms.corr = false;
  EXPECT_EQ(p.lambda1_at(0, 32), 0.0);
  EXPECT_EQ(p.lambda2_at(0, 32), 0.0);
}

TEST(Policy, ShorthandsOfGenerate) {
  EXPECT_EQ(kvs::evict::shorthand_policy(64, "baseline"), kvs::evict::snapkv_policy(64));
  EXPECT_EQ(kvs::evict::shorthand_policy(64, "pyramid"), kvs::evict::pyramidkv_policy(64));
  const Policy g = kvs::evict::shorthand_policy(32, "global", std::nullopt, 0.2);
  EXPECT_EQ(g.kind, kvs::evict::SelectorKind::Greedy);
  EXPECT_EQ(g.budget.schedule, kvs::evict::Schedule::Pyramid);
  EXPECT_EQ(g.budget.budget, 32);
  EXPECT_NEAR(g.lambda2_at(7, 32), 0.2, 1e-12);
  EXPECT_EQ(g.lambda1_at(7, 32), 0.0);
  EXPECT_NEAR(kvs::evict::shorthand_policy(64, "global").lambda2_at(0, 32), -0.15, 1e-12);
  EXPECT_THROW(kvs::evict::shorthand_policy(64, "pyramid", 0.1), kvs::Error);
  EXPECT_THROW(kvs::evict::shorthand_policy(64, "segments"), kvs::Error);
  EXPECT_THROW(kvs::evict::shorthand_policy(7, "baseline"), kvs::Error);  // under the window
}

}  // namespace
