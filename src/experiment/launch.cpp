#include "experiment/launch.h"

#include <filesystem>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/log.h"
#include "core/subprocess.h"
#include "store/merge.h"
#include "store/spec_growth.h"

namespace kvs::experiment {

namespace fs = std::filesystem;

std::string job_log(const std::string& out_dir, const Job& job) {
  return out_dir + "/logs/" + slug(job.key) + ".log";
}

namespace {

// A path is passed absolute (jobs run from other directories); a registered model name as is.
std::string model_argument(const std::string& model) {
  return fs::exists(model) ? fs::absolute(model).string() : model;
}

}  // namespace

std::vector<std::string> job_command(const ExperimentSpec& spec, const LaunchOptions& options,
                                     const std::string& index) {
  std::vector<std::string> argv = {self_executable()};
  if (options.launcher == "local") {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = options.threads > 0 ? options.threads : std::max(1, cores / std::max(1, options.jobs));
    argv.insert(argv.end(), {"--threads", std::to_string(threads)});
  } else if (options.threads > 0) {
    argv.insert(argv.end(), {"--threads", std::to_string(options.threads)});
  }
  const JobSettings& s = options.settings;
  argv.insert(argv.end(), {"experiment", "job", fs::absolute(spec.path).string(), "--index", index,
                           "--out", fs::absolute(s.out_dir).string(), "--model",
                           model_argument(s.model_dir), "--longbench",
                           fs::absolute(s.longbench_dir).string(), "--device", s.load.device, "--dtype",
                           s.load.dtype});
  return argv;
}

namespace {

std::string status_line(const Plan& plan, size_t i, const std::string& out_dir,
                        bool was_finished, int64_t& shared_prefills, int64_t& unshared_prefills) {
  const Job& job = plan.jobs[i];
  const auto row = recorded_job(out_dir, job);
  std::string state = !row ? "not run" : !row->finished ? "unfinished" : was_finished ? "skipped (finished before)" : "finished";
  std::string prefills = "-";
  if (row && row->prefills) {
    prefills = std::to_string(*row->prefills);
    if (job.kind == JobKind::Evaluate && !was_finished) {
      shared_prefills += *row->prefills;
      unshared_prefills += *row->prefills * static_cast<int64_t>(job.evaluations.size());
    }
  }
  std::string what = job.kind == JobKind::Search
                         ? job.evaluations[0].method + " search"
                         : std::to_string(job.evaluations.size()) + " policies" +
                               (job.searches.empty() ? "" : " + replays of " + std::to_string(job.searches.size()) +
                                                                " search(es)");
  return strfmt("%5zu  %-26s %9s  %-32s %s\n", i, state.c_str(), prefills.c_str(), what.c_str(),
                job.key.c_str());
}

}  // namespace

ExperimentRun run_experiment(const ExperimentSpec& spec, const LaunchOptions& options) {
  if (options.launcher != "local" && options.launcher != "slurm")
    throw Error("--launcher must be local or slurm, not '" + options.launcher + "'");
  const Plan plan = make_plan(spec);
  const std::string& out_dir = options.settings.out_dir;
  fs::create_directories(out_dir + "/jobs");

  std::vector<size_t> todo;
  std::vector<bool> was_finished(plan.jobs.size(), false);
  for (size_t i = 0; i < plan.jobs.size(); ++i) {
    const auto row = recorded_job(out_dir, plan.jobs[i]);
    if (row && !store::spec_grows(row->spec.spec_json, plan.jobs[i].spec_json))
      throw error_at(job_database(out_dir, plan.jobs[i]),
                     "job '" + plan.jobs[i].key +
                         "' was recorded with a different spec (a spec may only add datasets, "
                         "budgets and methods): give the changed experiment another name or --out");
    was_finished[i] = row && row->finished;
    if (!was_finished[i]) todo.push_back(i);
  }
  log::info(strfmt("experiment %s: %zu jobs, %zu finished before, %zu to run (%s launcher)", spec.name.c_str(),
                   plan.jobs.size(), plan.jobs.size() - todo.size(), todo.size(), options.launcher.c_str()));

  std::ostringstream out;
  if (options.launcher == "slurm" && !todo.empty()) {
    const auto ids = launch_slurm(spec, plan, todo, options);
    std::string list;
    for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
    out << "Slurm jobs: " << list << " (scripts and task logs in " << out_dir << "/slurm)\n";
    if (!options.wait) {
      out << "not waiting: once they have finished, rerun this command (it skips finished jobs and "
             "merges) or run `kvsearch merge "
          << merged_database(out_dir) << " " << out_dir << "/jobs/*.sqlite`\n";
      return {out.str(), 0};
    }
  } else if (!todo.empty()) {
    launch_local(spec, plan, todo, options);
  }

  std::vector<std::string> sources;
  for (const Job& job : plan.jobs)
    if (fs::exists(job_database(out_dir, job))) sources.push_back(job_database(out_dir, job));
  const store::MergeReport merged = store::merge_databases(merged_database(out_dir), sources);

  out << strfmt("experiment %s (%s)\n\n%5s  %-26s %9s  %-32s %s\n", spec.name.c_str(), spec.path.c_str(),
                "index", "status", "prefills", "work", "job");
  int64_t shared = 0, unshared = 0;
  ExperimentRun result;
  for (size_t i = 0; i < plan.jobs.size(); ++i) {
    out << status_line(plan, i, out_dir, was_finished[i], shared, unshared);
    const auto row = recorded_job(out_dir, plan.jobs[i]);
    if (!row || !row->finished) ++result.unfinished;
  }
  if (shared > 0)
    out << strfmt(
        "\nevaluate jobs: %lld prefills, shared by every method x budget of a dataset (one "
        "per question, one more per observation protocol's split of the prompt); one prefill "
        "per policy and question would have been %lld\n",
        static_cast<long long>(shared), static_cast<long long>(unshared));
  out << strfmt("merged %zu job databases into %s (%lld runs, %lld states, %lld replays added)\n",
                sources.size(), merged_database(out_dir).c_str(), static_cast<long long>(merged.runs_added),
                static_cast<long long>(merged.states_added), static_cast<long long>(merged.replays_added));
  result.summary = out.str();
  return result;
}

}  // namespace kvs::experiment
