// One process at a time evaluates a run. Two processes started on the same run would otherwise
// both evaluate its next state and the second would fail recording it; with the lock the second
// stops at once and says which process holds the run. The lock is an flock on a small file
// beside the database (<db>.run-<id>.lock, holding the owner's pid), released when its holder
// ends for any reason (the kernel drops the flock of a killed process), and removed on release.
#pragma once

#include <cstdint>
#include <string>

namespace kvs::store {

class RunLock {
 public:
  // Takes the lock of run `run_id` of the database at `db_path`; throws a kvs::Error naming the
  // run and the holder's pid when another process has it.
  RunLock(const std::string& db_path, int64_t run_id, const std::string& run_key);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace kvs::store
