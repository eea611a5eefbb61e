// One job of an experiment, run in this process into its own database (plan.h says where):
// `kvsearch experiment job`, which the local launcher and every Slurm array task call. A finished
// job is skipped; an interrupted one resumes (searches state by state, evaluations run by run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "experiment/plan.h"
#include "experiment/spec.h"
#include "model/runtime.h"
#include "store/records.h"

namespace kvs::experiment {

// Where the model and data are and how to run them (not part of the results' identity).
struct JobSettings {
  std::string model_dir;
  std::string longbench_dir;
  std::string out_dir;
  model::LoadOptions load;
  std::string command_line;
};

struct JobOutcome {
  std::string key;
  bool skipped = false;   // already finished
  int64_t prefills = 0;   // prefills this invocation ran
  int64_t policy_question_evaluations = 0;  // prefills it would have run without sharing
  std::string summary;    // one line
};

JobOutcome run_job(const ExperimentSpec& spec, const Plan& plan, size_t index, const JobSettings& settings);

// The job's row in its database, when the database exists and holds it; not finished when the job's
// spec has grown since it was recorded.
std::optional<store::Job> recorded_job(const std::string& out_dir, const Job& job);

}  // namespace kvs::experiment
