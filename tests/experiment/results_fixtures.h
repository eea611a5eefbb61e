// Shared by the experiment tests: runs recorded into a results database as an experiment's jobs
// would record them (one accepted state, its test replay, per-question scores).
#pragma once

#include <string>
#include <vector>

#include "experiment/plan.h"
#include "experiment/spec.h"
#include "store/store.h"

namespace kvs::experiment::test_support {

// Records a finished run with one accepted state and, when test >= 0, its official test score;
// per-question scores when given (dev: the state's, test: the replay's). The run records binary
// "abc123"; its splits record `split_binary` ("": none, as before schema version 3).
inline void record(store::Store& db, const ExperimentSpec& spec, const std::string& dataset,
                   const std::string& method, int64_t budget, double test,
                   const std::vector<double>& dev_questions = {},
                   const std::vector<double>& test_questions = {},
                   const std::string& split_binary = "") {
  const auto predictions = [](const std::vector<double>& scores) {
    std::vector<store::PredictionRecord> out;
    for (size_t i = 0; i < scores.size(); ++i) {
      store::PredictionRecord p;
      p.question_index = static_cast<int64_t>(i);
      p.question_id = "q" + std::to_string(i);
      p.score = scores[i];
      p.official_score = scores[i];
      out.push_back(p);
    }
    return out;
  };
  store::RunSpec r;
  r.key = run_key(spec, dataset, method, budget);
  r.model = "tiny";
  r.model_path = "/m";
  r.dataset = dataset;
  r.longbench_dir = "/lb";
  r.budget = budget;
  r.profile_family = spec.method(method).family;
  r.git_commit = "abc123";
  const store::Run run = db.find_or_create_run(r).run;
  store::StateRecord s;
  s.lambda1 = {0.0, 0.1};
  s.lambda2 = {-0.15, 0.2};
  s.dev_score = 50;
  s.best_so_far = 50;
  s.accepted = true;
  s.predictions = predictions(dev_questions);
  s.git_commit = split_binary;
  db.record_state(run, s);
  if (test >= 0) {
    store::ReplayRecord replay;
    replay.score = test;
    replay.official_score = test;
    replay.predictions = predictions(test_questions);
    replay.git_commit = split_binary;
    db.record_replay(db.states_of(run).front(), replay);
  }
  db.mark_finished(run);
}

}  // namespace kvs::experiment::test_support
