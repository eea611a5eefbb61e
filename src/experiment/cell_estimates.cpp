#include "experiment/cell_estimates.h"

namespace kvs::experiment {

std::vector<double> points_of(const QuestionScores& scores) {
  std::vector<double> out;
  out.reserve(scores.size());
  for (const auto& [index, q] : scores) out.push_back(q.points);
  return out;
}

CellEstimates::CellEstimates(const ExperimentScores& scores, const Bootstrap& bootstrap)
    : scores_(scores), bootstrap_(bootstrap) {}

std::optional<Estimate> CellEstimates::mean(const std::string& dataset, const std::string& method,
                                            int64_t budget) const {
  const std::vector<std::string> key{scores_.run_key_of(dataset, method, budget)};
  const auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::optional<Estimate> e;
  if (const QuestionScores* s = scores_.get(dataset, method, budget))
    e = mean_with_interval(points_of(*s), bootstrap_);
  return cache_[key] = e;
}

std::optional<Estimate> CellEstimates::macro(const std::vector<std::string>& datasets,
                                             const std::string& method, int64_t budget) const {
  std::vector<std::string> key{"macro"};  // no run key: apart from a one-dataset mean's
  for (const std::string& d : datasets) key.push_back(scores_.run_key_of(d, method, budget));
  const auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::optional<Estimate> e;
  std::vector<std::vector<double>> per_dataset;
  for (const std::string& d : datasets) {
    const QuestionScores* s = scores_.get(d, method, budget);
    if (!s) return cache_[key] = std::nullopt;
    per_dataset.push_back(points_of(*s));
  }
  if (!per_dataset.empty()) e = macro_average(per_dataset, bootstrap_);
  return cache_[key] = e;
}

}  // namespace kvs::experiment
