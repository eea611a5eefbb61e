#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "evict/budget.h"
#include "evict/compressed_cache.h"
#include "evict/layer_selection.h"
#include "evict/policy.h"
#include "evict/window_params.h"

namespace {

using kvs::evict::CompressingObserver;
using kvs::evict::Policy;

const kvs::evict::WindowParams& w = kvs::evict::window_params();

Policy kv_head(Policy p) {
  p.params.set(w.granularity, std::string("kv_head"));
  return p;
}

TEST(CompressedCache, EachRowHoldsItsPolicysEntriesInPositionOrder) {
  at::manual_seed(11);
  const int64_t layers = 3, heads = 4, kv_heads = 2, n = 200, dim = 8;
  const std::vector<Policy> policies = {kvs::evict::snapkv_policy(24),
                                        kvs::evict::pyramidkv_policy(40),
                                        kvs::evict::global_policy(32, 0.1, -0.2)};
  CompressingObserver observer(policies, layers, /*decode_capacity=*/5);
  EXPECT_EQ(observer.window(), 8);
  std::vector<at::Tensor> keys, values, queries;
  for (int64_t l = 0; l < layers; ++l) {
    keys.push_back(at::randn({kv_heads, n, dim}));
    values.push_back(at::randn({kv_heads, n, dim}));
    queries.push_back(at::randn({heads, 8, dim}));
    observer.on_layer(kvs::model::PrefillLayer{l, keys[l], values[l], queries[l]});
  }
  const kvs::model::DecodeCache cache = observer.take_cache();
  EXPECT_EQ(cache.batch, 3);
  EXPECT_EQ(cache.next_position, n);  // decode RoPE continues from the prompt length
  ASSERT_EQ(cache.layers.size(), 3u);
  for (int64_t l = 0; l < layers; ++l) {
    const auto& layer = cache.layers[l];
    const auto kept = kvs::evict::select_layer(queries[l], keys[l], policies, l, layers);
    int64_t longest = 0;
    for (const auto& k : kept) longest = std::max(longest, k.size(1));
    EXPECT_EQ(layer.prefix_len, longest);
    EXPECT_EQ(layer.heads, heads);  // query_head granularity: one copy per query head
    EXPECT_EQ(layer.capacity, longest + 5);
    // The rows keep different budgets: stored in segments, each (row, head) its own count and
    // the 5 reserved slots, no padding.
    EXPECT_TRUE(layer.segmented());
    int64_t held = 0;
    for (const auto& k : kept) held += heads * (k.size(1) + 5);
    EXPECT_EQ(kvs::model::cache_bytes(layer), held * dim * 4 * 2) << "layer " << l;
    for (int64_t b = 0; b < 3; ++b) {
      const int64_t count = kept[b].size(1);
      const auto [row_keys, row_values] = kvs::model::last_entries(layer, b, count);
      const kvs::evict::BudgetSpec spec =
          kvs::evict::window_budget_spec(policies[b].params, policies[b].budget);
      const int64_t budget = spec.window + kvs::evict::layer_budgets(spec, n, layers).selected[l];
      EXPECT_EQ(count, budget) << "row " << b << " keeps its policy's budget on layer " << l;
      for (int64_t h = 0; h < heads; ++h) {
        // Which prompt positions the row holds, found by matching its keys against the prompt's
        // (random keys are distinct): ascending, the 8 window positions last.
        const at::Tensor cached = row_keys[h];
        const at::Tensor match = (cached.unsqueeze(1) == keys[l][h / 2].unsqueeze(0)).all(-1);
        ASSERT_TRUE(match.any(1).all().item<bool>()) << "row " << b << " holds a key not in the prompt";
        const at::Tensor positions = match.to(at::kLong).argmax(1);
        EXPECT_TRUE((positions.narrow(0, 1, count - 1) > positions.narrow(0, 0, count - 1)).all().item<bool>())
            << "row " << b << " head " << h << " of layer " << l << " is not in position order";
        EXPECT_TRUE(at::equal(positions.narrow(0, count - 8, 8), at::arange(n - 8, n, at::kLong)))
            << "row " << b << " head " << h << " of layer " << l << " does not end with the window";
        const at::Tensor expected_k = keys[l][h / 2].index_select(0, kept[b][h]);
        const at::Tensor expected_v = values[l][h / 2].index_select(0, kept[b][h]);
        EXPECT_TRUE(at::equal(row_keys[h], expected_k)) << l << b << h;
        EXPECT_TRUE(at::equal(row_values[h], expected_v)) << l << b << h;
      }
    }
  }
  EXPECT_EQ(observer.kept_entries()[0], 3 * heads * 24);  // summed over layers and cache heads
  EXPECT_EQ(observer.footprints()[0].held_bytes, observer.footprints()[0].uniform_bytes);
}

TEST(CompressedCache, RejectsMixedLayoutsAndMissingLayers) {
  EXPECT_THROW(CompressingObserver(
                   {kvs::evict::snapkv_policy(64), kv_head(kvs::evict::snapkv_policy(64))}, 4, 0),
               kvs::Error);
  Policy w4 = kvs::evict::snapkv_policy(64);
  w4.params.set(w.window, int64_t{4});
  EXPECT_THROW(CompressingObserver({kvs::evict::snapkv_policy(64), w4}, 4, 0), kvs::Error);
  EXPECT_THROW(CompressingObserver({}, 4, 0), kvs::Error);
  // Methods scored without window statistics join a batch of their granularity whatever their
  // window: the prefill exposes the widest, each reads its own last rows.
  const auto method = [](const char* json) {
    return kvs::evict::policy_from_json(nlohmann::json::parse(json), "policy");
  };
  const CompressingObserver mixed(
      {method(R"({"method": "snapkv", "budget": 96, "window": 64, "granularity": "kv_head"})"),
       method(R"({"method": "tova", "budget": 96})"),
       method(R"({"method": "knorm", "budget": 96})"),
       method(R"({"method": "r_kv", "budget": 96, "window": 16})")},
      4, 0);
  EXPECT_EQ(mixed.window(), 64);
  CompressingObserver observer({kvs::evict::snapkv_policy(64)}, 2, 0);
  const at::Tensor k = at::randn({2, 100, 8}), q = at::randn({4, 8, 8});
  observer.on_layer(kvs::model::PrefillLayer{0, k, k, q});
  EXPECT_THROW(observer.take_cache(), kvs::Error);
  EXPECT_THROW(observer.on_layer(kvs::model::PrefillLayer{2, k, k, q}), kvs::Error);
}

}  // namespace
