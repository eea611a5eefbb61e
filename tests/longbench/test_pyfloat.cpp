#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "longbench/pyfloat.h"

namespace {

using namespace kvs::longbench;

TEST(PyFloat, PythonRoundIsExactDecimalHalfEven) {
  EXPECT_EQ(python_round2(0.125), 0.12);   // exact tie: to even
  EXPECT_EQ(python_round2(0.375), 0.38);
  EXPECT_EQ(python_round2(2.675), 2.67);   // 2.67499999... in binary
  EXPECT_EQ(python_round2(1.005), 1.0);
  EXPECT_EQ(python_round2(0.015), 0.01);
  EXPECT_EQ(python_round2(18.985), 18.98);
  EXPECT_EQ(python_round2(64.5), 64.5);
  EXPECT_EQ(python_round2(1e-7), 0.0);
  EXPECT_EQ(python_round2(100.0), 100.0);
  EXPECT_EQ(python_round2(1e300), 1e300);
  EXPECT_EQ(python_round2(-2.675), -2.67);
  EXPECT_TRUE(std::isnan(python_round2(NAN)));
}

TEST(PyFloat, NumpyRoundScalesFirst) {
  EXPECT_EQ(numpy_round2(2.675), 2.68);  // 267.49999999999997 * ... rounds to 267.5 first
  EXPECT_EQ(numpy_round2(0.015), 0.02);
  EXPECT_EQ(numpy_round2(0.005), 0.0);   // 0.5 ties to even
  EXPECT_EQ(numpy_round2(0.125), 0.12);
  EXPECT_EQ(numpy_round2(18.985), 18.98);
  EXPECT_TRUE(std::isnan(numpy_round2(NAN)));
}

TEST(PyFloat, NumpyMeanSumsPairwise) {
  EXPECT_TRUE(std::isnan(numpy_mean({})));
  EXPECT_EQ(numpy_mean({0.5, 0.25}), 0.375);
  // 0.1 nine times: eight accumulators then the tail give exactly 0.9; a running sum does not.
  const std::vector<double> tenths(9, 0.1);
  double running = 0;
  for (double v : tenths) running += v;
  EXPECT_EQ(numpy_mean(tenths), 0.1);
  EXPECT_EQ(running / 9, 0.09999999999999999);
}

TEST(PyFloat, ReprAsJsonDumpWritesIt) {
  EXPECT_EQ(python_json_float(18.99), "18.99");
  EXPECT_EQ(python_json_float(64.5), "64.5");
  EXPECT_EQ(python_json_float(50.0), "50.0");
  EXPECT_EQ(python_json_float(0.0), "0.0");
  EXPECT_EQ(python_json_float(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(python_json_float(100.0 / 3), "33.333333333333336");
  EXPECT_EQ(python_json_float(0.0001), "0.0001");
  EXPECT_EQ(python_json_float(0.00001), "1e-05");
  EXPECT_EQ(python_json_float(1e16), "1e+16");
  EXPECT_EQ(python_json_float(1e15), "1000000000000000.0");
  EXPECT_EQ(python_json_float(1.2345678901234568e+17), "1.2345678901234568e+17");
  EXPECT_EQ(python_json_float(-0.5), "-0.5");
  EXPECT_EQ(python_json_float(NAN), "NaN");
  EXPECT_EQ(python_json_float(INFINITY), "Infinity");
}

}  // namespace
