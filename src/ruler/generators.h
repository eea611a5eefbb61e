// The task families' generators. Each builds one sample from `units` haystack units (niah: noise
// lines, distractor needles or essay words; vt: noise lines; cwe: distinct words; fwe: coded words)
// and the draws of `gen`; the length fit (length_fit.h) chooses units.
#pragma once

#include <cstdint>
#include <random>

#include "ruler/sample.h"
#include "ruler/tasks.h"

namespace kvs::ruler {

Sample generate_niah(const TaskSpec& task, const Resources& res, int64_t units, std::mt19937_64& gen);
Sample generate_variable_tracking(const TaskSpec& task, const Resources& res, int64_t units,
                                  std::mt19937_64& gen);
Sample generate_common_words(const TaskSpec& task, const Resources& res, int64_t units,
                             std::mt19937_64& gen);
Sample generate_freq_words(const TaskSpec& task, const Resources& res, int64_t units,
                           std::mt19937_64& gen);

// The family's generator; qa has none yet (kvs::Error).
Sample generate_sample(const TaskSpec& task, const Resources& res, int64_t units, std::mt19937_64& gen);

// The fewest units a sample of the task can have.
int64_t min_units(const TaskSpec& task);

}  // namespace kvs::ruler
