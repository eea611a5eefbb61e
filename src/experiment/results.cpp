#include "experiment/results.h"

#include "core/error.h"
#include "experiment/plan.h"
#include "store/store.h"

namespace kvs::experiment {

ExperimentResults::ExperimentResults(const ExperimentSpec& spec, const std::string& db_path)
    : spec_(spec), db_path_(db_path) {
  store::Store db(db_path, store::Access::read_only);
  bool recorded = false;
  for (const store::Experiment& e : db.list_experiments()) recorded = recorded || e.name == spec.name;
  if (!recorded)
    throw error_at(db_path, "holds no results of experiment '" + spec.name + "' (run `kvsearch experiment run " +
                                spec.path + "` first)");
  const Plan plan = make_plan(spec);
  for (const Job& job : plan.jobs) {
    for (const Evaluation& e : job.evaluations) {
      const auto run = db.find_run(e.run_key);
      if (!run) continue;
      const auto states = db.states_of(*run);
      if (states.empty()) continue;
      models_.insert(run->spec.model);
      const auto replays = db.replays_of(*run);
      MethodResult r;
      r.finished = run->finished;
      const store::State* best = nullptr;
      // A split recorded before schema version 3 names no binary: the run's built it.
      const auto binary = [&](const std::string& recorded) {
        return recorded.empty() ? run->spec.git_commit : recorded;
      };
      for (const store::State& s : states) {
        r.binaries.insert(binary(s.record.git_commit));
        TrajectoryPoint p;
        p.order = s.record.eval_order;
        p.dev = s.record.dev_score;
        p.best_so_far = s.record.best_so_far;
        p.accepted = s.record.accepted;
        for (const store::Replay& replay : replays)
          if (replay.state_id == s.id) p.test = replay.official_score;
        r.trajectory.push_back(p);
        if (!s.record.accepted) continue;
        r.dev = s.record.dev_score;
        r.test = p.test;
        r.lambda1 = s.record.lambda1;
        r.lambda2 = s.record.lambda2;
        best = &s;
      }
      // Per-question scores of the best state only (the noise floor is the reported state's).
      if (best) {
        for (const store::PredictionRecord& q : db.predictions_of(*best, "dev")) r.dev_questions.push_back(q.score);
        for (const store::PredictionRecord& q : db.predictions_of(*best, "test"))
          r.test_questions.push_back(q.official_score.value_or(q.score));
        r.test_cache = db.cache_layout(*best, "test");
        for (const store::Replay& replay : replays)
          if (replay.state_id == best->id) r.binaries.insert(binary(replay.git_commit));
      }
      commits_.insert(r.binaries.begin(), r.binaries.end());
      results_.push_back({e.run_key, job.dataset, r});
    }
  }
}

std::optional<MethodResult> ExperimentResults::get(const std::string& dataset, const std::string& method,
                                                   int64_t budget) const {
  if (spec_.method(method).full_cache()) budget = kFullCacheBudget;  // the same at every budget
  const std::string key = run_key(spec_, dataset, method, budget);
  for (const Keyed& k : results_)
    if (k.run_key == key) return k.result;
  return std::nullopt;
}

std::vector<MethodResult> ExperimentResults::of_dataset(const std::string& dataset) const {
  std::vector<MethodResult> out;
  for (const Keyed& k : results_)
    if (k.dataset == dataset) out.push_back(k.result);
  return out;
}

std::optional<double> ExperimentResults::test(const std::string& dataset, const std::string& method,
                                              int64_t budget) const {
  const auto r = get(dataset, method, budget);
  return r ? r->test : std::nullopt;
}

}  // namespace kvs::experiment
