#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "evict/profile.h"

namespace {

using kvs::evict::Profile;
using kvs::evict::ProfileKind;

TEST(Profile, GlobalIsConstantAndLambdaIsSinh) {
  const Profile p = Profile::global_lambda(-0.15);
  for (int64_t l = 0; l < 32; ++l) EXPECT_NEAR(p.lambda_at(l, 32), -0.15, 1e-15);
  EXPECT_DOUBLE_EQ(Profile::global(0.7).lambda_at(5, 32), std::sinh(0.7));
}

TEST(Profile, SegmentsSplitTheDepthByFloor) {
  const Profile p = Profile::segments({1.0, 2.0, 3.0});
  // floor(l * 3 / 32): layers 0-10 -> 0, 11-21 -> 1, 22-31 -> 2.
  EXPECT_EQ(p.a_at(0, 32), 1.0);
  EXPECT_EQ(p.a_at(10, 32), 1.0);
  EXPECT_EQ(p.a_at(11, 32), 2.0);
  EXPECT_EQ(p.a_at(21, 32), 2.0);
  EXPECT_EQ(p.a_at(22, 32), 3.0);
  EXPECT_EQ(p.a_at(31, 32), 3.0);
  const Profile eight = Profile::segments({0, 1, 2, 3, 4, 5, 6, 7});
  for (int64_t l = 0; l < 32; ++l) EXPECT_EQ(eight.a_at(l, 32), static_cast<double>(l / 4));
}

TEST(Profile, CurveIsQuadraticInRelativeDepth) {
  const Profile p = Profile::curve(0.5, -1.0, 2.0);
  EXPECT_DOUBLE_EQ(p.a_at(0, 32), 0.5);
  EXPECT_DOUBLE_EQ(p.a_at(31, 32), 1.5);
  const double t = 10.0 / 31.0;
  EXPECT_DOUBLE_EQ(p.a_at(10, 32), 0.5 - t + 2.0 * t * t);
  EXPECT_DOUBLE_EQ(Profile::curve(0.3, 1, 1).a_at(0, 1), 0.3);
}

TEST(Profile, SegmentsAndCurveContainGlobal) {
  const Profile g = Profile::global(0.4);
  const Profile s = Profile::segments({0.4, 0.4, 0.4});
  const Profile c = Profile::curve(0.4, 0, 0);
  for (int64_t l = 0; l < 32; ++l) {
    EXPECT_EQ(s.lambda_at(l, 32), g.lambda_at(l, 32));
    EXPECT_EQ(c.lambda_at(l, 32), g.lambda_at(l, 32));
  }
}

TEST(Profile, WithParamMovesOneCoordinate) {
  const Profile p = Profile::segments({0, 0, 0}).with_param(1, 0.3);
  EXPECT_EQ(p.params(), (std::vector<double>{0, 0.3, 0}));
  EXPECT_THROW(p.with_param(3, 1.0), kvs::Error);
}

TEST(Profile, RejectsWrongParameterCountsAndValues) {
  EXPECT_THROW(Profile::make(ProfileKind::Global, {1, 2}, "x"), kvs::Error);
  EXPECT_THROW(Profile::make(ProfileKind::Curve, {1, 2}, "x"), kvs::Error);
  EXPECT_THROW(Profile::make(ProfileKind::Segments, {}, "x"), kvs::Error);
  EXPECT_THROW(Profile::global(std::numeric_limits<double>::quiet_NaN()), kvs::Error);
  EXPECT_THROW(Profile::global(0).a_at(32, 32), kvs::Error);
  EXPECT_THROW(kvs::evict::parse_profile_kind("linear", "x"), kvs::Error);
}

}  // namespace
