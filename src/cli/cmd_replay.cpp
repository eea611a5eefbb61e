// kvsearch replay / runs / show: the test-split trajectory and views of a results database.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/command.h"
#include "core/settings.h"
#include "search/run.h"

namespace {

void setup_replay(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("replay", "Evaluate every accepted state on the test split");
  auto req = std::make_shared<kvs::search::ReplayRequest>();
  cmd->add_option("--db", req->db_path, "Results database (or KVSEARCH_DB / config file)");
  cmd->add_option("--run", req->run_id, "Run id (default: every run)");
  cmd->add_option("--model", req->model_dir, "Checkpoint directory (default: the run's)");
  cmd->add_option("--longbench", req->longbench_dir, "LongBench directory (default: the run's)");
  cmd->add_option("--device", req->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--dtype", req->load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  cmd->callback([req] {
    req->db_path = kvs::resolve_setting(kvs::kDatabaseSetting, req->db_path, "results/kvsearch.sqlite");
    std::cout << kvs::search::replay_runs(*req);
  });
}

void setup_runs(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("runs", "List the runs of a results database");
  auto db = std::make_shared<std::string>();
  cmd->add_option("--db", *db, "Results database (or KVSEARCH_DB / config file)");
  cmd->callback([db] {
    std::cout << kvs::search::list_runs_text(
        kvs::resolve_setting(kvs::kDatabaseSetting, *db, "results/kvsearch.sqlite"));
  });
}

void setup_show(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("show", "Print one run with its states and profile per layer");
  auto db = std::make_shared<std::string>();
  auto run = std::make_shared<int64_t>(0);
  cmd->add_option("--db", *db, "Results database (or KVSEARCH_DB / config file)");
  cmd->add_option("--run", *run, "Run id")->required();
  auto predictions = std::make_shared<bool>(false);
  cmd->add_flag("--predictions", *predictions,
                "Also list the best state's predictions and scores per question (test where "
                "replayed, else dev)");
  cmd->callback([db, run, predictions] {
    std::cout << kvs::search::show_run_text(
        kvs::resolve_setting(kvs::kDatabaseSetting, *db, "results/kvsearch.sqlite"), *run,
        *predictions);
  });
}

const kvs::cli::CommandRegistration replay_registration("replay", setup_replay);
const kvs::cli::CommandRegistration runs_registration("runs", setup_runs);
const kvs::cli::CommandRegistration show_registration("show", setup_show);

}  // namespace
