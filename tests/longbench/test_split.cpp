#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "longbench/split.h"

namespace {

using namespace kvs::longbench;

TEST(Split, PinnedDevIdsForSeed42) {
  // Computed independently (a Python mt19937_64 with the same bounded draw and Fisher-Yates).
  const Split s = make_split(200, 100);
  ASSERT_EQ(s.dev.size(), 100u);
  ASSERT_EQ(s.test.size(), 100u);
  const std::vector<size_t> first = {1, 2, 3, 5, 10, 11, 13, 16, 19, 22,
                                     24, 27, 29, 30, 35, 37, 43, 45, 49, 51};
  EXPECT_EQ(std::vector<size_t>(s.dev.begin(), s.dev.begin() + 20), first);
  EXPECT_EQ(std::vector<size_t>(s.dev.end() - 5, s.dev.end()),
            (std::vector<size_t>{193, 194, 195, 196, 198}));
  const Split code = dataset_split("lcc", 500);
  ASSERT_EQ(code.dev.size(), 250u);
  EXPECT_EQ(std::vector<size_t>(code.dev.begin(), code.dev.begin() + 10),
            (std::vector<size_t>{5, 6, 7, 8, 11, 12, 13, 14, 15, 23}));
  EXPECT_EQ(make_split(12, 5, 7).dev, (std::vector<size_t>{0, 2, 4, 6, 10}));
}

TEST(Split, DevAndTestPartitionTheRecords) {
  const Split s = dataset_split("multifieldqa_en", 150);
  EXPECT_EQ(s.dev.size(), 100u);
  EXPECT_EQ(s.test.size(), 50u);
  std::vector<size_t> all = s.dev;
  all.insert(all.end(), s.test.begin(), s.test.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i);
  EXPECT_NE(make_split(200, 100, 1).dev, make_split(200, 100, 2).dev);
  EXPECT_EQ(make_split(200, 100, 9).dev, make_split(200, 100, 9).dev);
}

TEST(Split, TooFewRecordsIsAnError) {
  EXPECT_THROW(make_split(99, 100), kvs::Error);
  EXPECT_EQ(make_split(100, 100).test.size(), 0u);
}

}  // namespace
