#include "search/layout_groups.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

namespace kvs::search {

LayoutGroups::LayoutGroups(const std::vector<evict::Policy>& policies,
                           const std::vector<size_t>& members, int64_t num_layers,
                           int64_t decode_capacity) {
  // A layout: the granularity (cache heads) and the window statistics' window (-1: none). A
  // policy without window statistics joins a layout of its granularity that has them, so that
  // as few batches as possible decode (each decode step streams the weights once per batch).
  std::map<std::pair<int, int64_t>, std::vector<size_t>> by_layout;
  std::map<int, int64_t> statistics_of;  // granularity -> the first statistics window
  for (size_t i : members)
    if (const auto w = policies[i].statistics_window())
      statistics_of.emplace(int(policies[i].cache_per_query_head()), *w);
  for (size_t i : members) {
    const int granularity = int(policies[i].cache_per_query_head());
    const auto own = policies[i].statistics_window();
    const auto shared = statistics_of.find(granularity);
    by_layout[{granularity, own                             ? *own
                            : shared != statistics_of.end() ? shared->second
                                                            : int64_t{-1}}]
        .push_back(i);
  }
  for (auto& [layout, group] : by_layout) {
    std::vector<evict::Policy> batch;
    for (size_t i : group) batch.push_back(policies[i]);
    groups_.push_back(LayoutGroup{
        group, std::make_unique<evict::CompressingObserver>(batch, num_layers, decode_capacity)});
    window_ = std::max(window_, groups_.back().observer->window());
    signals_ |= groups_.back().observer->signals();
  }
}

void LayoutGroups::on_layer(const model::PrefillLayer& layer) {
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

}  // namespace kvs::search
