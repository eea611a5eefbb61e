#include "ruler/generators.h"

#include <limits>

#include "core/error.h"

namespace kvs::ruler {

Sample generate_sample(const TaskSpec& task, const Resources& res, int64_t units, std::mt19937_64& gen) {
  switch (task.family) {
    case Family::Niah:
      return generate_niah(task, res, units, gen);
    case Family::VariableTracking:
      return generate_variable_tracking(task, res, units, gen);
    case Family::CommonWords:
      return generate_common_words(task, res, units, gen);
    case Family::FreqWords:
      return generate_freq_words(task, res, units, gen);
    case Family::Qa:
      return generate_qa(task, res, units, gen);
  }
  throw Error(task.name + ": unknown task family");
}

int64_t min_units(const TaskSpec& task, const Resources& res) {
  switch (task.family) {
    case Family::Niah:
      return task.niah.num_keys * task.niah.num_values;  // a line haystack needs a line per needle
    case Family::VariableTracking:
      return task.vt.num_chains * (task.vt.num_hops + 1);
    case Family::CommonWords:
      return task.cwe.num_common + 1;
    case Family::FreqWords:
      return 100;  // enough copies that ranks 2-4 have distinct, non-zero counts
    case Family::Qa:
      return static_cast<int64_t>(
          qa_corpus(task, res).questions[res.question_index].own_documents.size());
  }
  return 1;
}

int64_t max_units(const TaskSpec& task, const Resources& res) {
  if (task.family == Family::Qa) return static_cast<int64_t>(qa_corpus(task, res).documents.size());
  return std::numeric_limits<int64_t>::max();
}

}  // namespace kvs::ruler
