// Round trips of every table and the rules of the typed API: resume, ordering, finished runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <limits>

#include "store/run_identity.h"
#include "store/spec_growth.h"
#include "store/store.h"
#include "store_fixtures.h"

namespace kvs::store {
namespace {

using test_support::expect_error;
using test_support::expect_same;
using test_support::make_replay;
using test_support::make_spec;
using test_support::make_state;
using test_support::ScratchDir;

TEST(Store, RunRoundTrip) {
  ScratchDir dir;
  Store store(dir.file("runs.db"));
  const RunSpec spec = make_spec("run-a");
  const FoundRun created = store.find_or_create_run(spec);
  EXPECT_FALSE(created.existed);
  EXPECT_FALSE(created.run.finished);
  EXPECT_EQ(created.run.states, 0);
  EXPECT_FALSE(created.run.started_at.empty());
  EXPECT_FALSE(created.run.finished_at.has_value());
  expect_same(created.run.spec, spec);

  RunSpec bare = make_spec("run-b");  // optional columns left out
  bare.dev_limit = 0;
  bare.segments = 0;
  bare.profile_family = "global";
  store.find_or_create_run(bare);

  const auto by_id = store.get_run(created.run.id);
  ASSERT_TRUE(by_id.has_value());
  expect_same(by_id->spec, spec);
  const auto by_key = store.find_run("run-b");
  ASSERT_TRUE(by_key.has_value());
  expect_same(by_key->spec, bare);
  EXPECT_FALSE(store.find_run("run-c").has_value());
  EXPECT_FALSE(store.get_run(12345).has_value());

  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].spec.key, "run-a");
  EXPECT_EQ(runs[1].spec.key, "run-b");
}

TEST(Store, RerunningFindsTheSameRun) {
  ScratchDir dir;
  Store store(dir.file("resume.db"));
  RunSpec spec = make_spec("run");
  const store::Run first = store.find_or_create_run(spec).run;
  store.record_state(first, make_state(0));
  // Where and how it runs may change between resumes; JSON compares by value.
  spec.model_path = "/elsewhere/tiny-mistral";
  spec.longbench_dir = "/elsewhere/longbench";
  spec.git_commit = "fedcba987654";
  spec.command_line = "kvsearch run ... (again)";
  spec.search_json = R"({ "tau": 0.1, "step": 0.3, "max_evals": 14 })";
  const FoundRun again = store.find_or_create_run(spec);
  EXPECT_TRUE(again.existed);
  EXPECT_EQ(again.run.id, first.id);
  EXPECT_EQ(again.run.states, 1);
  EXPECT_EQ(again.run.spec.model_path, "/models/tiny-mistral");  // as first recorded
}

TEST(Store, MismatchedResumeIsRefused) {
  ScratchDir dir;
  const std::string path = dir.file("mismatch.db");
  Store store(path);
  store.find_or_create_run(make_spec("run"));
  auto expect_refused = [&](auto change, const std::string& field) {
    RunSpec spec = make_spec("run");
    change(spec);
    expect_error([&] { store.find_or_create_run(spec); }, {path, "'run'", field});
  };
  expect_refused([](RunSpec& s) { s.model = "other-model"; }, "model 'tiny-mistral'");
  expect_refused([](RunSpec& s) { s.dataset = "hotpotqa"; }, "dataset");
  expect_refused([](RunSpec& s) { s.split_seed = 7; }, "split seed");
  expect_refused([](RunSpec& s) { s.dev_limit = 0; }, "dev question limit");
  expect_refused([](RunSpec& s) { s.budget = 128; }, "budget");
  expect_refused([](RunSpec& s) { s.profile_family = "curve"; }, "profile");
  expect_refused([](RunSpec& s) { s.segments = 8; }, "segments");
  expect_refused([](RunSpec& s) { s.search_json = R"({"max_evals":20,"step":0.3,"tau":0.1})"; },
                 "search settings");
  expect_refused([](RunSpec& s) { s.policy_json = R"({"window":16})"; }, "policy template");
  EXPECT_EQ(store.list_runs().size(), 1u);
}

TEST(Store, InvalidRunSpecsAreRefused) {
  ScratchDir dir;
  const std::string path = dir.file("invalid.db");
  Store store(path);
  RunSpec spec = make_spec("");
  expect_error([&] { store.find_or_create_run(spec); }, {path, "key"});
  spec = make_spec("k");
  spec.budget = 0;
  expect_error([&] { store.find_or_create_run(spec); }, {path, "budget"});
  spec = make_spec("k");
  spec.search_json = "{step: 0.3";
  expect_error([&] { store.find_or_create_run(spec); }, {path, "search settings", "JSON"});
  spec = make_spec("k");
  spec.job_key = "no-such-job";
  expect_error([&] { store.find_or_create_run(spec); }, {path, "no-such-job"});
  EXPECT_TRUE(store.list_runs().empty());
}

TEST(Store, StateRoundTripWithPredictions) {
  ScratchDir dir;
  Store store(dir.file("states.db"));
  const store::Run run = store.find_or_create_run(make_spec("run")).run;
  std::vector<StateRecord> recorded;
  for (int order = 0; order < 4; ++order) {
    recorded.push_back(make_state(order, 5));
    store.record_state(run, recorded.back());
  }
  const auto states = store.states_of(run, true);
  ASSERT_EQ(states.size(), recorded.size());
  for (size_t i = 0; i < states.size(); ++i) {
    EXPECT_EQ(states[i].run_id, run.id);
    EXPECT_FALSE(states[i].created_at.empty());
    expect_same(states[i].record, recorded[i]);
  }
  EXPECT_FALSE(states[0].record.changed_coordinate.has_value());  // the warm start
  EXPECT_EQ(states[3].record.git_commit, "fedcba987654-dirty-0123456789ab");  // its own build
  EXPECT_TRUE(store.states_of(run, false)[2].record.predictions.empty());
  expect_same(store.predictions_of(states[3], "dev"), recorded[3].predictions);
  EXPECT_TRUE(store.predictions_of(states[3], "test").empty());
  EXPECT_EQ(store.get_run(run.id)->states, 4);
}

TEST(Store, StatesAreRecordedOnceInOrder) {
  ScratchDir dir;
  const std::string path = dir.file("order.db");
  Store store(path);
  const store::Run run = store.find_or_create_run(make_spec("run")).run;
  store.record_state(run, make_state(0));
  store.record_state(run, make_state(1));
  expect_error([&] { store.record_state(run, make_state(1)); },
               {path, "'run' state 1", "already recorded"});
  expect_error([&] { store.record_state(run, make_state(0)); }, {"already recorded"});
  expect_error([&] { store.record_state(run, make_state(3)); },
               {"state 3", "gap", "next one is 2"});
  EXPECT_EQ(store.states_of(run).size(), 2u);
}

TEST(Store, FailedStateLeavesNothingBehind) {
  ScratchDir dir;
  const std::string path = dir.file("atomic.db");
  Store store(path);
  const store::Run run = store.find_or_create_run(make_spec("run")).run;
  StateRecord state = make_state(0, 4);
  state.predictions.push_back(state.predictions[1]);  // a question answered twice
  expect_error([&] { store.record_state(run, state); }, {path, "state 0", "UNIQUE"});
  EXPECT_TRUE(store.states_of(run).empty());
  store.record_state(run, make_state(0, 4));  // the slot is still free
  EXPECT_EQ(store.states_of(run, true)[0].record.predictions.size(), 4u);
}

TEST(Store, NonFiniteNumbersAndBadJsonAreRefused) {
  ScratchDir dir;
  const std::string path = dir.file("nan.db");
  Store store(path);
  const store::Run run = store.find_or_create_run(make_spec("run")).run;
  StateRecord state = make_state(0);
  state.lambda2[1] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { store.record_state(run, state); }, {path, "state 0", "lambda2[1]"});
  state = make_state(0);
  state.predictions[2].score = std::numeric_limits<double>::infinity();
  expect_error([&] { store.record_state(run, state); }, {"question 2", "score"});
  state = make_state(0);
  state.policy_json = "not json";
  expect_error([&] { store.record_state(run, state); }, {"policy", "JSON"});
  EXPECT_TRUE(store.states_of(run).empty());
}

TEST(Store, FinishedRunsTakeNoMoreStates) {
  ScratchDir dir;
  const std::string path = dir.file("finished.db");
  Store store(path);
  const store::Run run = store.find_or_create_run(make_spec("run")).run;
  store.record_state(run, make_state(0));
  store.mark_finished(run);
  const store::Run finished = *store.get_run(run.id);
  EXPECT_TRUE(finished.finished);
  ASSERT_TRUE(finished.finished_at.has_value());
  store.mark_finished(run);  // idempotent
  EXPECT_EQ(store.get_run(run.id)->finished_at, finished.finished_at);
  const FoundRun again = store.find_or_create_run(make_spec("run"));
  EXPECT_TRUE(again.existed);
  EXPECT_TRUE(again.run.finished);
  expect_error([&] { store.record_state(run, make_state(1)); }, {path, "finished"});
}

TEST(Store, ReplayRoundTrip) {
  ScratchDir dir;
  const std::string path = dir.file("replays.db");
  Store store(path);
  const store::Run run = store.find_or_create_run(make_spec("run")).run;
  for (int order = 0; order < 3; ++order) store.record_state(run, make_state(order));
  const auto states = store.states_of(run);
  const ReplayRecord replay = make_replay(6);
  store.record_replay(states[2], replay);
  store.record_replay(states[0], make_replay(2));

  const auto replays = store.replays_of(run);
  ASSERT_EQ(replays.size(), 2u);
  EXPECT_EQ(replays[0].eval_order, 0);
  EXPECT_EQ(replays[1].eval_order, 2);
  EXPECT_EQ(replays[1].state_id, states[2].id);
  EXPECT_EQ(replays[1].split, "test");
  EXPECT_EQ(replays[1].score, replay.score);
  EXPECT_EQ(replays[1].official_score, replay.official_score);
  EXPECT_EQ(replays[1].seconds, replay.seconds);
  EXPECT_EQ(replays[1].git_commit, "0a1b2c3d4e5f");  // the test split's build, not the run's
  EXPECT_FALSE(replays[1].created_at.empty());
  expect_same(store.predictions_of(states[2], "test"), replay.predictions);
  EXPECT_EQ(store.predictions_of(states[2], "dev").size(), 3u);  // the state's own

  expect_error([&] { store.record_replay(states[2], make_replay()); },
               {path, "state 2", "already has a test replay"});
  State stranger = states[1];
  stranger.id = 999;
  expect_error([&] { store.record_replay(stranger, make_replay()); }, {"no such state"});
  EXPECT_EQ(store.replays_of(run).size(), 2u);
}

TEST(Store, ExperimentsAndJobs) {
  ScratchDir dir;
  const std::string path = dir.file("jobs.db");
  Store store(path);
  const Experiment experiment = store.find_or_create_experiment("demo", R"({"budgets":[32,64]})");
  EXPECT_EQ(store.find_or_create_experiment("demo", R"({ "budgets": [32, 64] })").id,
            experiment.id);
  expect_error([&] { store.find_or_create_experiment("demo", R"({"budgets":[128]})"); },
               {path, "'demo'", "different spec"});

  JobSpec spec{"demo/tiny/passage_retrieval_en", "demo", R"({"budgets":[32,64]})", "node01"};
  const Job job = store.find_or_create_job(spec);
  EXPECT_FALSE(job.finished);
  EXPECT_FALSE(job.prefills.has_value());
  EXPECT_EQ(store.find_or_create_job(spec).id, job.id);
  expect_error([&] { store.find_or_create_job({"j2", "nope", "{}", "h"}); }, {"'nope'"});

  RunSpec run_spec = make_spec("demo/run");
  run_spec.job_key = spec.key;
  const store::Run run = store.find_or_create_run(run_spec).run;
  EXPECT_EQ(run.spec.job_key, spec.key);

  store.mark_job_finished(job, 20);
  const auto jobs = store.list_jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(jobs[0].finished);
  EXPECT_EQ(jobs[0].prefills, 20);
  EXPECT_TRUE(jobs[0].finished_at.has_value());
  EXPECT_EQ(jobs[0].spec.experiment, "demo");
  EXPECT_EQ(jobs[0].spec.host, "node01");
  ASSERT_EQ(store.list_experiments().size(), 1u);
  EXPECT_EQ(store.list_experiments()[0].spec_json, R"({"budgets":[32,64]})");
}

// A spec grows when its lists gain entries and nothing else changes: a grown experiment is
// continued (its recorded spec becomes the grown one), a grown job runs again for what was added.
TEST(Store, SpecsMayGrowByAddingToTheirLists) {
  EXPECT_TRUE(spec_grows(R"({"budgets":[64]})", R"({"budgets":[64]})"));
  EXPECT_TRUE(spec_grows(
      R"({"budgets":[128,256],"methods":[{"name":"A","budgets":[8]}]})",
      R"({"budgets":[64,128,256],"methods":[{"name":"B"},{"name":"A","budgets":[8]}]})"));
  EXPECT_FALSE(spec_grows(R"({"budgets":[64,128]})", R"({"budgets":[128]})"));  // one removed
  EXPECT_FALSE(spec_grows(R"({"methods":[{"name":"A"}]})",
                          R"({"methods":[{"name":"A","schedule":"uniform"}]})"));  // A changed
  EXPECT_FALSE(spec_grows(R"({"dev_limit":1})", R"({"dev_limit":12})"));
  EXPECT_FALSE(spec_grows(R"({"budgets":[64]})", R"({"budgets":[64],"max_length":9})"));
  EXPECT_FALSE(spec_grows(R"({"budgets":[64],"max_length":9})", R"({"budgets":[64]})"));

  ScratchDir dir;
  const std::string path = dir.file("jobs.db");
  Store store(path);
  const Experiment experiment = store.find_or_create_experiment("demo", R"({"budgets":[128]})");
  EXPECT_EQ(store.find_or_create_experiment("demo", R"({"budgets":[64,128]})").id, experiment.id);
  EXPECT_EQ(store.list_experiments().at(0).spec_json, R"({"budgets":[64,128]})");
  expect_error([&] { store.find_or_create_experiment("demo", R"({"budgets":[128]})"); },
               {"'demo'", "may only add datasets, budgets and methods"});

  const Job job = store.find_or_create_job({"demo/job", "demo", R"({"evaluations":["a"]})", "h"});
  store.mark_job_finished(job, 7);
  EXPECT_TRUE(
      store.find_or_create_job({"demo/job", "demo", R"({"evaluations":["a"]})", "h"}).finished);
  const Job grown =
      store.find_or_create_job({"demo/job", "demo", R"({"evaluations":["a","b"]})", "h"});
  EXPECT_EQ(grown.id, job.id);
  EXPECT_FALSE(grown.finished);  // "b" is still to do
  EXPECT_FALSE(grown.prefills.has_value());
  EXPECT_EQ(store.list_jobs().at(0).spec.spec_json, R"({"evaluations":["a","b"]})");
  expect_error(
      [&] {
        store.find_or_create_job({"demo/job", "demo", R"({"evaluations":["b"]})", "h"});
      },
      {"'demo/job'", "different spec"});
}

TEST(Store, ReadOnlyStoreRefusesWrites) {
  ScratchDir dir;
  const std::string path = dir.file("ro.db");
  { Store(path).find_or_create_run(make_spec("run")); }
  Store store(path, Access::read_only);
  const store::Run run = *store.find_run("run");
  expect_error([&] { store.record_state(run, make_state(0)); }, {path, "readonly"});
}

TEST(Store, LastAcceptedStateAndReplayLookup) {
  ScratchDir dir;
  Store store(dir.file("runs.db"));
  const store::Run run = store.find_or_create_run(make_spec("run")).run;
  EXPECT_FALSE(store.last_accepted(run).has_value());
  for (int64_t order = 0; order < 4; ++order) store.record_state(run, make_state(order));  // 0, 2 accepted
  const std::optional<State> last = store.last_accepted(run);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->record.eval_order, 2);
  const std::vector<State> states = store.states_of(run);
  EXPECT_FALSE(store.has_replay(states[0]));
  store.record_replay(states[0], make_replay());
  EXPECT_TRUE(store.has_replay(states[0]));
  EXPECT_FALSE(store.has_replay(states[2]));
}

TEST(Store, ReadOnlyStoreLeavesNoWalFilesBehind) {
  ScratchDir dir;
  const std::string path = dir.file("ro.db");
  { Store(path).find_or_create_run(make_spec("run")); }
  ASSERT_NE(access((path + "-wal").c_str(), F_OK), 0) << "a closed writer leaves no -wal";
  {
    Store store(path, Access::read_only);
    EXPECT_EQ(store.list_runs().size(), 1u);
  }
  EXPECT_NE(access((path + "-wal").c_str(), F_OK), 0) << "reading left " << path << "-wal";
  EXPECT_NE(access((path + "-shm").c_str(), F_OK), 0) << "reading left " << path << "-shm";
}

}  // namespace
}  // namespace kvs::store
