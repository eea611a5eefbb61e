#include "experiment/work_estimate.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "longbench/dataset.h"

namespace kvs::experiment {

namespace {

struct DataShape {
  int64_t records = 0;
  double mean_bytes = 0;
};

DataShape data_shape(const std::string& path) {
  DataShape shape;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) ++shape.records;
  if (shape.records > 0)
    shape.mean_bytes = static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(shape.records);
  return shape;
}

int64_t limited(int64_t available, int64_t limit) {
  return std::max<int64_t>(0, limit > 0 ? std::min(available, limit) : available);
}

}  // namespace

std::vector<JobWork> estimate_work(const ExperimentSpec& spec, const Plan& plan, const std::string& longbench_dir) {
  std::map<std::string, DataShape> shapes;
  std::vector<JobWork> out;
  for (const Job& job : plan.jobs) {
    if (!shapes.count(job.dataset)) shapes[job.dataset] = data_shape(longbench::dataset_path(longbench_dir, job.dataset));
    const DataShape& shape = shapes[job.dataset];
    const auto dev_size = static_cast<int64_t>(longbench::dataset_info(job.dataset).dev_size);
    const int64_t dev = limited(std::min(dev_size, shape.records), spec.dev_limit);
    const int64_t test = limited(shape.records - dev_size, spec.test_limit);
    JobWork w;
    if (job.kind == JobKind::Search) {
      // The warm start alone, then batches of up to `speculation` moves, on the search's dev
      // questions.
      const MethodSpec& searched = spec.method(job.evaluations.at(0).method);
      const int64_t search_dev =
          limited(std::min(dev_size, shape.records), searched.dev_limit.value_or(spec.dev_limit));
      w.passes = search_dev * (1 + (searched.evals - 1 + spec.speculation - 1) / spec.speculation);
    } else {
      w.passes = (job.evaluations.empty() ? 0 : dev) + test;
    }
    w.weight = static_cast<double>(w.passes) * shape.mean_bytes;
    out.push_back(w);
  }
  return out;
}

}  // namespace kvs::experiment
