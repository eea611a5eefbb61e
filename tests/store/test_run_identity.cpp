#include <gtest/gtest.h>

#include "store/run_identity.h"
#include "store_fixtures.h"

namespace kvs::store {
namespace {

using test_support::make_spec;

TEST(RunIdentity, DefaultKeyIsReadableAndStable) {
  const RunSpec spec = make_spec("");
  const std::string key = default_run_key(spec);
  EXPECT_EQ(key.rfind("passage_retrieval_en/segments3/B64/seed42/dev20/", 0), 0u) << key;
  EXPECT_EQ(key.size(), std::string("passage_retrieval_en/segments3/B64/seed42/dev20/").size() + 8);
  EXPECT_EQ(default_run_key(spec), key);

  RunSpec reformatted = spec;  // same settings, other formatting and key order
  reformatted.search_json = R"({ "tau": 0.1, "step": 0.3, "max_evals": 14 })";
  EXPECT_EQ(default_run_key(reformatted), key);
  RunSpec other_model = spec;  // left out so that a model change is caught as a mismatch
  other_model.model = "other";
  EXPECT_EQ(default_run_key(other_model), key);

  RunSpec more_evals = spec;
  more_evals.search_json = R"({"max_evals":20,"step":0.3,"tau":0.1})";
  EXPECT_NE(default_run_key(more_evals), key);
  RunSpec other_template = spec;
  other_template.policy_json = R"({"window":8,"selector":"top_k"})";
  EXPECT_NE(default_run_key(other_template), key);

  RunSpec global = spec;
  global.profile_family = "global";
  global.segments = 0;
  global.dev_limit = 0;
  EXPECT_EQ(default_run_key(global).rfind("passage_retrieval_en/global/B64/seed42/", 0), 0u);
}

TEST(RunIdentity, MismatchNamesTheField) {
  const RunSpec recorded = make_spec("k");
  EXPECT_EQ(identity_mismatch(recorded, recorded), "");
  RunSpec other = recorded;
  other.git_commit = "different";
  other.host = "elsewhere";
  EXPECT_EQ(identity_mismatch(recorded, other), "");
  other.dataset = "qasper";
  EXPECT_EQ(identity_mismatch(recorded, other),
            "dataset 'passage_retrieval_en' (recorded) vs 'qasper'");
}

}  // namespace
}  // namespace kvs::store
