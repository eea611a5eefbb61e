#include "ruler/length_fit.h"

#include <algorithm>
#include <optional>

#include "core/error.h"

namespace kvs::ruler {

namespace {

constexpr int64_t kMaxUnits = int64_t{1} << 40;

}  // namespace

FittedSample fit_to_length(int64_t target, int64_t min_units, int64_t max_units, int64_t hint,
                           const std::function<Sample(int64_t units)>& make,
                           const std::function<int64_t(const Sample&)>& length_of,
                           const std::string& what) {
  std::optional<FittedSample> best;  // the largest fitting probe so far
  const auto fits = [&](int64_t units) {
    Sample s = make(units);
    const int64_t length = length_of(s);
    if (length > target) return false;
    if (!best || units > best->units) best = FittedSample{std::move(s), units, length};
    return true;
  };
  if (!fits(min_units))
    throw Error("--lengths: " + std::to_string(target) + " tokens is below the size of " + what +
                " itself (" + std::to_string(length_of(make(min_units))) +
                " tokens with the smallest haystack)");
  max_units = std::min(max_units, kMaxUnits);
  int64_t lo = min_units, hi;  // fits(lo); !fits(hi) or hi > max_units
  const int64_t start = std::clamp(hint, min_units, std::max(min_units, max_units));
  if (fits(start)) {
    lo = start;
    int64_t step = 1;
    while (lo + step <= max_units && fits(lo + step)) lo += step, step *= 2;
    hi = std::min(lo + step, max_units + 1);
  } else {
    hi = start;
    int64_t step = 1;
    while (hi - step > min_units && !fits(hi - step)) hi -= step, step *= 2;
    lo = std::max(min_units, hi - step);
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return std::move(*best);
}

}  // namespace kvs::ruler
