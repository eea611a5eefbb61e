#include "search/policy_decode.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <memory>

#include "core/error.h"
#include "core/timer.h"
#include "evict/compressed_cache.h"
#include "model/transformer.h"

namespace kvs::search {

namespace {

// Policies that share one decode batch: the same granularity (cache heads) and window.
struct LayoutGroup {
  std::vector<size_t> members;  // indices into the caller's policy list
  std::unique_ptr<evict::CompressingObserver> observer;
};

// Policies of several cache layouts on one prefill: the prefill exposes the widest window, and
// each layout's observer receives the last rows of it that its own window asks for.
class LayoutGroups final : public model::PrefillObserver {
 public:
  LayoutGroups(const std::vector<evict::Policy>& policies, int64_t num_layers, int64_t decode_capacity) {
    std::map<std::pair<int, int64_t>, std::vector<size_t>> by_layout;
    for (size_t i = 0; i < policies.size(); ++i)
      by_layout[{static_cast<int>(policies[i].granularity), policies[i].observation_window()}]
          .push_back(i);
    for (auto& [layout, members] : by_layout) {
      std::vector<evict::Policy> batch;
      for (size_t i : members) batch.push_back(policies[i]);
      groups_.push_back(LayoutGroup{
          members, std::make_unique<evict::CompressingObserver>(batch, num_layers, decode_capacity)});
      window_ = std::max(window_, groups_.back().observer->window());
      signals_ |= groups_.back().observer->signals();
    }
  }
  int64_t window() const override { return window_; }
  uint32_t signals() const override { return signals_; }
  void on_layer(const model::PrefillLayer& layer) override {
    const int64_t available = layer.window_queries.size(1);
    for (auto& g : groups_) {
      const int64_t w = std::min(g.observer->window(), available);
      const at::Tensor rows = layer.window_queries.narrow(1, available - w, w);
      model::PrefillLayer own{layer.layer, layer.keys, layer.values, rows};
      own.column_sums = layer.column_sums;
      own.pre_rope_queries = layer.pre_rope_queries;
      own.output_projection = layer.output_projection;
      own.rope_inv_freq = layer.rope_inv_freq;
      g.observer->on_layer(own);
    }
  }
  std::vector<LayoutGroup>& groups() { return groups_; }

 private:
  std::vector<LayoutGroup> groups_;
  int64_t window_ = 0;
  uint32_t signals_ = model::kSignalNone;
};

}  // namespace

PolicyDecodes decode_with_policies(const model::Transformer& model, const std::vector<int32_t>& prompt_ids,
                                   const std::vector<evict::Policy>& policies,
                                   const PolicyDecodeOptions& options) {
  const size_t rows = policies.size() + (options.full_cache ? 1 : 0);
  if (rows == 0) throw Error("decode: no policy given and no full-cache decode asked for");
  if (options.greedy.collect_logits && rows != 1)
    throw Error("decode: logits are collected for one row only, " + std::to_string(rows) + " asked for");
  const int64_t capacity = options.greedy.max_new_tokens;
  LayoutGroups groups(policies, model.config().num_hidden_layers, capacity);
  model::PrefillOptions prefill;
  prefill.observer = policies.empty() ? nullptr : &groups;
  prefill.keep_cache = options.full_cache;
  prefill.decode_capacity = capacity;
  prefill.all_logits = options.greedy.collect_logits;

  PolicyDecodes out;
  out.tokens.resize(rows);
  out.kept_positions.resize(policies.size());
  out.footprints.resize(policies.size());
  Timer timer;
  model::PrefillResult pre = model.prefill(prompt_ids, prefill);
  out.prefill_seconds = timer.seconds();
  // The first token of every row comes from the full-attention prefill's last position.
  const at::Tensor last = pre.logits.narrow(0, pre.logits.size(0) - 1, 1);
  auto decode = [&](model::DecodeCache& cache) {
    model::GreedyResult result =
        model::greedy_decode(model, cache, last.expand({cache.batch, last.size(1)}), options.greedy);
    if (options.greedy.collect_logits) {
      out.prompt_logits = pre.logits;
      out.step_logits = result.step_logits;
    }
    return result;
  };
  timer.reset();
  for (LayoutGroup& g : groups.groups()) {
    model::DecodeCache cache = g.observer->take_cache();
    model::GreedyResult result = decode(cache);
    for (size_t r = 0; r < g.members.size(); ++r) {
      out.tokens[g.members[r]] = std::move(result.tokens[r]);
      out.kept_positions[g.members[r]] = g.observer->kept_positions(r);
      out.footprints[g.members[r]] = g.observer->footprints()[r];
    }
  }
  if (options.full_cache) out.tokens.back() = std::move(decode(pre.cache).tokens.front());
  out.decode_seconds = timer.seconds();
  return out;
}

}  // namespace kvs::search
