// kvsearch run: a fixed policy or a layer-wise profile search on a dataset's dev split.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/error.h"
#include "core/settings.h"
#include "evict/budget.h"
#include "longbench/thinking.h"
#include "search/run.h"

namespace {

void setup_run(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("run", "Evaluate a policy or search a layer-wise profile (dev split)");
  auto req = std::make_shared<kvs::search::RunRequest>();
  cmd->add_option("--dataset", req->session.dataset, "LongBench dataset, e.g. passage_retrieval_en")->required();
  cmd->add_option("--profile", req->family, "baseline | pyramid | global | segments | curve")
      ->capture_default_str();
  cmd->add_option("--segments", req->segments, "Segments of the segments profile")->capture_default_str();
  cmd->add_option("--budget", req->budget, "KV entries kept per head and layer")->capture_default_str();
  auto schedule = std::make_shared<std::string>();
  cmd->add_option("--schedule", *schedule,
                  "Per-layer budgets: uniform | pyramid (default: uniform for baseline, pyramid otherwise)");
  auto allocation = std::make_shared<std::string>();
  cmd->add_option(
      "--allocation", *allocation,
      "Run the profile under an allocating wrapper: adakv, or its JSON without base and "
      "budget, e.g. '{\"method\": \"adakv\", \"rule\": \"original\"}'");
  cmd->add_option("--model", req->session.model_dir, "Checkpoint directory (or KVSEARCH_MODEL / config file)");
  cmd->add_option("--longbench", req->session.longbench_dir, "LongBench directory (or KVSEARCH_LONGBENCH / config)");
  cmd->add_option("--db", req->db_path, "SQLite results database (default results/kvsearch.sqlite)");
  cmd->add_option("--evals", req->max_evals, "Evaluations per search, warm start included")
      ->capture_default_str();
  cmd->add_option("--step", req->step, "Coordinate step in a-space")->capture_default_str();
  cmd->add_option("--tau", req->tau, "Minimum dev improvement to accept a move")->capture_default_str();
  cmd->add_option("--speculation", req->speculation,
                  "Neighbour moves evaluated per batch on shared prefills (results stay sequential)")
      ->capture_default_str();
  cmd->add_option("--split-seed", req->session.split_seed, "Dev/test split seed")->capture_default_str();
  cmd->add_option("--limit-dev", req->limit_dev, "Use only the first N dev questions (0: all)");
  cmd->add_option("--max-length", req->session.max_length,
                  "Prompt truncation in tokens (default: 31500 Mistral, 7500 Llama-3)");
  cmd->add_option("--chat-template", req->session.chat_template,
                  "auto (llama3 for Llama-3 models, else none) | none | mistral | llama3")->capture_default_str();
  auto thinking = std::make_shared<std::string>("keep");
  cmd->add_option("--thinking", *thinking,
                  "What the scorer sees of an answer: keep (all of it) | strip (what follows its "
                  "last </think>: reasoning models); recorded with the run")
      ->capture_default_str();
  cmd->add_flag("--eval-test", req->eval_test, "Score the final state on the test split");
  cmd->add_option("--device", req->session.load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--dtype", req->session.load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  cmd->callback([req, schedule, allocation, thinking] {
    try {
      req->session.thinking = kvs::longbench::parse_thinking(*thinking);
    } catch (const kvs::Error& e) {
      throw kvs::Error(std::string("--thinking: ") + e.what());
    }
    if (!schedule->empty()) req->schedule = kvs::evict::parse_schedule(*schedule, "--schedule");
    // A bare name is the method at its defaults.
    if (!allocation->empty())
      req->allocation_json =
          allocation->front() == '{' ? *allocation : "{\"method\": \"" + *allocation + "\"}";
    req->session.model_dir = kvs::resolve_setting(kvs::kModelSetting, req->session.model_dir);
    req->session.longbench_dir = kvs::resolve_setting(kvs::kLongBenchSetting, req->session.longbench_dir);
    req->db_path = kvs::resolve_setting(kvs::kDatabaseSetting, req->db_path, "results/kvsearch.sqlite");
    const auto parent_dir = std::filesystem::path(req->db_path).parent_path();
    if (!parent_dir.empty()) std::filesystem::create_directories(parent_dir);
    req->command_line = kvs::cli::command_line();
    std::cout << kvs::search::run_summary_text(kvs::search::run_search(*req));
  });
}

const kvs::cli::CommandRegistration run_registration("run", setup_run);

}  // namespace
