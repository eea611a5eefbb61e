// Combining job databases: everything arrives once, merging again adds nothing, conflicts are
// refused without writing.
#include <gtest/gtest.h>

#include <fstream>

#include "store/merge.h"
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

constexpr const char* kExperimentSpec = R"({"name":"demo","budgets":[32,64]})";

// What an experiment job writes: its experiment and job, runs with `states` states each (3 dev
// predictions per state) and a test replay of state 0.
void write_job(const std::string& path, const std::string& job_key,
               const std::vector<std::string>& run_keys, int states, bool finish,
               const std::string& job_spec = R"({"dataset":"d"})") {
  Store store(path);
  store.find_or_create_experiment("demo", kExperimentSpec);
  const Job job = store.find_or_create_job({job_key, "demo", job_spec, "node"});
  for (const std::string& key : run_keys) {
    RunSpec spec = make_spec(key);
    spec.job_key = job_key;
    const store::Run run = store.find_or_create_run(spec).run;
    for (int order = run.states; order < states; ++order)
      store.record_state(run, make_state(order));
    store.record_replay(store.states_of(run)[0], make_replay(4));
    if (finish) store.mark_finished(run);
  }
  if (finish) store.mark_job_finished(job, 10);
}

struct Counts {
  size_t runs = 0, states = 0, replays = 0, predictions = 0;
  bool operator==(const Counts& o) const {
    return runs == o.runs && states == o.states && replays == o.replays &&
           predictions == o.predictions;
  }
};

Counts count(const std::string& path) {
  Store store(path, Access::read_only);
  Counts c;
  for (const store::Run& run : store.list_runs()) {
    ++c.runs;
    for (const State& state : store.states_of(run, true)) {
      ++c.states;
      c.predictions += state.record.predictions.size();
      c.predictions += store.predictions_of(state, "test").size();
    }
    c.replays += store.replays_of(run).size();
  }
  return c;
}

TEST(Merge, CombinesJobsOnceAndIsIdempotent) {
  ScratchDir dir;
  const std::string a = dir.file("job-a.db"), b = dir.file("job-b.db"), all = dir.file("all.db");
  write_job(a, "job-a", {"a/global", "a/segments"}, 4, true);
  write_job(b, "job-b", {"b/global"}, 6, true);

  const MergeReport first = merge_databases(all, {a, b});
  EXPECT_EQ(first.experiments_added, 1);
  EXPECT_EQ(first.jobs_added, 2);
  EXPECT_EQ(first.runs_added, 3);
  EXPECT_EQ(first.states_added, 4 + 4 + 6);
  EXPECT_EQ(first.states_present, 0);
  EXPECT_EQ(first.replays_added, 3);
  EXPECT_EQ(first.predictions_added, 14 * 3 + 3 * 4);
  const Counts merged = count(all);
  EXPECT_EQ(merged, (Counts{3, 14, 3, 14 * 3 + 3 * 4}));

  const MergeReport second = merge_databases(all, {a, b, a});
  EXPECT_EQ(second.experiments_added + second.jobs_added + second.runs_added + second.states_added +
                second.replays_added + second.predictions_added,
            0);
  EXPECT_EQ(second.states_present, 2 * 8 + 6);
  EXPECT_EQ(count(all), merged);

  // The merged rows are the sources' rows, timestamps included.
  Store source(a, Access::read_only), target(all, Access::read_only);
  const store::Run from = *source.find_run("a/segments");
  const store::Run into = *target.find_run("a/segments");
  expect_same(into.spec, from.spec);
  EXPECT_TRUE(into.finished);
  EXPECT_EQ(into.started_at, from.started_at);
  EXPECT_EQ(into.finished_at, from.finished_at);
  const auto from_states = source.states_of(from, true);
  const auto into_states = target.states_of(into, true);
  ASSERT_EQ(into_states.size(), from_states.size());
  for (size_t i = 0; i < from_states.size(); ++i) {
    expect_same(into_states[i].record, from_states[i].record);
    EXPECT_EQ(into_states[i].created_at, from_states[i].created_at);
  }
  expect_same(target.predictions_of(into_states[0], "test"),
              source.predictions_of(from_states[0], "test"));
  // Each split's binary comes along (expect_same compares the states').
  ASSERT_EQ(target.replays_of(into).size(), 1u);
  EXPECT_EQ(target.replays_of(into)[0].git_commit, "0a1b2c3d4e5f");
  EXPECT_EQ(into_states[3].record.git_commit, "fedcba987654-dirty-0123456789ab");
  // Where each state's cache went, on both splits, is copied with it.
  for (size_t i = 0; i < from_states.size(); ++i) {
    for (const char* split : {"dev", "test"}) {
      EXPECT_EQ(target.cache_layout(into_states[i], split),
                source.cache_layout(from_states[i], split))
          << "state " << i << " " << split;
    }
  }
  ASSERT_TRUE(target.cache_layout(into_states[0], "test").has_value());
  EXPECT_EQ(target.cache_layout(into_states[0], "test")->counts[1][1], 7);
  const auto jobs = target.list_jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_TRUE(jobs[0].finished);
  EXPECT_EQ(jobs[0].prefills, 10);
}

TEST(Merge, CompletesAnInterruptedCopyOfARun) {
  ScratchDir dir;
  const std::string partial = dir.file("partial.db"), complete = dir.file("complete.db"),
                    all = dir.file("all.db");
  write_job(partial, "job", {"run"}, 3, false);
  write_job(complete, "job", {"run"}, 7, true);

  merge_databases(all, {partial});
  EXPECT_FALSE(Store(all).find_run("run")->finished);
  const MergeReport report = merge_databases(all, {complete});
  EXPECT_EQ(report.runs_added, 0);
  EXPECT_EQ(report.states_present, 3);
  EXPECT_EQ(report.states_added, 4);
  EXPECT_EQ(report.replays_added, 0);  // state 0's replay came with the partial copy
  Store store(all);
  const store::Run run = *store.find_run("run");
  EXPECT_TRUE(run.finished);
  EXPECT_EQ(run.states, 7);
  EXPECT_TRUE(store.list_jobs()[0].finished);

  // A partial copy merged after the complete one changes nothing.
  const MergeReport late = merge_databases(all, {partial});
  EXPECT_EQ(late.states_added, 0);
  EXPECT_TRUE(Store(all).find_run("run")->finished);
}

TEST(Merge, ConflictsAreRefusedWithoutWriting) {
  ScratchDir dir;
  const std::string all = dir.file("all.db"), good = dir.file("good.db"),
                    other_model = dir.file("other-model.db"), other_policy = dir.file("other.db");
  write_job(all, "job", {"run"}, 2, false);
  const Counts before = count(all);

  write_job(good, "job2", {"fine"}, 2, true);
  {
    Store store(other_model);
    RunSpec spec = make_spec("run");
    spec.model = "other-model";
    store.find_or_create_run(spec);
  }
  // Sources are merged in order, each in its own transaction: `good` lands, the bad one not.
  expect_error(
      [&] {
        merge_databases(all, {good, other_model});
      },
      {other_model, "cannot merge into " + all, "'run'", "model"});
  EXPECT_EQ(count(all).runs, before.runs + 1);

  {
    Store store(other_policy);
    store.find_or_create_experiment("demo", kExperimentSpec);
    store.find_or_create_job({"job", "demo", R"({"dataset":"d"})", "node"});
    RunSpec spec = make_spec("run");
    spec.job_key = "job";
    const store::Run run = store.find_or_create_run(spec).run;
    StateRecord state = make_state(0);
    state.policy_json = R"({"lambda1":[1,1,1]})";
    store.record_state(run, state);
    store.record_state(run, make_state(1));
    store.record_state(run, make_state(2));
  }
  const Counts with_good = count(all);
  expect_error([&] { merge_databases(all, {other_policy}); },
               {other_policy, "'run' state 0", "another policy"});
  EXPECT_EQ(count(all), with_good);
}

// Job databases written before and after a spec grew merge into one: the grown experiment and job
// stay, whichever copy comes first; a spec that changed otherwise is still a conflict.
TEST(Merge, TheGrownSpecStays) {
  ScratchDir dir;
  const std::string older = dir.file("older.db"), grown = dir.file("grown.db"),
                    all = dir.file("all.db"), all2 = dir.file("all2.db"),
                    other = dir.file("other.db");
  constexpr const char* kGrownSpec = R"({"name":"demo","budgets":[16,32,64]})";
  write_job(older, "job", {"run"}, 2, true, R"({"dataset":"d","runs":[1]})");
  {
    Store store(grown);
    store.find_or_create_experiment("demo", kGrownSpec);
    store.find_or_create_job({"job", "demo", R"({"dataset":"d","runs":[1,2]})", "node"});
  }
  const auto recorded = [](const std::string& path) {
    Store store(path, Access::read_only);
    return std::make_pair(store.list_experiments().at(0).spec_json, store.list_jobs().at(0));
  };
  merge_databases(all, {older, grown});
  merge_databases(all2, {grown, older});
  for (const std::string& path : {all, all2}) {
    const auto [experiment, job] = recorded(path);
    EXPECT_EQ(experiment, kGrownSpec) << path;
    EXPECT_EQ(job.spec.spec_json, R"({"dataset":"d","runs":[1,2]})") << path;
    EXPECT_FALSE(job.finished) << path;  // the grown job has not finished
    EXPECT_EQ(count(path).runs, 1u) << path;
  }
  {
    Store store(other);
    store.find_or_create_experiment("demo", R"({"name":"demo","budgets":[128]})");
  }
  expect_error([&] { merge_databases(all, {other}); },
               {other, "experiment 'demo' has a different spec in each"});
}

TEST(Merge, BadSourcesAreRefused) {
  ScratchDir dir;
  const std::string all = dir.file("all.db"), junk = dir.file("junk.db");
  write_job(all, "job", {"run"}, 1, true);
  expect_error([&] { merge_databases(all, {all}); }, {all, "merge target itself"});
  expect_error([&] { merge_databases(all, {dir.file("missing.db")}); }, {"missing.db", "no such"});
  std::ofstream(junk) << "not a database at all, just some text that is long enough to fill a "
                         "whole SQLite header of one hundred bytes and then some more";
  expect_error([&] { merge_databases(all, {junk}); }, {junk, "not a SQLite database"});
}

}  // namespace
}  // namespace kvs::store
