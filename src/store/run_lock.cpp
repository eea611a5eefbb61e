#include "store/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace kvs::store {

namespace {

// The pid the holder wrote into the lock file ("unknown" while it is still being written).
std::string holder_pid(const std::string& path) {
  std::ifstream in(path);
  std::string pid;
  if (!(in >> pid)) return "unknown";
  return pid;
}

// Whether the open file `fd` is still the one at `path` (a releasing holder unlinks it first).
bool still_linked(int fd, const std::string& path) {
  struct stat opened, named;
  return fstat(fd, &opened) == 0 && stat(path.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
         opened.st_ino == named.st_ino;
}

}  // namespace

RunLock::RunLock(const std::string& db_path, int64_t run_id, const std::string& run_key)
    : path_(db_path + ".run-" + std::to_string(run_id) + ".lock") {
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw error_at(path_, std::string("cannot create the run's lock file: ") + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      if (err != EWOULDBLOCK)
        throw error_at(path_, std::string("cannot lock the run: ") + std::strerror(err));
      throw error_at(db_path, "run " + std::to_string(run_id) + " (" + run_key +
                                  ") is being evaluated by another process (pid " + holder_pid(path_) +
                                  "); wait for it to end, then rerun to resume or show the run");
    }
    if (still_linked(fd_, path_)) break;
    ::close(fd_);  // locked a file its holder removed on release: take the new one
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::write(fd_, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::unlink(path_.c_str());
    ::close(fd_);
    throw error_at(path_, std::string("cannot write the run's lock file: ") + std::strerror(err));
  }
}

RunLock::~RunLock() {
  // Unlinked before the flock is dropped: a waiting process then finds the file gone and retries.
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace kvs::store
