// The benches' summary of repeated samples: median, lowest and highest.
#include <gtest/gtest.h>

#include "bench/bench_probes.h"
#include "core/error.h"

namespace kvs::test {
namespace {

TEST(BenchProbes, SpreadIsTheMedianAndTheExtremes) {
  const bench::Spread odd = bench::spread_of({5.0, 1.0, 3.0});
  EXPECT_DOUBLE_EQ(odd.median, 3.0);
  EXPECT_DOUBLE_EQ(odd.low, 1.0);
  EXPECT_DOUBLE_EQ(odd.high, 5.0);
  EXPECT_DOUBLE_EQ(odd.relative(), 4.0 / 3.0);
  const bench::Spread even = bench::spread_of({4.0, 1.0, 2.0, 10.0});
  EXPECT_DOUBLE_EQ(even.median, 3.0);
  EXPECT_DOUBLE_EQ(even.high, 10.0);
  const bench::Spread one = bench::spread_of({2.5});
  EXPECT_DOUBLE_EQ(one.median, 2.5);
  EXPECT_DOUBLE_EQ(one.relative(), 0.0);
}

TEST(BenchProbes, NoSamplesIsAnError) { EXPECT_THROW(bench::spread_of({}), kvs::Error); }

}  // namespace
}  // namespace kvs::test
