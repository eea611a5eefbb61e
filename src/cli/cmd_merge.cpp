// kvsearch merge: combine results databases (one per batch job) without duplicates.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "core/error.h"
#include "core/strfmt.h"
#include "store/merge.h"

namespace {

void setup_merge(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("merge", "Copy into TARGET what the SOURCES have and it lacks");
  auto target = std::make_shared<std::string>();
  auto sources = std::make_shared<std::vector<std::string>>();
  cmd->add_option("target", *target, "Database to merge into (created when missing)")->required();
  cmd->add_option("sources", *sources, "Databases to merge from")->required();
  cmd->callback([target, sources] {
    for (const auto& source : *sources)  // before the target is created
      if (!std::filesystem::is_regular_file(source)) throw kvs::error_at(source, "no such database file");
    const kvs::store::MergeReport r = kvs::store::merge_databases(*target, *sources);
    std::cout << kvs::strfmt(
        "merged %zu databases into %s: %lld experiments, %lld jobs, %lld runs, %lld states (%lld already "
        "there), %lld replays, %lld predictions added\n",
        sources->size(), target->c_str(), static_cast<long long>(r.experiments_added),
        static_cast<long long>(r.jobs_added), static_cast<long long>(r.runs_added),
        static_cast<long long>(r.states_added), static_cast<long long>(r.states_present),
        static_cast<long long>(r.replays_added), static_cast<long long>(r.predictions_added));
  });
}

const kvs::cli::CommandRegistration merge_registration("merge", setup_merge);

}  // namespace
