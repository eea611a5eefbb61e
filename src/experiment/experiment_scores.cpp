#include "experiment/experiment_scores.h"

#include "experiment/plan.h"
#include "store/store.h"

namespace kvs::experiment {

ExperimentScores::ExperimentScores(const ExperimentSpec& spec, const std::string& db_path)
    : spec_(spec), db_path_(db_path) {
  store::Store db(db_path, store::Access::read_only);
  for (const Job& job : make_plan(spec).jobs)
    for (const Evaluation& e : job.evaluations) {
      const auto run = db.find_run(e.run_key);
      if (!run) continue;
      QuestionScores scores = best_state_test_scores(db, *run);
      if (!scores.empty()) by_run_key_[e.run_key] = std::move(scores);
    }
}

std::string ExperimentScores::run_key_of(const std::string& dataset, const std::string& method,
                                         int64_t budget) const {
  if (spec_.method(method).full_cache()) budget = kFullCacheBudget;  // the same at every budget
  return run_key(spec_, dataset, method, budget);
}

const QuestionScores* ExperimentScores::get(const std::string& dataset, const std::string& method,
                                            int64_t budget) const {
  const auto it = by_run_key_.find(run_key_of(dataset, method, budget));
  return it == by_run_key_.end() ? nullptr : &it->second;
}

}  // namespace kvs::experiment
