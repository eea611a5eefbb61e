// kvsearch data check: validate a LongBench directory and summarize it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "core/settings.h"
#include "longbench/data_check.h"
#include "longbench/split.h"

namespace {

struct DataCheckOptions {
  std::string longbench_dir;
  uint64_t seed = kvs::longbench::kDefaultSplitSeed;
};

void run_data_check(const DataCheckOptions& o) {
  const std::string dir = kvs::resolve_setting(kvs::kLongBenchSetting, o.longbench_dir);
  const auto summaries = kvs::longbench::check_longbench_dir(dir, o.seed);
  std::printf("%-22s %8s %11s %5s %5s %7s %8s\n", "dataset", "examples", "mean words", "dev",
              "test", "E", "max_new");
  size_t examples = 0, e_examples = 0;
  for (const auto& s : summaries) {
    const std::string e = s.e_examples ? std::to_string(s.e_examples) : "-";
    std::printf("%-22s %8zu %11.1f %5zu %5zu %7s %8d\n", s.dataset.c_str(), s.examples,
                s.mean_words, s.dev, s.test, e.c_str(), s.max_new_tokens);
    examples += s.examples;
    e_examples += s.e_examples;
  }
  std::printf("%s: OK, %zu datasets, %zu examples (%zu in LongBench-E files), split seed %llu\n",
              dir.c_str(), summaries.size(), examples, e_examples,
              static_cast<unsigned long long>(o.seed));
}

void setup_data_check(CLI::App& parent) {
  auto options = std::make_shared<DataCheckOptions>();
  auto* cmd = parent.add_subcommand(
      "check", "Validate a LongBench directory (data/*.jsonl, config/) and summarize it");
  cmd->add_option("--longbench", options->longbench_dir,
                  "The LongBench directory (default: $KVSEARCH_LONGBENCH or the config file)");
  cmd->add_option("--seed", options->seed, "Seed of the dev/test split");
  cmd->callback([options] { run_data_check(*options); });
}

const kvs::cli::CommandRegistration data_check_registration("data check", setup_data_check);

}  // namespace
