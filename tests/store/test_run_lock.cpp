// One process at a time on a run: a second one is told which process holds it, and the run is
// free again once its holder ends, however it ends.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/error.h"
#include "store/run_lock.h"
#include "store_fixtures.h"

namespace kvs::store {
namespace {

using test_support::expect_error;
using test_support::ScratchDir;

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

TEST(RunLock, ASecondHolderIsToldThePidOfTheFirst) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds run 3 until the parent has tried to take it
    int code = 0;
    try {
      RunLock lock(db, 3, "run-a");
      (void)!write(ready[1], "x", 1);
      char byte;
      (void)!read(done[0], &byte, 1);
    } catch (...) {
      code = 1;
    }
    _exit(code);
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  expect_error([&] { RunLock second(db, 3, "run-a"); },
               {db, "run 3 (run-a)", "another process (pid " + std::to_string(child) + ")"});
  { RunLock other_run(db, 4, "run-b"); }  // another run of the database is free
  (void)!write(done[1], "x", 1);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  { RunLock after(db, 3, "run-a"); }  // free once its holder released it
  EXPECT_FALSE(exists(db + ".run-3.lock")) << "the lock file is removed on release";
}

TEST(RunLock, AKilledHolderLeavesTheRunFree) {
  ScratchDir dir;
  const std::string db = dir.file("runs.db");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RunLock lock(db, 1, "run");
    (void)!write(ready[1], "x", 1);
    pause();  // killed while holding the run
    _exit(0);
  }
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  EXPECT_THROW(RunLock(db, 1, "run"), Error);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  RunLock lock(db, 1, "run");  // the kernel dropped the dead holder's flock
  EXPECT_TRUE(exists(lock.path()));
}

}  // namespace
}  // namespace kvs::store
