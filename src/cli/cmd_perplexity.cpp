// kvsearch perplexity: the bounded-cache perplexity of a text under a policy's decoding schedule
// (search/text_perplexity.h), or under the full cache.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/build_info.h"
#include "core/strfmt.h"
#include "evict/policy.h"
#include "search/text_perplexity.h"

namespace {

void setup_perplexity(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "perplexity", "Perplexity of a text, fed one token at a time under a decode-time policy");
  auto req = std::make_shared<kvs::search::PerplexityRequest>();
  auto policy_files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--model", req->model_dir, "Checkpoint directory, GGUF file or name")->required();
  cmd->add_option("--text", req->text_path, "UTF-8 text file")->required();
  cmd->add_option("--policy", *policy_files,
                  "Policy JSON with a \"decoding\" schedule (repeat: one shared decode; without: "
                  "the full cache)");
  cmd->add_flag("--full-cache", req->full_cache, "Also the full cache, beside the policies");
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
                "Print {binary, tokens, seconds, results: [{name, policy, nll, perplexity, "
                "block_perplexity, largest_cache, compressions}]}");
  cmd->callback([=] {
    for (const std::string& f : *policy_files) req->policies.push_back(kvs::evict::load_policy(f));
    const kvs::search::PerplexityResult out = kvs::search::text_perplexity(*req);
    if (*json) {
      nlohmann::json results = nlohmann::json::array();
      for (const auto& r : out.rows)
        results.push_back(
            {{"name", r.name},
             {"policy", r.policy ? kvs::evict::policy_to_json(*r.policy) : nlohmann::json(nullptr)},
             {"nll", r.nll},
             {"perplexity", r.perplexity},
             {"block_perplexity", r.block_perplexity},
             {"largest_cache", r.largest_cache},
             {"compressions", r.compressions}});
      std::cout << nlohmann::json{{"binary", kvs::build_info::git_commit()},
                                  {"tokens", out.tokens},
                                  {"seconds", out.seconds},
                                  {"results", results}}
                       .dump()
                << std::endl;
      return;
    }
    for (const auto& r : out.rows)
      std::cout << kvs::strfmt(
                       "%s: perplexity %.4f over %lld tokens (largest cache %lld entries "
                       "per head, %lld compressions)",
                       r.name.c_str(), r.perplexity, (long long)out.tokens,
                       (long long)r.largest_cache, (long long)r.compressions)
                << std::endl;
  });
}

const kvs::cli::CommandRegistration perplexity_registration("perplexity", setup_perplexity);

}  // namespace
