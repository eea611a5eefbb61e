// Child processes: kvsearch itself per experiment job (local launcher), sbatch and squeue (Slurm),
// the programs that print data (`data text`'s default) and the benchmarks' Python references.
// argv[0] is looked up in PATH. Torch-free.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kvs {

// Starts argv with stdout and stderr appended to log_path; throws when it cannot start.
pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log_path);

// Waits for a child: its exit status, or 128 + the signal that ended it.
int wait_child(pid_t pid);

struct Captured {
  int status = 0;
  std::string output;  // stdout and stderr together
};
// Runs argv to completion and returns what it printed.
Captured capture(const std::vector<std::string>& argv);

// The path of the running kvsearch binary (what the jobs run).
std::string self_executable();

}  // namespace kvs
