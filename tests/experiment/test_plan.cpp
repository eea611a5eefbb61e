#include "experiment/plan.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "experiment/job_kinds.h"
#include "experiment/spec_fixtures.h"
#include "search/run.h"

namespace kvs::experiment {
namespace {

TEST(ExperimentPlan, SearchesFirstThenOneEvaluateJobPerDataset) {
  kvs::test::ScratchDir dir;
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "mini.json", test_support::kSpecJson));
  const Plan plan = make_plan(spec);
  ASSERT_EQ(plan.jobs.size(), 4u);
  EXPECT_EQ(plan.jobs[0].key, "mini/qasper/search/segments/B64");
  EXPECT_EQ(plan.jobs[0].kind, JobKind::Search);
  EXPECT_EQ(plan.jobs[0].stage, 1);
  EXPECT_EQ(plan.jobs[1].key, "mini/hotpotqa/search/segments/B64");
  const Job& evaluate = plan.jobs[2];
  EXPECT_EQ(evaluate.key, "mini/qasper/evaluate");
  EXPECT_EQ(evaluate.stage, 2);  // reads the search
  // PyramidKV and Global at 32 and 64, the transfer at 32 and 64: all on one prefill.
  ASSERT_EQ(evaluate.evaluations.size(), 6u);
  EXPECT_EQ(evaluate.evaluations[0].run_key, "mini/qasper/pyramidkv/B32");
  EXPECT_EQ(evaluate.evaluations[5].run_key, "mini/qasper/segments-b-64-profile/B64");
  EXPECT_EQ(evaluate.search_jobs, (std::vector<std::string>{"mini/qasper/search/segments/B64"}));
  EXPECT_EQ(evaluate.searches.at(0).run_key, "mini/qasper/segments/B64");
  EXPECT_EQ(plan.job("mini/hotpotqa/evaluate").dataset, "hotpotqa");
  EXPECT_EQ(job_database("out", plan.jobs[2]), "out/jobs/mini-qasper-evaluate.sqlite");
  // Keys do not change between plans of the same spec.
  EXPECT_EQ(make_plan(spec).jobs[3].spec_json, plan.jobs[3].spec_json);
  const std::string text = plan_text(spec, plan);
  EXPECT_NE(text.find("mini/hotpotqa/evaluate"), std::string::npos);
  EXPECT_NE(text.find("one prefill per dev and test question"), std::string::npos);
}

// A method's schedule reaches the policy its jobs evaluate; without one, the profile's own applies.
TEST(ExperimentPlan, AMethodsScheduleReachesItsPolicy) {
  kvs::test::ScratchDir dir;
  auto json = nlohmann::json::parse(test_support::kSpecJson);
  json["methods"].push_back({{"name", "Global (uniform)"}, {"profile", "global"}, {"schedule", "uniform"}});
  const ExperimentSpec spec = load_spec(test_support::write_text(dir, "mini.json", json.dump()));
  const Plan plan = make_plan(spec);
  const Job& evaluate = plan.job("mini/qasper/evaluate");
  const auto schedule_of = [&](const std::string& method) {
    return search::request_policy(
               method_request(spec, evaluate, spec.method(method), 64, JobSettings{}))
        .params.get(evict::window_params().schedule);
  };
  EXPECT_EQ(schedule_of("Global (uniform)"), "uniform");
  EXPECT_EQ(schedule_of("Global"), "pyramid");
  EXPECT_EQ(schedule_of("PyramidKV"), "pyramid");
}

}  // namespace
}  // namespace kvs::experiment
