// kvsearch select: run one policy's selection on stored tensors and write the kept positions.
#include <ATen/ATen.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/npy.h"
#include "core/strfmt.h"
#include "evict/compressed_cache.h"
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

// Every layer of stacked tensors through the compressed cache's observer, as generation runs
// it (so that methods whose budgets move between layers decide as there).
void run_layers(const SelectOptions& o, const evict::Policy& policy,
                const evict::SelectionInput& input) {
  evict::CompressingObserver observer({policy}, input.layers, 0);
  if (observer.window() > input.window_queries.size(2)) {
    throw error_at(o.tensors,
                   strfmt("q_window has %lld rows, the policy reads %lld",
                          (long long)input.window_queries.size(2), (long long)observer.window()));
  }
  std::vector<at::Tensor> scores;
  for (int64_t l = 0; l < input.layers; ++l) {
    const at::Tensor q = input.window_queries[l], k = input.keys[l];
    // The values are gathered into the (discarded) cache: zeros where the file has none.
    const at::Tensor v = input.values.defined() ? input.values[l] : at::zeros_like(k);
    const model::PrefillLayer layer{l, k, v, q};
    observer.on_layer(layer);
    if (!o.dump_scores.empty()) scores.push_back(evict::method_scores(policy, layer, input.layers));
  }
  observer.take_cache();
  evict::write_kept_layers_json(observer.kept_positions(0), o.out);
  if (!o.dump_scores.empty()) {
    const at::Tensor all = at::stack(scores).contiguous();
    const float* data = all.data_ptr<float>();
    write_npy_f32(o.dump_scores, {all.size(0), all.size(1), all.size(2)},
                  std::vector<float>(data, data + all.numel()));
  }
  log::info(strfmt("select: %lld layers of %lld positions -> %s", (long long)input.layers,
                   (long long)input.keys.size(2), o.out.c_str()));
}

void run(const SelectOptions& o) {
  const evict::Policy policy = evict::load_policy(o.policy);
  const evict::SelectionInput input = evict::load_selection_input(o.tensors);
  if (input.layers > 0) return run_layers(o, policy, input);
  const at::Tensor kept = evict::select_layer(model::PrefillLayer{o.layer, input.keys, input.values,
                                                                  input.window_queries},
                                              {policy}, o.num_layers)
                              .front();
  evict::write_kept_json(kept, o.out);
  if (!o.dump_scores.empty()) {
    const at::Tensor scores = evict::method_scores(
        policy, model::PrefillLayer{o.layer, input.keys, input.values, input.window_queries},
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
      "[kv_heads, n, d], optional values) and write {\"kept\": [[positions per head], ...]}; "
      "every layer's stacked ([layers, ...]): {\"layers\": ..., \"counts\": ...}");
  cmd->add_option("--tensors", options->tensors,
                  "safetensors file with q_window, keys and optionally values")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--policy", options->policy, "policy JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", options->out, "output JSON file")->required();
  cmd->add_option("--dump-scores", options->dump_scores,
                  "write the method's scores [cache_heads, n] ([layers, cache_heads, n] stacked) "
                  "as float32 .npy (diverse: its score s before the greedy admission)");
  cmd->add_option("--layer", options->layer, "layer index (pyramid budgets, layer profiles)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--num-layers", options->num_layers, "the model's layer count")
      ->check(CLI::PositiveNumber);
  cmd->callback([options] { run(*options); });
}

const CommandRegistration select_registration("select", setup_select);

}  // namespace
}  // namespace kvs::cli
