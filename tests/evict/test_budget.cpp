#include <gtest/gtest.h>

#include <numeric>

#include "core/error.h"
#include "evict/budget.h"

namespace {

using kvs::evict::BudgetSpec;
using kvs::evict::layer_budgets;
using kvs::evict::Schedule;

int64_t total(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

BudgetSpec pyramid(int64_t budget) {
  BudgetSpec spec;
  spec.schedule = Schedule::Pyramid;
  spec.budget = budget;
  return spec;
}

// docs/reference.md §2: W = 8, L = 32, a prompt long enough for the unclamped schedule.
TEST(Budget, PyramidMatchesReferenceArithmetic) {
  struct Case {
    int64_t budget, first, last, sum;
  };
  for (const Case c : {Case{32, 47, 16, 1008}, Case{64, 110, 17, 2032}, Case{128, 234, 17, 4016},
                       Case{2048, 3978, 103, 65296}}) {
    const auto b = layer_budgets(pyramid(c.budget), 20000, 32);
    ASSERT_TRUE(b.compress);
    ASSERT_EQ(b.selected.size(), 32u);
    EXPECT_EQ(b.selected.front(), c.first) << "B = " << c.budget;
    EXPECT_EQ(b.selected.back(), c.last) << "B = " << c.budget;
    EXPECT_EQ(total(b.selected), c.sum) << "B = " << c.budget;
    const int64_t step = b.selected[0] - b.selected[1];  // a straight line from first to last
    for (size_t l = 0; l < 32; ++l)
      EXPECT_EQ(b.selected[l], c.first - static_cast<int64_t>(l) * step);
  }
}

TEST(Budget, PyramidClampsTheTopToThePrompt) {
  // B = 64, n = 115: max = min(110, n - W = 107), min = 112 - 107 = 5, step = 102 / 31 = 3.
  const auto b = layer_budgets(pyramid(64), 115, 32);
  ASSERT_TRUE(b.compress);
  EXPECT_EQ(b.selected.front(), 107);
  EXPECT_EQ(b.selected.back(), 107 - 31 * 3);
}

TEST(Budget, ShortPromptsKeepEverythingOrFallBackToUniform) {
  EXPECT_FALSE(layer_budgets(pyramid(64), 63, 32).compress);
  BudgetSpec uniform;
  uniform.budget = 64;
  EXPECT_FALSE(layer_budgets(uniform, 63, 32).compress);
  // n < 2 (B - W) = 112: PyramidKV selects the uniform B - W.
  const auto b = layer_budgets(pyramid(64), 111, 32);
  ASSERT_TRUE(b.compress);
  for (int64_t s : b.selected) EXPECT_EQ(s, 56);
  const auto u = layer_budgets(uniform, 64, 4);
  ASSERT_TRUE(u.compress);
  EXPECT_EQ(u.selected, (std::vector<int64_t>{56, 56, 56, 56}));
}

TEST(Budget, RedistributeKeepsTheShapeAndTheUniformTotal) {
  for (int64_t budget : {32, 64, 128, 2048}) {
    for (int64_t n : {int64_t{2 * budget}, int64_t{2 * budget + 37}, int64_t{20000}}) {
      BudgetSpec spec = pyramid(budget);
      spec.redistribute = true;
      const auto b = layer_budgets(spec, n, 32);
      ASSERT_TRUE(b.compress);
      EXPECT_EQ(total(b.selected), 32 * (budget - 8)) << "B = " << budget << ", n = " << n;
      for (size_t l = 0; l < b.selected.size(); ++l) {
        EXPECT_GE(b.selected[l], 0);
        EXPECT_LE(b.selected[l], n - 8);
        if (l > 0) {
          EXPECT_LE(b.selected[l], b.selected[l - 1]);
        }
      }
    }
  }
  BudgetSpec spec = pyramid(64);
  spec.redistribute = true;
  const auto b = layer_budgets(spec, 20000, 32);
  EXPECT_GE(b.selected.front(), 110);  // the slope of the reference survives
  EXPECT_LE(b.selected.back(), 4);
}

TEST(Budget, OneLayerHasNoSlope) {
  const auto b = layer_budgets(pyramid(64), 20000, 1);
  EXPECT_EQ(b.selected, (std::vector<int64_t>{56}));
}

TEST(Budget, RejectsBudgetsThatDoNotHoldTheWindow) {
  BudgetSpec spec;
  spec.budget = 7;  // the window is 8
  try {
    layer_budgets(spec, 100, 32);
    FAIL() << "expected an error";
  } catch (const kvs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("budget"), std::string::npos) << e.what();
  }
  spec.budget = 64;
  spec.window = 0;
  EXPECT_THROW(layer_budgets(spec, 100, 32), kvs::Error);
  spec.window = 8;
  EXPECT_THROW(layer_budgets(spec, 100, 0), kvs::Error);
}

}  // namespace
