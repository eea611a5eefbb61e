// kvsearch fidelity: decode-time policies against the full cache on its own long continuation
// (search/fidelity.h): teacher-forced KL and top-1 agreement, free-running first divergence and
// ROUGE-L.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/build_info.h"
#include "core/error.h"
#include "core/id_list.h"
#include "core/strfmt.h"
#include "evict/policy.h"
#include "search/fidelity.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

void setup_fidelity(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "fidelity", "Decode-time policies against the full cache on its own long continuation");
  auto req = std::make_shared<kvs::search::FidelityRequest>();
  auto token_ids = std::make_shared<std::string>();
  auto text_path = std::make_shared<std::string>();
  auto prompt_tokens = std::make_shared<int64_t>(0);
  auto policy_files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--model", req->model_dir, "Checkpoint directory, GGUF file or name")->required();
  auto* t = cmd->add_option("--token-ids", *token_ids, "Prompt token ids, comma-separated");
  auto* x = cmd->add_option("--text", *text_path, "Prompt: a UTF-8 text file's tokens");
  t->excludes(x);
  cmd->add_option("--prompt-tokens", *prompt_tokens, "With --text: its first N tokens (0: all)")
      ->capture_default_str();
  cmd->add_option("--new-tokens", req->new_tokens, "L: the full cache's continuation")
      ->capture_default_str();
  cmd->add_option("--block", req->block, "Steps per block of block_kl / block_top1")
      ->capture_default_str();
  cmd->add_option("--policy", *policy_files, "A policy JSON (repeat)")->required();
  cmd->add_option("--device", req->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--dtype", req->load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  cmd->add_flag(
      "--json", *json,
      "Print {binary, prompt_tokens, steps, reference, policies: [{name, policy, mean_kl, top1, "
      "block_kl, block_top1, first_divergence, rouge_l, largest_cache, compressions}], "
      "seconds}");
  cmd->callback([=] {
    if (t->count() == 0 && x->count() == 0) throw kvs::Error("give --token-ids or --text");
    for (const std::string& f : *policy_files) req->policies.push_back(kvs::evict::load_policy(f));
    if (t->count()) {
      req->prompt_ids = kvs::parse_id_list(*token_ids, "--token-ids");
    } else {
      const auto tok = kvs::tokenizer::load_tokenizer(req->model_dir);
      req->prompt_ids =
          kvs::tokenizer::build_prompt_ids(*tok, kvs::tokenizer::read_utf8_text_file(*text_path),
                                           kvs::tokenizer::ChatTemplate::None);
      if (*prompt_tokens > 0 && int64_t(req->prompt_ids.size()) > *prompt_tokens)
        req->prompt_ids.resize(size_t(*prompt_tokens));
    }
    const kvs::search::FidelityResult out = kvs::search::measure_fidelity(*req);
    if (*json) {
      nlohmann::json policies = nlohmann::json::array();
      for (size_t i = 0; i < out.policies.size(); ++i) {
        const auto& f = out.policies[i];
        policies.push_back({{"name", f.name},
                            {"policy", kvs::evict::policy_to_json(req->policies[i])},
                            {"mean_kl", f.mean_kl},
                            {"top1", f.top1},
                            {"block_kl", f.block_kl},
                            {"block_top1", f.block_top1},
                            {"first_divergence", f.first_divergence},
                            {"rouge_l", f.rouge_l},
                            {"largest_cache", f.largest_cache},
                            {"compressions", f.compressions}});
      }
      std::cout << nlohmann::json{{"binary", kvs::build_info::git_commit()},
                                  {"prompt_tokens", out.prompt_tokens},
                                  {"steps", out.steps},
                                  {"reference", out.reference},
                                  {"policies", policies},
                                  {"seconds", out.seconds}}
                       .dump()
                << std::endl;
      return;
    }
    std::cout << kvs::strfmt("fidelity to the full cache: %lld prompt tokens, %lld steps\n",
                             (long long)out.prompt_tokens, (long long)out.steps);
    std::cout << kvs::strfmt("%-24s %10s %8s %16s %8s %8s\n", "policy", "mean KL", "top-1",
                             "first divergence", "ROUGE-L", "largest");
    for (const auto& f : out.policies)
      std::cout << kvs::strfmt("%-24s %10.5f %7.1f%% %16lld %8.4f %8lld\n", f.name.c_str(),
                               f.mean_kl, 100.0 * f.top1, (long long)f.first_divergence, f.rouge_l,
                               (long long)f.largest_cache);
  });
}

const kvs::cli::CommandRegistration fidelity_registration("fidelity", setup_fidelity);

}  // namespace
