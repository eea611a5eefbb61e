// The float arithmetic of the official scorer's last step, reproduced bit for bit:
// - eval.py's scorer() rounds with Python's round(x, 2): the exact binary value of x rounded to
//   two decimals, ties to even (a tie needs x to be exactly representable, e.g. 0.125);
// - scorer_e() rounds a numpy float64, which numpy does as rint(x * 100) / 100: the product is
//   rounded first, so e.g. 0.015 (0.01499999...) becomes 0.02 where Python gives 0.01;
// - scorer_e() averages with np.mean, whose pairwise summation differs from a running sum;
// - result.json holds repr(float) (shortest round-trip digits), NaN for an empty bucket.
#pragma once

#include <string>
#include <vector>

namespace kvs::longbench {

double python_round2(double x);  // round(x, 2) on a Python float
double numpy_round2(double x);   // round(x, 2) on a numpy.float64

// np.mean of a float64 list: numpy's pairwise sum divided by the count; NaN when empty.
double numpy_mean(const std::vector<double>& values);

// What json.dump writes for a Python float: repr(x), or NaN / Infinity / -Infinity.
std::string python_json_float(double x);

}  // namespace kvs::longbench
