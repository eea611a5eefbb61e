// Fitting a sample to its token budget: the largest number of haystack units whose whole prompt
// (chat wrapper, task text, answer prefix) plus the tokens to generate fits the target, in the
// model's own tokens. Galloping from a hint (the previous sample's fit) then bisection; every
// probe rebuilds the sample from the same random state, so only the unit count varies.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ruler/sample.h"

namespace kvs::ruler {

struct FittedSample {
  Sample sample;
  int64_t units = 0;
  int64_t length = 0;  // prompt tokens + tokens to generate
};

// Units in [min_units, max_units]; kvs::Error naming --lengths when even `min_units` overflows
// `target` (`what` names the task).
FittedSample fit_to_length(int64_t target, int64_t min_units, int64_t max_units, int64_t hint,
                           const std::function<Sample(int64_t units)>& make,
                           const std::function<int64_t(const Sample&)>& length_of,
                           const std::string& what);

}  // namespace kvs::ruler
