// The Slurm launcher: one sbatch array per stage (one task per job, the task id is the job's plan
// index), stage 2 submitted with afterok on stage 1; with wait, polls squeue until every task has
// left the queue.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "core/log.h"
#include "core/subprocess.h"
#include "experiment/launch.h"

namespace kvs::experiment {

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string write_script(const ExperimentSpec& spec, const LaunchOptions& options, int stage,
                         const std::vector<size_t>& indices) {
  const std::string dir = options.settings.out_dir + "/slurm";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + spec.name + "-stage" + std::to_string(stage) + ".sbatch";
  std::string array;
  for (size_t i : indices) array += (array.empty() ? "" : ",") + std::to_string(i);
  const SlurmResources& r = options.slurm;
  std::ofstream out(path);
  out << "#!/bin/bash\n";
  out << "# kvsearch experiment " << spec.name << ", stage " << stage << ": one array task per job\n";
  out << "#SBATCH --job-name=kvs-" << spec.name << "-" << stage << "\n";
  out << "#SBATCH --array=" << array << "\n";
  out << "#SBATCH --output=" << dir << "/%A_%a.log\n";
  out << "#SBATCH --ntasks=1\n";
  if (!r.partition.empty()) out << "#SBATCH --partition=" << r.partition << "\n";
  if (!r.time.empty()) out << "#SBATCH --time=" << r.time << "\n";
  if (!r.mem.empty()) out << "#SBATCH --mem=" << r.mem << "\n";
  if (r.gpus > 0) out << "#SBATCH --gres=gpu:" << r.gpus << "\n";
  if (r.cpus > 0) out << "#SBATCH --cpus-per-task=" << r.cpus << "\n";
  out << "set -euo pipefail\n";
  out << "exec";
  for (const std::string& a : job_command(spec, options, "${SLURM_ARRAY_TASK_ID}"))
    out << " " << (a == "${SLURM_ARRAY_TASK_ID}" ? "\"$SLURM_ARRAY_TASK_ID\"" : shell_quote(a));
  out << "\n";
  if (!out) throw error_at(path, "cannot write the sbatch script");
  return path;
}

std::string submit(const std::string& script, const std::string& dependency) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  if (!dependency.empty()) {
    argv.push_back("--dependency=afterok:" + dependency);
    argv.push_back("--kill-on-invalid-dep=yes");
  }
  argv.push_back(script);
  const Captured c = capture(argv);
  std::string id = c.output.substr(0, c.output.find_first_of(";\n"));
  if (c.status != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw error_at(script, "sbatch failed (exit " + std::to_string(c.status) + "): " + c.output);
  return id;
}

// True while squeue still lists a task of any of the jobs.
bool queued(const std::vector<std::string>& ids) {
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ",") + id;
  const Captured c = capture({"squeue", "-h", "-o", "%i", "-j", list});
  // Jobs purged from the controller make squeue fail with "Invalid job id": they are gone.
  if (c.status != 0) {
    if (c.output.find("Invalid job id") != std::string::npos) return false;
    throw Error("squeue failed (exit " + std::to_string(c.status) + "): " + c.output);
  }
  return c.output.find_first_not_of(" \n") != std::string::npos;
}

}  // namespace

std::vector<std::string> launch_slurm(const ExperimentSpec& spec, const Plan& plan,
                                      const std::vector<size_t>& todo, const LaunchOptions& options) {
  std::vector<std::string> ids;
  for (const int stage : {1, 2}) {
    std::vector<size_t> indices;
    for (size_t i : todo)
      if (plan.jobs[i].stage == stage) indices.push_back(i);
    if (indices.empty()) continue;
    const std::string script = write_script(spec, options, stage, indices);
    ids.push_back(submit(script, ids.empty() ? "" : ids.back()));
    log::info(strfmt("stage %d: %zu array tasks submitted as Slurm job %s (%s)", stage, indices.size(),
                     ids.back().c_str(), script.c_str()));
  }
  if (!options.wait || ids.empty()) return ids;
  log::info("waiting for the Slurm jobs to leave the queue");
  while (queued(ids)) std::this_thread::sleep_for(std::chrono::seconds(2));
  return ids;
}

}  // namespace kvs::experiment
