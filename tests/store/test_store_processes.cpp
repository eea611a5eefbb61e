// Several processes on one database file at once, as parallel `kvsearch run`s against one --db.
// The children are forked before any connection exists and start together on a pipe.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <vector>

#include "store/store.h"
#include "store_fixtures.h"

namespace kvs::store {
namespace {

using test_support::make_spec;
using test_support::make_state;
using test_support::ScratchDir;

constexpr int kStatesPerRun = 200;
constexpr int kPredictionsPerState = 5;

// Forks one child per body; each waits until all exist, runs its body and exits with the code it
// returns (1 when it throws). Returns the exit codes in order.
std::vector<int> run_together(const std::vector<std::function<int()>>& bodies) {
  int gate[2];
  if (pipe(gate) != 0) throw std::runtime_error("pipe failed");
  std::vector<pid_t> children;
  for (const auto& body : bodies) {
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      close(gate[1]);
      char byte;
      (void)!read(gate[0], &byte, 1);  // returns 0 when the parent closes the write end
      int code = 1;
      try {
        code = body();
      } catch (const std::exception& e) {
        fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
      }
      _exit(code);  // no gtest teardown in the child
    }
    children.push_back(pid);
  }
  close(gate[0]);
  close(gate[1]);  // opens the gate
  std::vector<int> codes;
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

int write_run(const std::string& path, const std::string& key) {
  Store store(path);
  const store::Run run = store.find_or_create_run(make_spec(key)).run;
  for (int order = 0; order < kStatesPerRun; ++order) {
    store.record_state(run, make_state(order, kPredictionsPerState));
    usleep(1000);  // a search evaluates between states; back to back, one writer would starve
  }
  store.mark_finished(run);
  return 0;
}

TEST(StoreProcesses, TwoWritersOnANewFileBothComplete) {
  ScratchDir dir;
  const std::string path = dir.file("shared.db");  // created by whichever child comes first
  const auto codes = run_together(
      {[&] { return write_run(path, "first"); }, [&] { return write_run(path, "second"); }});
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));

  Store store(path, Access::read_only);
  store.check_integrity();
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const store::Run& run : runs) {
    EXPECT_TRUE(run.finished) << run.spec.key;
    const auto states = store.states_of(run, true);
    ASSERT_EQ(states.size(), static_cast<size_t>(kStatesPerRun)) << run.spec.key;
    for (int order = 0; order < kStatesPerRun; ++order) {
      EXPECT_EQ(states[order].record.eval_order, order);
      EXPECT_EQ(states[order].record.predictions.size(), static_cast<size_t>(kPredictionsPerState));
    }
  }
}

TEST(StoreProcesses, OneRunAskedForTwiceAtOnceIsCreatedOnce) {
  ScratchDir dir;
  const std::string path = dir.file("same.db");
  auto ask = [&] { return Store(path).find_or_create_run(make_spec("run")).existed ? 11 : 10; };
  auto codes = run_together({ask, ask});
  std::sort(codes.begin(), codes.end());
  EXPECT_EQ(codes, (std::vector<int>{10, 11}));
  EXPECT_EQ(Store(path, Access::read_only).list_runs().size(), 1u);
}

}  // namespace
}  // namespace kvs::store
