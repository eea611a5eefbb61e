#include "search/run.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/build_info.h"
#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/timer.h"
#include "evict/method.h"
#include "evict/policy.h"
#include "evict/window_params.h"
#include "longbench/config.h"
#include "longbench/dataset.h"
#include "search/coordinate_search.h"
#include "search/evaluator.h"
#include "search/outcome_records.h"
#include "search/policy_family.h"
#include "search/session.h"
#include "store/run_identity.h"
#include "store/run_lock.h"
#include "store/store.h"

namespace kvs::search {

namespace fs = std::filesystem;

namespace {

std::string model_name(const std::string& model_dir) {
  fs::path p = fs::path(model_dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

// The latent coordinates a search moves: all of them, except those of a score term the request
// switches off (an ablation spends no evaluation on a coefficient that cannot change the score).
// The search sees the free coordinates; the store records the full latent vector.
class FreeCoordinates {
 public:
  FreeCoordinates(const RunRequest& request, const PolicyFamily& family) {
    if (!family.searched()) {  // fixed policies: one placeholder coordinate
      full_ = {0.0};
      free_ = {0};
      return;
    }
    full_ = family.warm_start();
    const size_t half = full_.size() / 2;
    for (size_t i = 0; i < full_.size(); ++i)
      if (!request.terms || (i < half ? request.terms->dispersion : request.terms->corr)) free_.push_back(i);
  }
  std::vector<double> warm_start() const { return free_part(full_); }
  std::vector<double> full(const std::vector<double>& free) const {
    std::vector<double> out = full_;
    for (size_t k = 0; k < free_.size(); ++k) out[free_[k]] = free.at(k);
    return out;
  }
  std::vector<double> free_part(const std::vector<double>& full) const {
    std::vector<double> out;
    for (size_t i : free_) out.push_back(full.at(i));
    return out;
  }
  int full_index(int free_index) const { return static_cast<int>(free_.at(static_cast<size_t>(free_index))); }

 private:
  std::vector<double> full_;
  std::vector<size_t> free_;
};

}  // namespace

evict::Policy request_policy(const RunRequest& request, const std::vector<double>& latent) {
  if (!request.policy_json.empty()) {
    return evict::policy_from_json(
        evict::policy_json_at_budget(nlohmann::json::parse(request.policy_json), request.budget,
                                     "policy"),
        "policy");
  }
  const PolicyFamily family(request.family, request.segments, request.budget);
  evict::Policy policy = family.policy(family.searched() ? latent : std::vector<double>{});
  const evict::WindowParams& w = evict::window_params();
  if (request.terms) {
    policy.params.set(w.mean, request.terms->mean);
    policy.params.set(w.dispersion, request.terms->dispersion);
    if (policy.params.has(w.corr)) {
      policy.params.set(w.corr, request.terms->corr);
    } else if (request.terms->corr) {
      throw error_at(
          "score terms of the run.terms.corr",
          "the corr term needs the greedy admission (" + policy.method_name() + " has none)");
    }
    policy.validate("score terms of the run");
  }
  if (request.schedule)
    policy.params.set(w.schedule, std::string(schedule_name(*request.schedule)));
  if (request.lambda1)
    policy.params.set(w.lambda1, evict::Profile::global_lambda(*request.lambda1));
  if (request.lambda2)
    policy.params.set(w.lambda2, evict::Profile::global_lambda(*request.lambda2));
  if (request.allocation_json.empty()) return policy;
  return allocated_policy(policy, request.allocation_json, "allocation");
}

evict::Policy allocated_policy(const evict::Policy& policy, const std::string& allocation_json,
                               const std::string& where) {
  nlohmann::json wrapper;
  try {
    wrapper = nlohmann::json::parse(allocation_json);
  } catch (const nlohmann::json::exception&) {
    throw error_at(where, "not JSON: " + allocation_json);
  }
  if (!wrapper.is_object() || !wrapper.contains("method") || !wrapper["method"].is_string())
    throw error_at(where, "expected {\"method\": NAME, ...}, got " + allocation_json);
  if (wrapper.contains("base") || wrapper.contains("budget"))
    throw error_at(where, "leave out base and budget: the run's policy and budget set them");
  const std::string name = wrapper["method"].get<std::string>();
  if (!evict::find_method(name, where + ".method").info().allocates)
    throw error_at(where + ".method",
                   name + " does not allocate a base policy's budget (adakv does)");
  evict::Policy base = policy;
  base.params.set(evict::window_params().granularity, std::string("kv_head"));
  wrapper["budget"] = policy.budget;
  wrapper["base"] = evict::policy_to_json(base);
  return evict::policy_from_json(wrapper, where);
}

const evict::Policy& profile_policy(const evict::Policy& policy) {
  return policy.base ? *policy.base : policy;
}

store::RunSpec run_spec(const RunRequest& request, const evict::Policy& policy_template) {
  const PolicyFamily family(request.family, request.segments, request.budget);
  store::RunSpec spec;
  spec.model = model_name(request.session.model_dir);
  spec.model_path = fs::absolute(request.session.model_dir).string();
  spec.dataset = request.session.dataset;
  spec.longbench_dir = fs::absolute(request.session.longbench_dir).string();
  spec.split_seed = static_cast<int64_t>(request.session.split_seed);
  spec.dev_limit = request.limit_dev;
  spec.budget = request.budget;
  spec.profile_family = request.policy_json.empty() ? family.name() : policy_template.method_name();
  spec.segments = request.policy_json.empty() ? family.segments() : 0;
  nlohmann::json search{{"step", request.step},
                        {"tau", request.tau},
                        {"max_evals", family.searched() ? request.max_evals : 1},
                        {"max_length", request.session.max_length},
                        {"chat_template", request.session.chat_template}};
  // Only where it is not the default: the runs recorded before the rule existed keep their
  // identity.
  if (request.session.thinking != longbench::Thinking::Keep)
    search["thinking"] = longbench::thinking_name(request.session.thinking);
  spec.search_json = search.dump();
  spec.policy_json = evict::policy_to_string(policy_template);
  spec.git_commit = build_info::git_commit();
  spec.build_type = build_info::build_type();
  spec.command_line = request.command_line;
  spec.host = build_info::host_name();
  spec.job_key = request.job_key;
  spec.key = request.run_key.empty() ? store::default_run_key(spec) : request.run_key;
  return spec;
}

RunSummary run_search(const RunRequest& request) {
  const PolicyFamily family(request.family, request.segments, request.budget);
  const int64_t window = evict::BudgetSpec{}.window;  // every family's policies keep the default window
  if (request.budget < window)
    throw Error(
        strfmt("--budget must hold the window of %lld tokens", static_cast<long long>(window)));
  // An unknown name fails before any model loading (the LongBench dir may declare extra datasets).
  longbench::load_config(request.session.longbench_dir);
  longbench::dataset_info(request.session.dataset);
  Session session(request.session);
  const int64_t layers = session.config().num_hidden_layers;

  SearchSettings settings;
  settings.step = request.step;
  settings.tau = request.tau;
  settings.max_evals = family.searched() ? request.max_evals : 1;
  settings.speculation = request.speculation;

  const store::RunSpec spec = run_spec(request, request_policy(request, family.warm_start()));
  const FreeCoordinates coordinates(request, family);

  store::Store db(request.db_path);
  const store::FoundRun found = db.find_or_create_run(spec);
  RunSummary summary;
  summary.run_id = found.run.id;
  summary.run_key = spec.key;
  // Another process evaluating this run would record the same states: it holds the run until it ends.
  std::optional<store::RunLock> lock;
  if (!found.run.finished || request.eval_test) lock.emplace(request.db_path, found.run.id, spec.key);
  std::vector<EvaluatedState> recorded;
  for (const store::State& s : db.states_of(found.run)) {
    EvaluatedState e;
    e.order = static_cast<int>(s.record.eval_order);
    e.latent = coordinates.free_part(s.record.latent);
    e.dev_score = s.record.dev_score;
    e.accepted = s.record.accepted;
    e.best_so_far = s.record.best_so_far;
    recorded.push_back(e);
  }
  // The run as it is now: a process that held it before this one may have finished it.
  const bool finished = db.get_run(found.run.id)->finished;
  if (finished) {
    summary.already_finished = true;
    log::info(strfmt("run %lld (%s) is already finished: %zu states recorded; nothing to do",
                     static_cast<long long>(found.run.id), spec.key.c_str(), recorded.size()));
  } else if (found.existed) {
    log::info(strfmt("resuming run %lld (%s) after %zu recorded states",
                     static_cast<long long>(found.run.id), spec.key.c_str(), recorded.size()));
  }

  // The latest batch, kept until the search has recorded its states (with their predictions).
  std::vector<std::vector<double>> batch_latents;
  std::vector<QuestionOutcome> batch_outcomes;
  double batch_seconds_each = 0;
  // The best recorded dev score, shown while a batch is evaluated; none before the first state.
  std::optional<double> best_dev;
  if (!recorded.empty()) best_dev = recorded.back().best_so_far;
  auto evaluate = [&](const std::vector<std::vector<double>>& latents) {
    const QuestionSet& dev = session.questions(SplitPart::Dev, request.limit_dev);
    std::vector<evict::Policy> policies;
    for (const auto& l : latents) policies.push_back(request_policy(request, coordinates.full(l)));
    Timer timer;
    const auto outcomes = evaluate_with_progress(
        session.evaluator(), dev, policies, longbench::ScoreVariant::Raw,
        session.settings().thinking,
        strfmt("%s %s dev (%zu policies)", request.session.dataset.c_str(), family.name().c_str(),
               policies.size()),
        best_dev ? strfmt("best dev so far %.2f", *best_dev) : std::string("first state"));
    batch_seconds_each = timer.seconds() / static_cast<double>(latents.size());
    summary.prefills += prefills_of(outcomes);
    batch_latents = latents;
    batch_outcomes = outcomes;
    std::vector<double> scores;
    for (size_t p = 0; p < latents.size(); ++p) scores.push_back(policy_score(outcomes, p));
    return scores;
  };
  auto sink = [&](const EvaluatedState& state) {
    size_t p = 0;
    while (p < batch_latents.size() && batch_latents[p] != state.latent) ++p;
    if (p == batch_latents.size()) throw Error("internal: evaluated state missing from its batch");
    const std::vector<double> latent = coordinates.full(state.latent);
    store::StateRecord r =
        state_record(request_policy(request, latent), layers, session.questions(SplitPart::Dev, request.limit_dev),
                     batch_outcomes, p, batch_seconds_each);
    r.eval_order = state.order;
    r.latent = latent;
    r.accepted = state.accepted;
    r.best_so_far = state.best_so_far;
    if (state.move.coordinate >= 0) {
      r.changed_coordinate = coordinates.full_index(state.move.coordinate);
      r.delta = state.move.direction * settings.step;
    }
    db.record_state(found.run, r);
    best_dev = state.best_so_far;
    ++summary.evaluated_now;
    log::info(strfmt("state %d: dev %.2f%s (best %.2f)", state.order, state.dev_score,
                     state.accepted && state.order > 0 ? " accepted" : "", state.best_so_far));
  };

  SearchResult result;
  if (!finished) {
    result = coordinate_search(coordinates.warm_start(), settings, evaluate, sink, recorded);
    db.mark_finished(found.run);
  } else {
    for (const auto& s : recorded)
      if (s.accepted) result.best_latent = s.latent;
    result.best_score = recorded.empty() ? 0 : recorded.back().best_so_far;
    result.states = recorded;
  }
  summary.evaluations = static_cast<int>(result.states.size());
  summary.best_dev_score = result.best_score;
  const evict::Policy best = request_policy(request, coordinates.full(result.best_latent));
  const evict::WindowParams& w = evict::window_params();
  summary.best_lambda1 =
      evict::profile_or_zero(profile_policy(best).params, w.lambda1).lambdas(layers);
  summary.best_lambda2 =
      evict::profile_or_zero(profile_policy(best).params, w.lambda2).lambdas(layers);

  if (request.eval_test) {
    const std::optional<store::State> best_state = db.last_accepted(found.run);
    for (const auto& r : db.replays_of(found.run))
      if (best_state && r.state_id == best_state->id) summary.test_score = r.official_score;
    if (best_state && summary.test_score < 0) {
      const QuestionSet& test = session.questions(SplitPart::Test);
      Timer timer;
      const auto outcomes = evaluate_with_progress(
          session.evaluator(), test, {best}, longbench::ScoreVariant::Official,
          session.settings().thinking, request.session.dataset + " test", "final state");
      summary.prefills += prefills_of(outcomes);
      const store::ReplayRecord replay = replay_record(test, outcomes, 0, timer.seconds());
      db.record_replay(*best_state, replay);
      summary.test_score = replay.official_score;
    }
  }
  return summary;
}

std::string run_summary_text(const RunSummary& s) {
  std::ostringstream out;
  out << strfmt("run %lld  %s\n", static_cast<long long>(s.run_id), s.run_key.c_str());
  out << strfmt("states: %d (%d evaluated now%s)\n", s.evaluations, s.evaluated_now,
                s.already_finished ? ", run was already finished" : "");
  out << strfmt("best dev score: %.2f\n", s.best_dev_score);
  if (s.test_score >= 0) out << strfmt("test score (official scorer): %.2f\n", s.test_score);
  out << "lambda1 per layer:";
  for (double v : s.best_lambda1) out << strfmt(" %.3f", v);
  out << "\nlambda2 per layer:";
  for (double v : s.best_lambda2) out << strfmt(" %.3f", v);
  out << "\n";
  return out.str();
}

}  // namespace kvs::search
