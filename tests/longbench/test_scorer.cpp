#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "longbench/scorer.h"

namespace {

using namespace kvs::longbench;

TEST(Scorer, FirstLineRuleOnlyForTheOfficialVariantOfItsDatasets) {
  const std::string pred = "\nParis\nLondon";
  EXPECT_EQ(score_example("triviaqa", pred, {"London"}, {}), 0.0);
  EXPECT_EQ(score_example("triviaqa", pred, {"London"}, {}, ScoreVariant::Raw), 0.6666666666666666);
  EXPECT_EQ(score_example("triviaqa", pred, {"Paris"}, {}), 1.0);
  EXPECT_EQ(score_example("narrativeqa", pred, {"London"}, {}), 0.6666666666666666);
  EXPECT_EQ(score_example("trec", "Date\nOther", {"Other"}, {"Date", "Other"}), 0.0);
  EXPECT_EQ(score_example("trec", "Date\nOther", {"Other"}, {"Date", "Other"}, ScoreVariant::Raw), 0.5);
}

TEST(Scorer, BestOverAnswers) {
  EXPECT_EQ(score_example("hotpotqa", "Paris", {"London", "paris", "Paris France"}, {}), 1.0);
  EXPECT_EQ(score_example("hotpotqa", "Paris", {}, {}), 0.0);
  EXPECT_EQ(score_example("passage_count", "3 or 4", {"4", "3"}, {}), 0.5);
}

TEST(Scorer, UnknownDatasetIsAnError) {
  try {
    score_example("dureader", "x", {"x"}, {});
    FAIL() << "no error";
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown LongBench dataset 'dureader'"), std::string::npos);
  }
}

TEST(Scorer, DatasetScoreRoundsLikePython) {
  EXPECT_EQ(dataset_score({1.0, 0.0, 0.5}), 50.0);
  EXPECT_EQ(dataset_score({1.0 / 3, 1.0 / 3, 1.0 / 3}), 33.33);
  EXPECT_EQ(dataset_score({0.02675}), 2.67);  // 100 * 0.02675 is the double 2.67499999...
  EXPECT_THROW(dataset_score({}), kvs::Error);
}

TEST(Scorer, LengthBuckets) {
  const auto b = length_bucket_scores({1.0, 0.0, 0.5, 1.0}, {3999, 4000, 7999, 8000});
  EXPECT_EQ(b.up_to_4k, 100.0);
  EXPECT_EQ(b.up_to_8k, 25.0);
  EXPECT_EQ(b.above_8k, 100.0);
  const auto empty = length_bucket_scores({0.5}, {100});
  EXPECT_EQ(empty.up_to_4k, 50.0);
  EXPECT_TRUE(std::isnan(empty.up_to_8k));  // np.mean([]) is NaN
  EXPECT_THROW(length_bucket_scores({0.5}, {}), kvs::Error);
}

}  // namespace
