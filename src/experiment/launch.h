// `kvsearch experiment run`: the jobs of the plan not finished yet, run here (each job its own
// kvsearch process, up to --jobs at a time) or as Slurm array jobs (one task per job, one array
// per stage, stage 2 after stage 1), then every job database merged into <out>/results.sqlite and
// a summary with the prefills each job ran. Rerunning skips finished jobs.
#pragma once

#include <string>
#include <vector>

#include "experiment/job.h"
#include "experiment/plan.h"
#include "experiment/spec.h"

namespace kvs::experiment {

struct LaunchOptions {
  std::string launcher = "local";  // local | slurm
  int jobs = 1;                    // local: jobs at once
  int threads = 0;                 // local: LibTorch threads per job; 0: cores / jobs
  bool wait = true;                // slurm: wait for the arrays, then merge
  SlurmResources slurm;            // the spec's, with the flags applied
  JobSettings settings;
};

struct ExperimentRun {
  std::string summary;    // the jobs with their status and prefills, and what was merged
  size_t unfinished = 0;  // jobs still unfinished after the launch (0 when not waiting for Slurm)
};
ExperimentRun run_experiment(const ExperimentSpec& spec, const LaunchOptions& options);

// The command that runs plan job `index` ("$SLURM_ARRAY_TASK_ID" in an sbatch script).
std::vector<std::string> job_command(const ExperimentSpec& spec, const LaunchOptions& options,
                                     const std::string& index);

// The launchers, given the indices of the jobs to run (in plan order). Local returns the indices
// whose process failed; Slurm returns the submitted Slurm job ids (one per stage).
std::vector<size_t> launch_local(const ExperimentSpec& spec, const Plan& plan,
                                 const std::vector<size_t>& todo, const LaunchOptions& options);
std::vector<std::string> launch_slurm(const ExperimentSpec& spec, const Plan& plan,
                                      const std::vector<size_t>& todo, const LaunchOptions& options);

// Where a job's output goes when a launcher runs it.
std::string job_log(const std::string& out_dir, const Job& job);

}  // namespace kvs::experiment
