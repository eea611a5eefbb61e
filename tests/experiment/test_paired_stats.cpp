// The paired statistics (experiment/paired_stats.h) on fixed inputs: exact sign-test values, Holm's
// adjusted p-values, what the paired and stratified bootstraps must give where the answer is known,
// the edge cases (one question, all ties, identical methods) and the refusals (empty input,
// mismatched lengths). tests/experiment/test_paired_stats_reference.py checks the same figures
// against numpy and exact fractions through `kvsearch compare`.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiment/paired_stats.h"

namespace kvs::experiment {
namespace {

// The message of the kvs::Error that `f` throws; fails the test when it throws none.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a kvs::Error";
  return "";
}

TEST(PairedStats, MeanIntervalContainsTheMeanAndReportsItsSettings) {
  const std::vector<double> scores{0, 100, 100, 0, 50, 100, 25, 75, 100, 0};
  const Estimate e = mean_with_interval(scores, {7, 2000});
  EXPECT_DOUBLE_EQ(e.value, 55.0);
  EXPECT_LE(e.low, e.value);
  EXPECT_GE(e.high, e.value);
  EXPECT_GE(e.low, 0.0);
  EXPECT_LE(e.high, 100.0);
  EXPECT_LT(e.low, e.high);
  EXPECT_EQ(e.n, 10);
  EXPECT_EQ(e.bootstrap.seed, 7u);
  EXPECT_EQ(e.bootstrap.resamples, 2000);
}

TEST(PairedStats, BootstrapIsSeededAndDefaultsToSeedZeroAndTenThousandResamples) {
  std::vector<double> scores;
  for (int i = 0; i < 12; ++i) scores.push_back(std::fmod(i * 37.31, 100.0));
  const Estimate a = mean_with_interval(scores), b = mean_with_interval(scores);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_EQ(a.bootstrap.seed, 0u);
  EXPECT_EQ(a.bootstrap.resamples, 10000);
  const Estimate c = mean_with_interval(scores, {1, 10000});
  EXPECT_NE(c.low, a.low);
  EXPECT_NE(c.high, a.high);
}

TEST(PairedStats, BootstrapIsTheSameOnEveryMachine) {
  // mt19937_64 and core/rng.h's bounded draw are exact and the sums run in a fixed order, so these
  // figures hold on every machine (to a few ulps where a compiler fuses a multiply-add): a change
  // here is a change of the draws, and every recorded interval moves with it.
  const Estimate e =
      mean_with_interval({12.5, 80, 33.25, 0, 100, 61.75, 47, 5.5, 90, 72.25}, {0, 1000});
  EXPECT_DOUBLE_EQ(e.value, 50.225);
  EXPECT_DOUBLE_EQ(e.low, 30.16875);
  EXPECT_DOUBLE_EQ(e.high, 71.9);
  const Estimate m = macro_average({{12.5, 80, 33.25}, {0, 100, 61.75, 47}}, {42, 1000});
  EXPECT_DOUBLE_EQ(m.value, 47.052083333333329);
  EXPECT_DOUBLE_EQ(m.low, 23.302083333333336);
  EXPECT_DOUBLE_EQ(m.high, 70.802083333333343);
}

TEST(PairedStats, OneQuestion) {
  const Estimate m = mean_with_interval({42.5});
  EXPECT_EQ(m.value, 42.5);
  EXPECT_EQ(m.low, 42.5);
  EXPECT_EQ(m.high, 42.5);
  const PairedComparison c = compare_paired({70}, {30});
  EXPECT_EQ(c.difference.value, 40);
  EXPECT_EQ(c.difference.low, 40);
  EXPECT_EQ(c.difference.high, 40);
  EXPECT_EQ(c.wins, 1);
  EXPECT_EQ(c.losses, 0);
  EXPECT_EQ(c.ties, 0);
  EXPECT_EQ(c.p, 1.0);  // one non-tied pair: both tails hold probability 1/2
}

TEST(PairedStats, AllTies) {
  const PairedComparison c = compare_paired({0, 100, 50, 100}, {0, 100, 50, 100});
  EXPECT_EQ(c.ties, 4);
  EXPECT_EQ(c.wins + c.losses, 0);
  EXPECT_EQ(c.p, 1.0);
  EXPECT_EQ(c.difference.value, 0);
  EXPECT_EQ(c.difference.low, 0);
  EXPECT_EQ(c.difference.high, 0);
}

TEST(PairedStats, IdenticalMethodsGiveZeroDifferenceAndPOne) {
  std::vector<double> a;
  for (int i = 0; i < 200; ++i) a.push_back((i * 37) % 101);
  const PairedComparison c = compare_paired(a, a);
  EXPECT_EQ(c.mean_a, c.mean_b);
  EXPECT_EQ(c.difference.value, 0);
  EXPECT_EQ(c.difference.low, 0);
  EXPECT_EQ(c.difference.high, 0);
  EXPECT_EQ(c.ties, 200);
  EXPECT_EQ(c.p, 1.0);
}

TEST(PairedStats, ScoresWithinTheToleranceTie) {
  const PairedComparison c = compare_paired({100.0 / 3, 50}, {33.333333333333336, 49});
  EXPECT_EQ(c.ties, 1);
  EXPECT_EQ(c.wins, 1);
}

TEST(PairedStats, ThePairedBootstrapResamplesQuestionIndices) {
  // B = A - 10 on every question: the paired difference does not vary, however much A does.
  std::vector<double> a, b;
  for (int i = 0; i < 50; ++i) {
    a.push_back(i % 2 ? 90 : 20);
    b.push_back(a.back() - 10);
  }
  const PairedComparison c = compare_paired(a, b);
  EXPECT_DOUBLE_EQ(c.difference.value, 10);
  EXPECT_DOUBLE_EQ(c.difference.low, 10);
  EXPECT_DOUBLE_EQ(c.difference.high, 10);
  EXPECT_EQ(c.wins, 50);
  EXPECT_DOUBLE_EQ(c.p, 2.0 / (1ull << 50));
}

TEST(PairedStats, WinsLossesTiesAndTheirSignTest) {
  const PairedComparison c = compare_paired({100, 100, 0, 50, 100, 100, 100, 100, 100, 0},
                                            {0, 0, 100, 50, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(c.wins, 7);
  EXPECT_EQ(c.losses, 1);
  EXPECT_EQ(c.ties, 2);
  EXPECT_DOUBLE_EQ(c.p, 2.0 * (1 + 8) / 256);
  EXPECT_DOUBLE_EQ(c.difference.value, 60);
}

TEST(PairedStats, SignTestIsExact) {
  EXPECT_EQ(sign_test_p(0, 0), 1.0);
  EXPECT_EQ(sign_test_p(1, 0), 1.0);
  EXPECT_EQ(sign_test_p(5, 5), 1.0);
  EXPECT_DOUBLE_EQ(sign_test_p(0, 10), 2.0 / 1024);
  EXPECT_DOUBLE_EQ(sign_test_p(7, 2), 92.0 / 512);
  EXPECT_DOUBLE_EQ(sign_test_p(2, 7), 92.0 / 512);
  EXPECT_DOUBLE_EQ(sign_test_p(0, 5), 2.0 / 32);
  // Exact binomial sums (Python's fractions and math.comb), to 1e-12.
  EXPECT_NEAR(sign_test_p(40, 60), 0.05688793364098079, 1e-12);
  EXPECT_NEAR(sign_test_p(1450, 1550), 0.07066904481175774, 1e-12);
  EXPECT_NEAR(sign_test_p(1499, 1501), 0.9854339014842043, 1e-12);
  // Far below double's range: a p-value of 0 (underflow), never NaN or an exception.
  EXPECT_EQ(sign_test_p(0, 3000), 0.0);
  EXPECT_THROW(sign_test_p(-1, 2), Error);
}

TEST(PairedStats, MacroAverageWeighsDatasetsEquallyAndResamplesWithinEach) {
  // Constant within each dataset: a stratified bootstrap cannot move the macro average, while
  // pooling the questions would weigh the larger dataset more.
  const Estimate m = macro_average({{100, 100}, {0, 0, 0, 0}});
  EXPECT_DOUBLE_EQ(m.value, 50);
  EXPECT_DOUBLE_EQ(m.low, 50);
  EXPECT_DOUBLE_EQ(m.high, 50);
  EXPECT_EQ(m.n, 6);
  const Estimate varied = macro_average({{0, 100, 50, 25}, {10, 20, 90}}, {3, 5000});
  EXPECT_DOUBLE_EQ(varied.value, (43.75 + 40) / 2);
  EXPECT_LT(varied.low, varied.value);
  EXPECT_GT(varied.high, varied.value);
  EXPECT_EQ(varied.bootstrap.seed, 3u);
}

TEST(PairedStats, HolmAdjustsStepDownMonotoneAndCapped) {
  const HolmResult h = holm({0.01, 0.04, 0.03, 0.005});
  // Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max.
  const std::vector<double> expected{0.03, 0.06, 0.06, 0.02};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(h.adjusted[i], expected[i], 1e-15) << i;
  EXPECT_EQ(h.rejected, (std::vector<bool>{true, false, false, true}));
  const HolmResult capped = holm({0.5, 0.6, 0.9});
  EXPECT_EQ(capped.adjusted, (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(capped.rejected, (std::vector<bool>{false, false, false}));
  const HolmResult one = holm({0.05});
  EXPECT_EQ(one.adjusted[0], 0.05);
  EXPECT_TRUE(one.rejected[0]);  // at alpha = 0.05, inclusive
  EXPECT_FALSE(holm({0.04}, 0.01).rejected[0]);
}

TEST(PairedStats, EmptyInputIsAClearError) {
  EXPECT_NE(error_of([] { mean_with_interval({}); }).find("no scores"), std::string::npos);
  EXPECT_NE(error_of([] { compare_paired({}, {}); }).find("no scores"), std::string::npos);
  EXPECT_NE(error_of([] { macro_average({}); }).find("no datasets"), std::string::npos);
  EXPECT_NE(error_of([] {
              macro_average({{1, 2}, {}});
            }).find("dataset 1: no scores"),
            std::string::npos);
  EXPECT_NE(error_of([] { holm({}); }).find("no p-values"), std::string::npos);
}

TEST(PairedStats, MismatchedLengthsAreAClearError) {
  const std::string message = error_of([] { compare_paired({1, 2, 3}, {1, 2}); });
  EXPECT_NE(message.find("method A has 3 scores and method B 2"), std::string::npos) << message;
}

TEST(PairedStats, BadValuesAreRefused) {
  EXPECT_NE(error_of([] {
              mean_with_interval({1, std::nan("")});
            }).find("score 1 is not a finite number"),
            std::string::npos);
  EXPECT_NE(error_of([] { mean_with_interval({1}, {0, 0}); }).find("resamples"), std::string::npos);
  EXPECT_NE(error_of([] { holm({0.5, 1.5}); }).find("p-value 1"), std::string::npos);
}

}  // namespace
}  // namespace kvs::experiment
