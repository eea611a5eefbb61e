// The local launcher: every job is a `kvsearch experiment job` process with its output in
// <out>/logs/; up to options.jobs run at once, stage by stage.
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/strfmt.h"
#include "core/subprocess.h"
#include "core/timer.h"
#include "experiment/launch.h"
#include "experiment/work_estimate.h"

namespace kvs::experiment {

namespace {

// The last non-empty line of a job's log: its error, when it failed.
std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last = "(see " + path + ")";
  while (std::getline(in, line))
    if (line.find_first_not_of(" \r") != std::string::npos) last = line;
  return last;
}

}  // namespace

std::vector<size_t> launch_local(const ExperimentSpec& spec, const Plan& plan, const std::vector<size_t>& todo,
                                 const LaunchOptions& options) {
  std::filesystem::create_directories(options.settings.out_dir + "/logs");
  // Progress over the whole launch: the ETA scales the time so far by the estimated work left.
  const std::vector<JobWork> work = estimate_work(spec, plan, options.settings.longbench_dir);
  double work_total = 0, work_done = 0;
  int64_t passes = 0;
  for (size_t i : todo) {
    work_total += work[i].weight;
    passes += work[i].passes;
  }
  log::info(strfmt("plan: %zu jobs, at least %lld question passes (a prefill and its batched decode each); "
                   "the ETA follows each finished job",
                   todo.size(), static_cast<long long>(passes)));
  const Timer elapsed;
  size_t jobs_done = 0;
  const auto report_progress = [&](size_t i) {
    work_done += work[i].weight;
    ++jobs_done;
    const double fraction = work_total > 0 ? work_done / work_total : 1.0;
    const double eta = fraction > 0 ? elapsed.seconds() * (1 - fraction) / fraction : -1;
    log::info(strfmt("progress: %zu/%zu jobs, %.0f%% of the work in %s, ETA %s", jobs_done, todo.size(),
                     100 * fraction, format_duration(elapsed.seconds()).c_str(), format_duration(eta).c_str()));
  };
  std::vector<size_t> failed;
  for (const int stage : {1, 2}) {
    std::vector<size_t> queue;
    for (size_t i : todo)
      if (plan.jobs[i].stage == stage) queue.push_back(i);
    if (stage == 2 && !failed.empty() && !queue.empty()) {
      log::warn(strfmt("%zu stage-1 jobs failed: the %zu stage-2 jobs that read them are not started",
                       failed.size(), queue.size()));
      for (size_t i : queue) failed.push_back(i);
      break;
    }
    std::map<pid_t, size_t> running;
    size_t next = 0;
    while (next < queue.size() || !running.empty()) {
      while (next < queue.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
        const size_t i = queue[next++];
        const Job& job = plan.jobs[i];
        log::info(strfmt("job %zu started: %s (log %s)", i, job.key.c_str(),
                         job_log(options.settings.out_dir, job).c_str()));
        running[spawn_logged(job_command(spec, options, std::to_string(i)),
                             job_log(options.settings.out_dir, job))] = i;
      }
      int status = 0;
      const pid_t pid = ::wait(&status);
      if (pid < 0) throw Error("waiting for the experiment's jobs failed");
      const auto it = running.find(pid);
      if (it == running.end()) continue;
      const size_t i = it->second;
      running.erase(it);
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (ok) {
        log::info(strfmt("job %zu finished: %s", i, plan.jobs[i].key.c_str()));
        report_progress(i);
        continue;
      }
      report_progress(i);
      failed.push_back(i);
      const std::string log_path = job_log(options.settings.out_dir, plan.jobs[i]);
      log::warn(strfmt("job %zu FAILED: %s: %s", i, plan.jobs[i].key.c_str(), last_line(log_path).c_str()));
    }
  }
  return failed;
}

}  // namespace kvs::experiment
