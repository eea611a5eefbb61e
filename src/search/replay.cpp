// `kvsearch replay`, `runs` and `show`: the accepted trajectory on the test split, and read-only
// views of a results database.
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/strfmt.h"
#include "core/timer.h"
#include "evict/policy.h"
#include "search/evaluator.h"
#include "search/outcome_records.h"
#include "search/questions.h"
#include "search/run.h"
#include "search/session.h"
#include "store/store.h"

namespace kvs::search {

namespace {

std::string move_text(const store::StateRecord& r) {
  if (!r.changed_coordinate) return "warm start";
  return strfmt("a[%lld] %+.2f", static_cast<long long>(*r.changed_coordinate), r.delta.value_or(0));
}

std::string trajectory_table(store::Store& db, const store::Run& run) {
  std::ostringstream out;
  out << strfmt("run %lld  %s  %s  B=%lld  %s\n", static_cast<long long>(run.id),
                run.spec.model.c_str(), run.spec.dataset.c_str(),
                static_cast<long long>(run.spec.budget), run.spec.profile_family.c_str());
  out << strfmt("%5s  %-14s %9s %11s\n", "step", "move", "dev", "test");
  const auto replays = db.replays_of(run);
  for (const auto& s : db.states_of(run)) {
    if (!s.record.accepted) continue;
    std::string test = "-";
    for (const auto& r : replays)
      if (r.state_id == s.id) test = strfmt("%.2f", r.official_score);
    out << strfmt("%5lld  %-14s %9.2f %11s\n", static_cast<long long>(s.record.eval_order),
                  move_text(s.record).c_str(), s.record.dev_score, test.c_str());
  }
  return out.str();
}

void replay_run(store::Store& db, const store::Run& run, const ReplayRequest& request) {
  std::vector<store::State> todo;
  for (const auto& s : db.states_of(run))
    if (s.record.accepted && !db.has_replay(s)) todo.push_back(s);
  if (todo.empty()) return;
  const auto search = nlohmann::json::parse(run.spec.search_json);
  SessionSettings settings;
  settings.model_dir = request.model_dir.empty() ? run.spec.model_path : request.model_dir;
  settings.longbench_dir = request.longbench_dir.empty() ? run.spec.longbench_dir : request.longbench_dir;
  settings.dataset = run.spec.dataset;
  settings.split_seed = static_cast<uint64_t>(run.spec.split_seed);
  settings.max_length = search.value("max_length", int64_t{0});
  settings.chat_template = search.value("chat_template", std::string("auto"));
  settings.thinking = longbench::parse_thinking(search.value("thinking", std::string("keep")));
  settings.load = request.load;
  Session session(settings);
  const QuestionSet& test = session.questions(SplitPart::Test);

  std::vector<evict::Policy> policies;
  for (const auto& s : todo)
    policies.push_back(evict::policy_from_json(nlohmann::json::parse(s.record.policy_json),
                                               "state " + std::to_string(s.record.eval_order) + " policy"));
  Timer timer;
  const auto outcomes = evaluate_with_progress(
      session.evaluator(), test, policies, longbench::ScoreVariant::Official,
      session.settings().thinking,
      strfmt("replay run %lld on test (%zu states)", static_cast<long long>(run.id), todo.size()),
      "");
  const double seconds_each = timer.seconds() / static_cast<double>(todo.size());
  for (size_t p = 0; p < todo.size(); ++p)
    db.record_replay(todo[p], replay_record(test, outcomes, p, seconds_each));
}

}  // namespace

std::string replay_runs(const ReplayRequest& request) {
  store::Store db(request.db_path);
  std::vector<store::Run> runs;
  if (request.run_id > 0) {
    const auto run = db.get_run(request.run_id);
    if (!run) throw error_at(request.db_path, "no run with id " + std::to_string(request.run_id));
    runs.push_back(*run);
  } else {
    runs = db.list_runs();
    if (runs.empty()) throw error_at(request.db_path, "the database holds no runs");
  }
  std::string text;
  for (const auto& run : runs) {
    replay_run(db, run, request);
    text += trajectory_table(db, run) + "\n";
  }
  return text;
}

std::string list_runs_text(const std::string& db_path) {
  store::Store db(db_path, store::Access::read_only);
  std::ostringstream out;
  out << strfmt("%4s  %-26s %-22s %-9s %5s %7s %9s  %s\n", "id", "model", "dataset", "profile", "B",
                "states", "best dev", "status");
  for (const auto& run : db.list_runs()) {
    const auto states = db.states_of(run);
    const double best = states.empty() ? 0 : states.back().record.best_so_far;
    out << strfmt("%4lld  %-26s %-22s %-9s %5lld %7lld %9.2f  %s\n", static_cast<long long>(run.id),
                  run.spec.model.c_str(), run.spec.dataset.c_str(), run.spec.profile_family.c_str(),
                  static_cast<long long>(run.spec.budget), static_cast<long long>(run.states), best,
                  run.finished ? "finished" : "unfinished");
  }
  return out.str();
}

std::string show_run_text(const std::string& db_path, int64_t run_id, bool predictions) {
  store::Store db(db_path, store::Access::read_only);
  const auto run = db.get_run(run_id);
  if (!run) throw error_at(db_path, "no run with id " + std::to_string(run_id));
  std::ostringstream out;
  const auto& s = run->spec;
  out << strfmt("run %lld: %s\n", static_cast<long long>(run->id), s.key.c_str());
  out << strfmt("model %s (%s)\ndataset %s from %s, split seed %lld, dev limit %lld\n",
                s.model.c_str(), s.model_path.c_str(), s.dataset.c_str(), s.longbench_dir.c_str(),
                static_cast<long long>(s.split_seed), static_cast<long long>(s.dev_limit));
  out << strfmt("budget %lld, profile %s, search %s\ncommit %s (%s) on %s, started %s, %s\n",
                static_cast<long long>(s.budget), s.profile_family.c_str(), s.search_json.c_str(),
                s.git_commit.c_str(), s.build_type.c_str(), s.host.c_str(), run->started_at.c_str(),
                run->finished ? ("finished " + run->finished_at.value_or("")).c_str() : "unfinished");
  const auto states = db.states_of(*run);
  out << strfmt("\n%5s  %-14s %9s %9s %9s\n", "order", "move", "dev", "accepted", "best");
  for (const auto& st : states)
    out << strfmt("%5lld  %-14s %9.2f %9s %9.2f\n", static_cast<long long>(st.record.eval_order),
                  move_text(st.record).c_str(), st.record.dev_score, st.record.accepted ? "yes" : "",
                  st.record.best_so_far);
  if (const std::optional<store::State> best = db.last_accepted(*run)) {
    out << "\nprofile of the best state (per layer):\n";
    out << strfmt("%5s %9s %9s\n", "layer", "lambda1", "lambda2");
    for (size_t l = 0; l < best->record.lambda1.size(); ++l)
      out << strfmt("%5zu %9.3f %9.3f\n", l, best->record.lambda1[l],
                    l < best->record.lambda2.size() ? best->record.lambda2[l] : 0.0);
  }
  out << "\n" << trajectory_table(db, *run);
  if (const std::optional<store::State> best = db.last_accepted(*run); predictions && best) {
    std::string split = "test";
    std::vector<store::PredictionRecord> rows = db.predictions_of(*best, split);
    if (rows.empty()) rows = db.predictions_of(*best, split = "dev");
    out << strfmt("\n%s predictions of the best state (%zu):\n", split.c_str(), rows.size());
    out << strfmt("%-24s %9s  %s\n", "question", "score", "prediction");
    for (const store::PredictionRecord& r : rows) {
      std::string text = r.prediction;
      for (char& c : text)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
      out << strfmt("%-24s %9.4f  %s\n", r.question_id.c_str(), r.score, text.c_str());
    }
  }
  return out.str();
}

}  // namespace kvs::search
