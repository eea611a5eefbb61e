// kvsearch demo data: the demo's synthetic long-context tasks in the LongBench layout.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "core/strfmt.h"
#include "demo/longbench_writer.h"

namespace {

void setup(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "data", "Write the demo tasks (passage retrieval, key-value recall) in the LongBench layout");
  auto opts = std::make_shared<kvs::demo::DemoDataOptions>();
  cmd->add_option("--out", opts->out_dir, "Output directory (data/ and config/ inside)")->required();
  cmd->add_option("--seed", opts->seed, "Generator seed")->capture_default_str();
  cmd->add_option("--count", opts->count, "Records per task")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->callback([opts] {
    for (const auto& s : kvs::demo::write_demo_longbench(*opts))
      std::cout << kvs::strfmt("%s: %lld records, contexts of %lld-%lld words\n", s.path.c_str(),
                               static_cast<long long>(s.records),
                               static_cast<long long>(s.min_words),
                               static_cast<long long>(s.max_words));
  });
}

const kvs::cli::CommandRegistration registration("demo data", setup);

}  // namespace
