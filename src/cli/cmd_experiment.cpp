// kvsearch experiment plan / run / job: the batch jobs of an experiment spec (experiments/*.json).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "core/error.h"
#include "core/settings.h"
#include "experiment/job.h"
#include "experiment/launch.h"
#include "experiment/plan.h"
#include "experiment/spec.h"

namespace {

using kvs::experiment::ExperimentSpec;

// The flags every command that runs jobs takes: where the model and data are (flag > spec >
// KVSEARCH_* environment > config file), where results go, and how to run the model.
struct RunFlags {
  std::string spec_path;
  std::string model_dir;
  std::string longbench_dir;
  std::string out_dir;
  kvs::model::LoadOptions load;

  void add(CLI::App* cmd) {
    cmd->add_option("spec", spec_path, "Experiment spec (experiments/*.json)")->required();
    cmd->add_option("--model", model_dir, "Checkpoint directory (overrides the spec's)");
    cmd->add_option("--longbench", longbench_dir, "LongBench directory (overrides the spec's)");
    cmd->add_option("--out", out_dir, "Output directory (default results/<experiment name>)");
    cmd->add_option("--device", load.device, "auto | cpu | cuda")->capture_default_str();
    cmd->add_option("--dtype", load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  }

  kvs::experiment::JobSettings settings(const ExperimentSpec& spec) const {
    kvs::experiment::JobSettings s;
    s.model_dir = kvs::resolve_setting(kvs::kModelSetting, model_dir.empty() ? spec.model : model_dir);
    s.longbench_dir =
        kvs::resolve_setting(kvs::kLongBenchSetting, longbench_dir.empty() ? spec.longbench : longbench_dir);
    s.out_dir = out_dir.empty() ? "results/" + spec.name : out_dir;
    s.load = load;
    s.command_line = kvs::cli::command_line();
    kvs::experiment::check_model_type(spec, s.model_dir);
    return s;
  }
};

void setup_experiment_plan(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("plan", "Print the jobs of an experiment spec");
  auto path = std::make_shared<std::string>();
  auto longbench = std::make_shared<std::string>();
  cmd->add_option("spec", *path, "Experiment spec (experiments/*.json)")->required();
  cmd->add_option("--longbench", *longbench, "LongBench directory (overrides the spec's)");
  cmd->callback([path, longbench] {
    const ExperimentSpec spec = kvs::experiment::load_spec(*path, *longbench);
    std::cout << kvs::experiment::plan_text(spec, kvs::experiment::make_plan(spec));
  });
}

void setup_experiment_run(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("run", "Run the unfinished jobs of an experiment, then merge their results");
  auto flags = std::make_shared<RunFlags>();
  auto options = std::make_shared<kvs::experiment::LaunchOptions>();
  auto resources = std::make_shared<kvs::experiment::SlurmResources>();
  flags->add(cmd);
  cmd->add_option("--launcher", options->launcher, "local | slurm")->capture_default_str();
  cmd->add_option("--jobs", options->jobs, "Local: jobs run at once")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--job-threads", options->threads, "LibTorch threads per job (local default: cores / jobs)");
  cmd->add_flag("!--no-wait", options->wait, "Slurm: submit and return without waiting or merging");
  cmd->add_option("--partition", resources->partition, "Slurm partition (overrides the spec's)");
  cmd->add_option("--time", resources->time, "Slurm time limit per job, e.g. 04:00:00");
  cmd->add_option("--mem", resources->mem, "Slurm memory per job, e.g. 64G");
  cmd->add_option("--gpus", resources->gpus, "Slurm GPUs per job");
  cmd->add_option("--cpus", resources->cpus, "Slurm CPUs per job");
  cmd->callback([flags, options, resources] {
    const ExperimentSpec spec = kvs::experiment::load_spec(flags->spec_path, flags->longbench_dir);
    options->settings = flags->settings(spec);
    options->slurm = spec.slurm;
    if (!resources->partition.empty()) options->slurm.partition = resources->partition;
    if (!resources->time.empty()) options->slurm.time = resources->time;
    if (!resources->mem.empty()) options->slurm.mem = resources->mem;
    if (resources->gpus > 0) options->slurm.gpus = resources->gpus;
    if (resources->cpus > 0) options->slurm.cpus = resources->cpus;
    const auto result = kvs::experiment::run_experiment(spec, *options);
    std::cout << result.summary;
    if (result.unfinished > 0)
      throw kvs::Error(std::to_string(result.unfinished) + " jobs did not finish (see the logs under " +
                       options->settings.out_dir + "); rerun the command to finish them");
  });
}

void setup_experiment_job(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("job", "Run one job of an experiment (what the launchers call)");
  auto flags = std::make_shared<RunFlags>();
  auto index = std::make_shared<size_t>(0);
  flags->add(cmd);
  cmd->add_option("--index", *index, "The job's index in `experiment plan`")->required();
  cmd->callback([flags, index] {
    const ExperimentSpec spec = kvs::experiment::load_spec(flags->spec_path, flags->longbench_dir);
    const auto outcome =
        kvs::experiment::run_job(spec, kvs::experiment::make_plan(spec), *index, flags->settings(spec));
    std::cout << outcome.summary << "\n";
  });
}

const kvs::cli::CommandRegistration experiment_plan_registration("experiment plan",
                                                           setup_experiment_plan);
const kvs::cli::CommandRegistration experiment_run_registration("experiment run",
                                                           setup_experiment_run);
const kvs::cli::CommandRegistration experiment_job_registration("experiment job",
                                                           setup_experiment_job);

}  // namespace
