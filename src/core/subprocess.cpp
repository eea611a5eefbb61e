#include "core/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

extern char** environ;

namespace kvs {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// Spawns argv with stdout and stderr on `fd`.
pid_t spawn_to(const std::vector<std::string>& argv, int fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fd, STDERR_FILENO);
  auto args = c_argv(argv);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

}  // namespace

pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log_path) {
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw error_at(log_path, std::string("cannot open the log: ") + std::strerror(errno));
  try {
    const pid_t pid = spawn_to(argv, fd);
    ::close(fd);
    return pid;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw Error(std::string("waiting for a child process: ") + std::strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

Captured capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = 0;
  try {
    pid = spawn_to(argv, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  Captured out;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  out.status = wait_child(pid);
  return out;
}

std::string self_executable() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw Error("cannot find the kvsearch binary (/proc/self/exe)");
  const std::string path(buffer, static_cast<size_t>(n));
  // A rebuild replaces the binary under a running launcher: its jobs would run other code.
  const std::string deleted = " (deleted)";
  if (path.size() > deleted.size() &&
      path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)
    throw Error(
        path.substr(0, path.size() - deleted.size()) +
        " was replaced while this command ran (rebuilt?): rerun it to resume with the new binary");
  return path;
}

}  // namespace kvs
