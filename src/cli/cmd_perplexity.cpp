// kvsearch perplexity: the bounded-cache perplexity of a text under a policy's decoding schedule
// (search/text_perplexity.h), or under the full cache.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/strfmt.h"
#include "evict/policy.h"
#include "search/text_perplexity.h"

namespace {

void setup_perplexity(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "perplexity", "Perplexity of a text, fed one token at a time under a decode-time policy");
  auto req = std::make_shared<kvs::search::PerplexityRequest>();
  auto policy_file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--model", req->model_dir, "Checkpoint directory, GGUF file or name")->required();
  cmd->add_option("--text", req->text_path, "UTF-8 text file")->required();
  cmd->add_option("--policy", *policy_file,
                  "Policy JSON with a \"decoding\" schedule (without: the full cache)");
  cmd->add_option("--max-tokens", req->max_tokens, "Read the text's first N tokens (0: all)")
      ->capture_default_str();
  cmd->add_option("--positions", req->positions,
                  "original | cache: the schedule's RoPE positions (cache: re-rotated keys, past "
                  "the trained context)");
  cmd->add_option("--block", req->block, "Tokens per block of block_perplexity")
      ->capture_default_str();
  cmd->add_option("--device", req->load.device, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--dtype", req->load.dtype, "auto | f32 | f16 | bf16")->capture_default_str();
  cmd->add_flag("--json", *json,
                "Print {tokens, nll, perplexity, block_perplexity, largest_cache, compressions, "
                "policy, seconds}");
  cmd->callback([=] {
    if (!policy_file->empty()) req->policy = kvs::evict::load_policy(*policy_file);
    const kvs::search::PerplexityResult out = kvs::search::text_perplexity(*req);
    const nlohmann::json policy =
        out.policy ? kvs::evict::policy_to_json(*out.policy) : nlohmann::json(nullptr);
    if (*json) {
      std::cout << nlohmann::json{{"tokens", out.tokens},
                                  {"nll", out.nll},
                                  {"perplexity", out.perplexity},
                                  {"block_perplexity", out.block_perplexity},
                                  {"largest_cache", out.largest_cache},
                                  {"compressions", out.compressions},
                                  {"policy", policy},
                                  {"seconds", out.seconds}}
                       .dump()
                << std::endl;
    } else {
      std::cout << kvs::strfmt(
                       "perplexity %.4f over %lld tokens (largest cache %lld entries per "
                       "head, %lld compressions)",
                       out.perplexity, (long long)out.tokens, (long long)out.largest_cache,
                       (long long)out.compressions)
                << std::endl;
    }
  });
}

const kvs::cli::CommandRegistration perplexity_registration("perplexity", setup_perplexity);

}  // namespace
