// An evaluate job: every fixed policy at every budget, every transferred profile and the test
// replays of the dataset's searches, on shared prefills (search/evaluator.h). Each policy is
// recorded as a run shaped like `kvsearch run --profile P --eval-test` makes it (state 0 on dev,
// its replay on test); a rerun evaluates only the runs and replays still missing.
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strfmt.h"
#include "core/timer.h"
#include "experiment/job_kinds.h"
#include "search/evaluator.h"
#include "search/outcome_records.h"
#include "search/session.h"

namespace kvs::experiment {

namespace {

// A policy waiting for its dev evaluation and/or its test replay.
struct PendingPolicy {
  std::string label;
  evict::Policy policy;
  std::vector<double> latent;
  std::optional<store::Run> run;      // fixed and transferred policies: the run to fill
  std::optional<store::State> state;  // the state to replay (known once it is recorded)
  bool needs_dev = false;
  bool needs_test = false;
};

// One split's questions with every pending policy's outcomes.
struct SplitOutcomes {
  const search::QuestionSet& set;
  std::vector<search::QuestionOutcome> outcomes;
  double seconds_each = 0;  // wall time per policy
};

// The last accepted state of a finished search run.
store::State best_state(store::Store& db, const std::string& run_key) {
  const auto run = db.find_run(run_key);
  if (!run || !run->finished) throw error_at(db.path(), "search run '" + run_key + "' has not finished");
  std::optional<store::State> best = db.last_accepted(*run);
  if (!best) throw error_at(db.path(), "search run '" + run_key + "' has no accepted state");
  return *best;
}

evict::Policy method_policy(const ExperimentSpec& spec, const Job& job, const MethodSpec& m, int64_t budget,
                            const search::RunRequest& request, store::Store& db, std::vector<double>& latent) {
  if (!m.transfer.empty()) {
    const MethodSpec& source = spec.method(m.transfer);
    const store::State best = best_state(db, run_key(spec, job.dataset, source.name, source.budgets.at(0)));
    evict::Policy p = evict::policy_from_json(nlohmann::json::parse(best.record.policy_json),
                                              "best state of " + source.name);
    p.budget = budget;
    p.validate("transferred policy of " + m.name);
    latent = best.record.latent;
    return p;
  }
  evict::Policy p = search::request_policy(request);  // the fixed lambdas and allocation applied
  p.validate("policy of " + m.name);
  return p;
}

}  // namespace

JobOutcome run_evaluate_job(const ExperimentSpec& spec, const Job& job, const JobSettings& settings,
                            store::Store& db) {
  std::vector<PendingPolicy> pending;
  std::vector<search::RunRequest> requests;
  for (const Evaluation& e : job.evaluations) {
    const MethodSpec& m = spec.method(e.method);
    search::RunRequest request = method_request(spec, job, m, e.budget, settings);
    PendingPolicy p;
    p.label = strfmt("%s B=%lld", m.name.c_str(), static_cast<long long>(e.budget));
    p.policy = method_policy(spec, job, m, e.budget, request, db, p.latent);
    p.run = db.find_or_create_run(search::run_spec(request, p.policy)).run;
    const auto states = db.states_of(*p.run);
    if (!states.empty()) p.state = states.front();
    p.needs_dev = !p.state;
    p.needs_test = !p.state || !db.has_replay(*p.state);
    if (p.needs_dev || p.needs_test) pending.push_back(p);
    else db.mark_finished(*p.run);
  }
  for (const Evaluation& s : job.searches) {
    const auto run = db.find_run(s.run_key);
    if (!run) throw error_at(db.path(), "search run '" + s.run_key + "' is missing");
    for (const store::State& state : db.states_of(*run)) {
      if (!state.record.accepted || db.has_replay(state)) continue;
      PendingPolicy p;
      p.label = strfmt("%s B=%lld state %lld", s.method.c_str(), static_cast<long long>(s.budget),
                       static_cast<long long>(state.record.eval_order));
      p.policy = evict::policy_from_json(nlohmann::json::parse(state.record.policy_json), p.label);
      p.state = state;
      p.needs_test = true;
      pending.push_back(p);
    }
  }

  JobOutcome outcome;
  outcome.key = job.key;
  if (pending.empty()) {
    outcome.summary = job.key + ": every evaluation was already recorded";
    return outcome;
  }

  search::Session session(job_request(spec, job, settings).session);
  const int64_t layers = session.config().num_hidden_layers;

  std::vector<size_t> dev_members, test_members;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (pending[i].needs_dev) dev_members.push_back(i);
    if (pending[i].needs_test) test_members.push_back(i);
  }
  // The `members` of `pending` on the first `limit` questions of a split, on shared prefills.
  auto evaluate_split = [&](const std::vector<size_t>& members, search::SplitPart part, int64_t limit,
                            longbench::ScoreVariant variant, const char* split_name) {
    SplitOutcomes r{session.questions(part, limit), {}, 0};
    std::vector<evict::Policy> policies;
    for (size_t i : members) policies.push_back(pending[i].policy);
    Timer timer;
    r.outcomes = search::evaluate_with_progress(
        session.evaluator(), r.set, policies, variant, session.settings().thinking,
        strfmt("%s %s (%zu policies, shared prefills)", job.dataset.c_str(), split_name,
               policies.size()),
        "");
    r.seconds_each = timer.seconds() / static_cast<double>(policies.size());
    const auto questions = static_cast<int64_t>(r.set.questions.size());
    outcome.prefills += search::prefills_of(r.outcomes);
    outcome.policy_question_evaluations += questions * static_cast<int64_t>(policies.size());
    return r;
  };
  int64_t dev_questions = 0, test_questions = 0;

  if (!dev_members.empty()) {
    const SplitOutcomes dev =
        evaluate_split(dev_members, search::SplitPart::Dev, spec.dev_limit, longbench::ScoreVariant::Raw, "dev");
    dev_questions = static_cast<int64_t>(dev.set.questions.size());
    for (size_t k = 0; k < dev_members.size(); ++k) {
      PendingPolicy& p = pending[dev_members[k]];
      store::StateRecord r = search::state_record(p.policy, layers, dev.set, dev.outcomes, k, dev.seconds_each);
      r.eval_order = 0;
      r.latent = p.latent;
      r.accepted = true;
      r.best_so_far = r.dev_score;
      db.record_state(*p.run, r);
      p.state = db.states_of(*p.run).front();
    }
  }

  if (!test_members.empty()) {
    const SplitOutcomes test =
        evaluate_split(test_members, search::SplitPart::Test, spec.test_limit, longbench::ScoreVariant::Official, "test");
    test_questions = static_cast<int64_t>(test.set.questions.size());
    for (size_t k = 0; k < test_members.size(); ++k)
      db.record_replay(*pending[test_members[k]].state,
                       search::replay_record(test.set, test.outcomes, k, test.seconds_each));
  }
  for (const PendingPolicy& p : pending)
    if (p.run) db.mark_finished(*p.run);

  outcome.summary = strfmt(
      "%s: %zu policies on %lld dev and %lld test questions: %lld prefills (shared by a question's "
      "policies; %lld policy-question evaluations)",
      job.key.c_str(), pending.size(), static_cast<long long>(dev_questions),
      static_cast<long long>(test_questions), static_cast<long long>(outcome.prefills),
      static_cast<long long>(outcome.policy_question_evaluations));
  return outcome;
}

}  // namespace kvs::experiment
