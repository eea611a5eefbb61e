#include "longbench/pyfloat.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace kvs::longbench {

namespace {

// Round to the nearest integer, ties to even, independent of the floating-point environment.
double round_half_even(double x) {
  const double floor = std::floor(x);
  const double diff = x - floor;  // exact for every double
  if (diff > 0.5) return floor + 1.0;
  if (diff < 0.5) return floor;
  return std::fmod(floor, 2.0) == 0.0 ? floor : floor + 1.0;
}

// numpy's pairwise_sum for float64 (loops_utils.h): blocks of at most 128 summed with eight
// accumulators, larger ranges split in two at a multiple of eight.
double pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

}  // namespace

double python_round2(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  // x = m * 2^e exactly with an integer m < 2^53. 100 * x = 100 * m * 2^e: for e >= 0 it is an
  // integer already; otherwise divide 100 * m (< 2^60) by 2^-e exactly with integer arithmetic.
  int exponent = 0;
  const double mantissa = std::frexp(std::fabs(x), &exponent);  // |x| = mantissa * 2^exponent
  const auto m = static_cast<uint64_t>(std::ldexp(mantissa, 53));
  const int e = exponent - 53;
  if (e >= 0) return x;
  const int shift = -e;
  unsigned __int128 scaled = static_cast<unsigned __int128>(m) * 100u;
  unsigned __int128 quotient = 0;
  if (shift < 120) {
    quotient = scaled >> shift;
    const unsigned __int128 remainder = scaled - (quotient << shift);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    if (remainder > half || (remainder == half && (quotient & 1) != 0)) ++quotient;
  }
  // quotient / 100 with one correctly rounded division is what Python's strtod of the decimal
  // string yields (quotient < 2^53 is exact as a double).
  const double result = static_cast<double>(quotient) / 100.0;
  return std::signbit(x) ? -result : result;
}

double numpy_round2(double x) {
  if (!std::isfinite(x)) return x;
  return round_half_even(x * 100.0) / 100.0;
}

double numpy_mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return pairwise_sum(values.data(), values.size()) / static_cast<double>(values.size());
}

std::string python_json_float(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  // Shortest digit string that reads back as x (what repr uses since Python 3.1).
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision - 1, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  // buf = [-]d[.ddd]e[+-]XX: split into sign, digits and the decimal exponent.
  std::string text(buf);
  std::string sign;
  if (text[0] == '-') sign = "-", text.erase(0, 1);
  const size_t e_pos = text.find('e');
  std::string digits = text.substr(0, e_pos);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exp10 = std::atoi(text.c_str() + e_pos + 1);
  const int point = exp10 + 1;  // x = 0.digits * 10^point
  const int n = static_cast<int>(digits.size());
  std::string out;
  if (point > -4 && point <= 16) {  // repr's fixed notation, always with a fractional part
    if (point <= 0) {
      out = "0." + std::string(-point, '0') + digits;
    } else if (point >= n) {
      out = digits + std::string(point - n, '0') + ".0";
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
  } else {
    out = digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    const int shown = point - 1;
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", shown < 0 ? '-' : '+', std::abs(shown));
    out += exp_buf;
  }
  return sign + out;
}

}  // namespace kvs::longbench
