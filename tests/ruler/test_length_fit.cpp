#include "ruler/length_fit.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"

namespace kvs::ruler {
namespace {

// A sample of `units` units costs 10 fixed tokens plus 3 per unit.
Sample make(int64_t units) {
  Sample s;
  s.context = std::string(static_cast<size_t>(units), 'x');
  return s;
}
int64_t cost(const Sample& s) { return 10 + 3 * static_cast<int64_t>(s.context.size()); }

TEST(LengthFit, FindsTheLargestFittingUnitsFromAnyHint) {
  for (int64_t hint : {0, 1, 5, 33, 34, 1000}) {
    const FittedSample f = fit_to_length(112, 1, 1000, hint, make, cost, "toy");
    EXPECT_EQ(f.units, 34) << "hint " << hint;  // 10 + 3 * 34 = 112
    EXPECT_EQ(f.length, 112);
    EXPECT_EQ(f.sample.context.size(), 34u);
  }
  EXPECT_EQ(fit_to_length(114, 1, 1000, 0, make, cost, "toy").units, 34);  // 115 would overflow
}

TEST(LengthFit, StopsAtMaxUnitsWhenEverythingFits) {
  for (int64_t hint : {0, 7, 20, 1000}) {
    int64_t probes = 0, largest = 0;
    const auto counted = [&](int64_t units) {
      ++probes;
      largest = std::max(largest, units);
      return make(units);
    };
    const FittedSample f = fit_to_length(112, 1, 20, hint, counted, cost, "toy");
    EXPECT_EQ(f.units, 20) << "hint " << hint;  // 70 tokens: all 20 units fit
    EXPECT_EQ(f.length, 70);
    EXPECT_EQ(largest, 20) << "hint " << hint;  // never probes past the most there are
    EXPECT_LE(probes, 12) << "hint " << hint;
  }
}

TEST(LengthFit, TargetBelowTheSmallestSampleNamesTheOption) {
  try {
    fit_to_length(12, 1, 1000, 0, make, cost, "toy");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--lengths"), std::string::npos) << what;
    EXPECT_NE(what.find("13 tokens"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kvs::ruler
