// kvsearch: parse, dispatch, and turn every failure into one line on stderr and a non-zero exit.
#include <c10/util/Exception.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "cpu/features.h"
#include "model/runtime.h"

namespace kvs::cli {

std::vector<std::pair<std::string, CommandSetup>>& registered_commands() {
  static std::vector<std::pair<std::string, CommandSetup>> commands;
  return commands;
}

std::string group_description(const std::string& group) {
  if (group == "bench") return "Benchmarks: print measured figures next to their baselines";
  if (group == "data") return "Inspect and validate datasets";
  if (group == "experiment") return "Batch experiments: a spec's jobs, run locally or on Slurm, merged";
  return group + " commands";
}

namespace {
std::string invocation;
}

const std::string& command_line() { return invocation; }

void record_command_line(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) invocation += (i ? " " : "") + std::string(argv[i]);
}

CommandRegistration::CommandRegistration(const char* name, CommandSetup setup) {
  registered_commands().emplace_back(name, setup);
}

}  // namespace kvs::cli

int main(int argc, char** argv) {
  kvs::cli::record_command_line(argc, argv);
  CLI::App app{"kvsearch: a research harness for KV-cache eviction (diversity-aware, layer-wise)"};
  app.require_subcommand(1);
  bool verbose = false;
  int threads = 0;
  app.add_flag("-v,--verbose", verbose, "Debug logging");
  app.add_option("--threads", threads, "CPU threads for LibTorch (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  app.parse_complete_callback([&] {
    kvs::log::set_verbose(verbose);
    kvs::cpu::level();  // reads KVS_CPU now, so a bad value is one line before any work starts
    kvs::model::set_cpu_threads(threads);
    kvs::model::reuse_freed_memory();
  });

  auto commands = kvs::cli::registered_commands();
  std::sort(commands.begin(), commands.end());
  std::map<std::string, CLI::App*> groups;
  for (const auto& [name, setup] : commands) {
    const auto space = name.find(' ');
    if (space == std::string::npos) {
      setup(app);
      continue;
    }
    const std::string group = name.substr(0, space);
    CLI::App*& parent = groups[group];
    if (!parent) {
      parent = app.add_subcommand(group, kvs::cli::group_description(group));
      parent->require_subcommand(1);
    }
    setup(*parent);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kvs::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "error: LibTorch: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
