// kvsearch select: run one policy's selection on stored tensors and write the kept positions.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/npy.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "evict/selection_io.h"

namespace kvs::cli {
namespace {

struct SelectOptions {
  std::string tensors;
  std::string policy;
  std::string out;
  int64_t layer = 0;
  int64_t num_layers = 32;
  std::string dump_scores;
};

void run(const SelectOptions& o) {
  const evict::Policy policy = evict::load_policy(o.policy);
  const evict::SelectionInput input = evict::load_selection_input(o.tensors);
  const at::Tensor kept =
      evict::select_layer(input.window_queries, input.keys, {policy}, o.layer, o.num_layers)
          .front();
  evict::write_kept_json(kept, o.out);
  if (!o.dump_scores.empty()) {
    if (!policy.is_scoring())
      throw Error("--dump-scores: " + policy.method_name() +
                  " is scored from the window statistics, not by a scoring method");
    const at::Tensor no_values;
    const at::Tensor scores = evict::method_scores(
        policy, model::PrefillLayer{o.layer, input.keys, no_values, input.window_queries},
        o.num_layers);
    const float* data = scores.data_ptr<float>();
    write_npy_f32(o.dump_scores, {scores.size(0), scores.size(1)},
                  std::vector<float>(data, data + scores.numel()));
  }
  log::info(strfmt("select: %lld heads x %lld kept positions of %lld -> %s",
                   (long long)kept.size(0), (long long)kept.size(1), (long long)input.keys.size(1),
                   o.out.c_str()));
}

void setup_select(CLI::App& parent) {
  auto options = std::make_shared<SelectOptions>();
  CLI::App* cmd = parent.add_subcommand(
      "select",
      "Run a policy's selection on stored tensors (q_window [heads, W, d], keys "
      "[kv_heads, n, d]) and write {\"kept\": [[positions per head], ...]}");
  cmd->add_option("--tensors", options->tensors, "safetensors file with q_window and keys")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--policy", options->policy, "policy JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", options->out, "output JSON file")->required();
  cmd->add_option("--dump-scores", options->dump_scores,
                  "scoring methods: write their scores [kv_heads, n] as float32 .npy");
  cmd->add_option("--layer", options->layer, "layer index (pyramid budgets, layer profiles)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--num-layers", options->num_layers, "the model's layer count")
      ->check(CLI::PositiveNumber);
  cmd->callback([options] { run(*options); });
}

const CommandRegistration select_registration("select", setup_select);

}  // namespace
}  // namespace kvs::cli
