// kvsearch generate: greedy decoding from a checkpoint, optionally dumping every logit row, with
// the full cache or one evicted by a policy (--policy FILE.json or the --budget/--profile shorthands).
#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.h"
#include "core/build_info.h"
#include "core/error.h"
#include "core/id_list.h"
#include "evict/policy.h"
#include "search/text_generation.h"

namespace {

void setup_generate(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("generate", "Greedy generation from a checkpoint");
  auto req = std::make_shared<kvs::search::TextGenerationRequest>();
  auto prompt = std::make_shared<std::string>();
  auto token_ids = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto policy_files = std::make_shared<std::vector<std::string>>();
  auto paths = std::make_shared<kvs::search::GenerationOutputs>();
  auto budget = std::make_shared<int64_t>(64);
  auto profile = std::make_shared<std::string>();
  auto lambda1 = std::make_shared<double>(0.0);
  auto lambda2 = std::make_shared<double>(0.0);
  cmd->add_option("--model", req->model_dir, "Checkpoint directory")->required();
  auto* p = cmd->add_option("--prompt", *prompt, "Prompt text");
  auto* t = cmd->add_option("--token-ids", *token_ids, "Prompt token ids, comma-separated");
  p->excludes(t);
  auto* ds =
      cmd->add_option("--dataset", req->dataset,
                      "Generate for a data record's prompt (with --longbench, --record): the "
                      "search's prompt rules, with the question span the question and context "
                      "observation protocols need");
  cmd->add_option("--longbench", req->longbench_dir,
                  "LongBench-layout data directory (with --dataset)");
  cmd->add_option("--record", req->record, "Record (0-based line) of --dataset")
      ->capture_default_str();
  ds->excludes(p)->excludes(t);
  cmd->add_option("--max-new-tokens", req->max_new_tokens, "Tokens to generate")
      ->capture_default_str();
  cmd->add_option("--chat-template", req->chat_template,
                  "auto | none | mistral | llama3 | chatml | smollm2 | qwen2.5 | qwen3-no-think | "
                  "deepseek-r1")
      ->capture_default_str();
  // With several policies each of these names a directory: one file per policy, named by its
  // policy file's stem (STEM.npy, STEM.kept.json, STEM.trace.jsonl).
  cmd->add_option("--dump-logits", paths->logits,
                  "Write every prompt position's and generated step's logits (float32 .npy; a "
                  "directory with several policies)");
  cmd->add_option("--dump-kept", paths->kept,
                  "Write the policy's kept prompt positions per layer and cache head (JSON "
                  "{\"layers\": ...}; a directory with several policies)");
  cmd->add_option("--trace-kept", paths->trace,
                  "Under a decoding schedule: write every compression's held positions (JSON lines "
                  "{step, seen, layers, counts}; a directory with several policies)");
  auto teacher = std::make_shared<std::string>();
  auto* tt = cmd->add_option("--teacher-tokens", *teacher,
                             "Decode these token ids (comma-separated) instead of greedy ones "
                             "(teacher forcing)");
  cmd->add_option("--device", req->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--dtype", req->load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  auto* pol = cmd->add_option("--policy", *policy_files,
                              "Evict the prompt's cache with this policy (JSON; repeat: every "
                              "policy from one prefill on one shared decode)");
  auto* b = cmd->add_option("--budget", *budget, "Cache budget per head (shorthand policies)")
                ->capture_default_str();
  // Checked by shorthand_policy: one line naming the flag, exit 1, as a bad policy file.
  auto* prof =
      cmd->add_option("--profile", *profile, "Shorthand policy: baseline | pyramid | global");
  auto* l1 = cmd->add_option("--lambda1", *lambda1, "Global lambda1 (with --profile global)");
  auto* l2 = cmd->add_option("--lambda2", *lambda2, "Global lambda2 (with --profile global)");
  auto full = std::make_shared<bool>(false);
  cmd->add_flag("--full-cache", *full,
                "Also the full cache's row, after the policies' (its files named full-cache)");
  pol->excludes(prof);
  cmd->add_flag(
      "--json", *json,
      "Print {name, prompt_ids, generated_ids, text, policy, device, dtype, binary, cache}, "
      "one line per policy in order (name: the policy file's stem); cache "
      "(under a policy): "
      "kept_entries, bytes (keys and values held for the prompt, ragged heads padded) "
      "and uniform_bytes (the uniform layout at the same mean budget); under a decoding "
      "schedule or --teacher-tokens: largest (the most entries a KV head of one layer held; "
      "a head-wise policy's heads: their mean) and compressions, and with --teacher-tokens "
      "teacher_nll_steps, teacher_nll "
      "and teacher_perplexity");
  cmd->callback([=] {
    if (p->count() == 0 && t->count() == 0 && ds->count() == 0)
      throw kvs::Error("give --prompt, --token-ids or --dataset");
    if (ds->count() && req->longbench_dir.empty()) throw kvs::Error("--dataset needs --longbench");
    if (prof->count() == 0 && (b->count() || l1->count() || l2->count()))
      throw kvs::Error("--budget, --lambda1 and --lambda2 need --profile");
    std::vector<std::string> names;
    for (const std::string& f : *policy_files) {
      req->policies.push_back(kvs::evict::load_policy(f));
      names.push_back(std::filesystem::path(f).stem().string());
    }
    if (prof->count()) {
      req->policies.push_back(kvs::evict::shorthand_policy(
          *budget, *profile, l1->count() ? std::optional<double>(*lambda1) : std::nullopt,
          l2->count() ? std::optional<double>(*lambda2) : std::nullopt));
      names.push_back(*profile);
    }
    req->full_cache = *full;
    if (names.empty() || req->full_cache) names.push_back("full-cache");
    req->outputs = kvs::search::per_row_outputs(*paths, names);
    if (tt->count()) {
      req->teacher_ids = kvs::parse_id_list(*teacher, "--teacher-tokens");
      if (req->teacher_ids.empty()) throw kvs::Error("--teacher-tokens: no ids given");
    }
    if (t->count()) {
      req->prompt_ids = kvs::parse_id_list(*token_ids, "--token-ids");
      if (req->prompt_ids.empty()) throw kvs::Error("--token-ids: no ids given");
    } else if (p->count())
      req->prompt_text = *prompt;
    const auto out = kvs::search::generate_text(*req);
    for (size_t r = 0; r < out.rows.size(); ++r) {
      const kvs::search::TextGenerationRow& row = out.rows[r];
      const bool has_policy = r < req->policies.size();
      if (!*json) {
        std::cout << (out.rows.size() > 1 ? names[r] + ": " : "") << row.text << std::endl;
        continue;
      }
      nlohmann::json j{
          {"name", names[r]},
          {"prompt_ids", out.prompt_ids},
          {"generated_ids", row.generated_ids},
          {"text", row.text},
          {"question_span", out.question_span
                                ? nlohmann::json{out.question_span->begin, out.question_span->end}
                                : nlohmann::json(nullptr)},
          {"policy",
           has_policy ? kvs::evict::policy_to_json(req->policies[r]) : nlohmann::json(nullptr)},
          {"device", out.device},
          {"dtype", out.dtype},
          {"binary", kvs::build_info::git_commit()}};
      if (out.decode_time) {
        double nll = 0;
        for (double v : row.nll) nll += v;
        j["cache"] = {{"largest", row.largest_cache}, {"compressions", row.compressions}};
        if (!row.nll.empty()) {
          j["teacher_nll_steps"] = row.nll;  // -log p of each teacher token, in order
          j["teacher_nll"] = nll / double(row.nll.size());
          j["teacher_perplexity"] = std::exp(nll / double(row.nll.size()));
        }
      } else if (has_policy)
        j["cache"] = {{"kept_entries", row.kept_entries},
                      {"bytes", row.cache_bytes},
                      {"uniform_bytes", row.uniform_cache_bytes}};
      std::cout << j.dump() << std::endl;
    }
  });
}

const kvs::cli::CommandRegistration generate_registration("generate", setup_generate);

}  // namespace
