// The task families' generators. Each builds one sample from `units` haystack units (niah: noise
// lines, distractor needles or essay words; vt: noise lines; cwe: distinct words; fwe: coded words;
// qa: documents) and the draws of `gen`; the length fit (length_fit.h) chooses units.
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
Sample generate_qa(const TaskSpec& task, const Resources& res, int64_t units, std::mt19937_64& gen);

// qa: the task's corpus; kvs::Error when the file was not given or has no question
// res.question_index.
const QaCorpus& qa_corpus(const TaskSpec& task, const Resources& res);

// The family's generator.
Sample generate_sample(const TaskSpec& task, const Resources& res, int64_t units, std::mt19937_64& gen);

// The fewest and the most units a sample of the task can have (qa: the question's own documents,
// and every document of the file; the others have no upper bound).
int64_t min_units(const TaskSpec& task, const Resources& res);
int64_t max_units(const TaskSpec& task, const Resources& res);

}  // namespace kvs::ruler
