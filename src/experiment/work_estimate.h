// How much work each job of a plan is, for the launcher's progress and ETA: question passes (one
// prefill and its batched decode each) weighted by the dataset's mean record size, a proxy for
// prompt length. Reads only the data files' sizes and line counts. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/plan.h"
#include "experiment/spec.h"

namespace kvs::experiment {

struct JobWork {
  int64_t passes = 0;  // question passes: dev questions x search batches, or dev + test questions
  double weight = 0;   // passes x mean bytes per record of the dataset
};

std::vector<JobWork> estimate_work(const ExperimentSpec& spec, const Plan& plan, const std::string& longbench_dir);

}  // namespace kvs::experiment
