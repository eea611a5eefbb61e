// Prefill attention's memory: the blocked path sizes its blocks so that their scores stay within
// kBlockScoreBytes at any prompt length, and neither backend holds an n x n matrix (the resident
// memory a long prefill adds stays far below one). Equality of the backends is in
// test_runner_invariants.cpp. Decode attention (the float CPU kernels and the ATen path) against
// softmax(q k^T / sqrt(d) + masks) v written out head by head.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/flash_attention.h"
#include "model/attention.h"
#include "model/prefill_blocks.h"

namespace kvs::test {
namespace {

using model::AttentionBackend;
using model::kBlockScoreBytes;
using model::prefill_block_rows;

int64_t status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  return -1;
}

TEST(PrefillAttention, BlockRowsKeepTheScoresWithinTheBound) {
  for (const int64_t heads : {1, 9, 32}) {
    for (const int64_t keys : {1, 100, 4096, 32768, 131072, 1 << 22}) {
      const int64_t rows = prefill_block_rows(heads, keys, 1024);
      EXPECT_GE(rows, 1);
      EXPECT_LE(rows, 1024);
      if (rows > 1) {
        EXPECT_LE(2 * heads * rows * keys * 4, kBlockScoreBytes) << heads << " " << keys;
      }
      // As many rows as fit: one more would exceed the bound (or the block size caps them).
      if (rows < 1024) {
        EXPECT_GT(2 * heads * (rows + 1) * keys * 4, kBlockScoreBytes);
      }
    }
  }
  EXPECT_EQ(prefill_block_rows(32, 32768, 1024), 8);  // Mistral's heads at 32k tokens
  EXPECT_EQ(prefill_block_rows(4, 100, 16), 16);
}

TEST(PrefillAttention, LongPrefillHoldsNoScoreMatrix) {
  if (status_bytes("VmHWM") < 0) GTEST_SKIP() << "no /proc/self/status";
  const int64_t heads = 4, kv_heads = 2, n = 12288, d = 16;
  const int64_t score_matrix = heads * n * n * 4;  // 2.25 GiB
  at::manual_seed(3);
  c10::InferenceMode inference;
  const at::Tensor q = at::randn({heads, n, d}), k = at::randn({kv_heads, n, d}),
                   v = at::randn({kv_heads, n, d});
  std::vector<AttentionBackend> backends = {AttentionBackend::Blocked};
  if (model::sdpa_available()) backends.push_back(AttentionBackend::Sdpa);
  for (const AttentionBackend backend : backends) {
    model::PrefillAttentionOptions options;
    options.backend = backend;
    const int64_t before = status_bytes("VmRSS");
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    const at::Tensor out = model::prefill_attention(q, k, v, options);
    const int64_t added = status_bytes("VmHWM") - before;
    ASSERT_EQ(out.sizes(), q.sizes());
    // The live peak is the output plus one block's scores, probabilities and mask (about 1.4 x
    // kBlockScoreBytes); glibc keeps freed blocks below its dynamic mmap threshold resident, which
    // can double that. A ninth of one n x n score matrix.
    EXPECT_LE(added, 4 * kBlockScoreBytes + static_cast<int64_t>(out.nbytes()))
        << "backend " << static_cast<int>(backend) << " added " << added << " bytes; the n x n "
        << "scores would take " << score_matrix;
  }
}

// The fused AVX-512 kernel against the blocked path (plain ATen) at head widths 64 and 128 and
// prompt lengths around its 64-token blocks, with GQA: equal up to float rounding.
// The column sums observed_attention reads: sum over queries t >= i of softmax_t(q_t K^T /
// sqrt(d))[i], written out query by query, in several row blocks and under a sliding window.
TEST(PrefillAttention, ColumnSumsAddEveryQuerysAttentionPerKey) {
  at::manual_seed(5);
  c10::InferenceMode inference;
  const int64_t heads = 4, kv_heads = 2, n = 37, d = 8, group = heads / kv_heads;
  const at::Tensor q = at::randn({heads, n, d}), k = at::randn({kv_heads, n, d});
  for (const std::optional<int64_t> window :
       {std::optional<int64_t>(), std::optional<int64_t>(9)}) {
    SCOPED_TRACE(window ? "window 9" : "no window");
    model::PrefillAttentionOptions options;
    options.block_size = 5;  // eight blocks of rows
    options.sliding_window = window;
    const at::Tensor got = model::prefill_attention_column_sums(q, k, options);
    ASSERT_EQ(got.sizes(), (at::IntArrayRef{heads, n}));
    const auto qa = q.accessor<float, 3>();
    const auto ka = k.accessor<float, 3>();
    const auto ga = got.accessor<float, 2>();
    for (int64_t h = 0; h < heads; ++h) {
      std::vector<double> sums(n, 0.0);
      for (int64_t t = 0; t < n; ++t) {
        const int64_t first = window ? std::max<int64_t>(0, t - *window + 1) : 0;
        std::vector<double> logit(n, 0.0);
        double top = -1e300, total = 0;
        for (int64_t i = first; i <= t; ++i) {
          for (int64_t e = 0; e < d; ++e) logit[i] += qa[h][t][e] * ka[h / group][i][e];
          logit[i] /= std::sqrt(double(d));
          top = std::max(top, logit[i]);
        }
        for (int64_t i = first; i <= t; ++i) total += std::exp(logit[i] - top);
        for (int64_t i = first; i <= t; ++i) sums[i] += std::exp(logit[i] - top) / total;
      }
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(ga[h][i], sums[i], 1e-5) << h << ", " << i;
    }
  }
}

TEST(PrefillAttention, FusedKernelMatchesTheBlockedPath) {
  if (!cpu::causal_attention_available(64)) GTEST_SKIP() << "no AVX-512F on this CPU";
  EXPECT_FALSE(cpu::causal_attention_available(16));
  at::manual_seed(21);
  c10::InferenceMode inference;
  for (const int64_t d : {64, 128}) {
    for (const int64_t n : {1, 5, 63, 64, 65, 130, 300}) {
      SCOPED_TRACE("d " + std::to_string(d) + ", n " + std::to_string(n));
      // Scores of a few units, as post-RoPE queries and keys give, so the softmax is not flat.
      const at::Tensor q = at::randn({6, n, d}) * 0.6, k = at::randn({2, n, d}) * 0.6,
                       v = at::randn({2, n, d});
      model::PrefillAttentionOptions fused, blocked;
      fused.backend = AttentionBackend::Fused;
      blocked.backend = AttentionBackend::Blocked;
      at::Tensor row_lse, blocked_lse;
      const at::Tensor got = model::prefill_attention(q, k, v, fused, &row_lse);
      const at::Tensor want = model::prefill_attention(q, k, v, blocked, &blocked_lse);
      EXPECT_FALSE(blocked_lse.defined());
      const at::Tensor got_sums = model::prefill_attention_column_sums(q, k, fused, row_lse);
      const at::Tensor want_sums = model::prefill_attention_column_sums(q, k, blocked);
      ASSERT_EQ(got.sizes(), want.sizes());
      EXPECT_LE((got - want).abs().max().item<double>(), 2e-6);
      // The column sums from the same call (the rows' log-sum-exp, a second sweep over the keys)
      // equal the blocked path's explicit softmax; every row's weights add up to 1.
      ASSERT_EQ(got_sums.sizes(), (at::IntArrayRef{6, n}));
      EXPECT_LE(((got_sums - want_sums).abs() / (want_sums.abs() + 1)).max().item<double>(), 2e-6);
      EXPECT_LE((got_sums.sum(1) - static_cast<double>(n)).abs().max().item<double>(), 1e-4 * n);
      // The first query sees only the first key: its output is that value exactly (up to 1 ulp).
      EXPECT_LE((got.select(1, 0) - v.select(1, 0).repeat_interleave(3, 0)).abs().max().item<double>(),
                1e-6);
    }
  }
  model::PrefillAttentionOptions windowed;
  windowed.backend = AttentionBackend::Fused;
  windowed.sliding_window = 4;
  const at::Tensor x = at::randn({2, 8, 64});
  EXPECT_THROW(model::prefill_attention(x, x, x, windowed), Error);
}

// Attention of query head h of row b over its cache head's first `slots` slots, one head at a
// time: token i of the t new ones sits in slot slots - t + i, sees the slots up to its own (and,
// with a window, fewer than `window` back) and none of its row's left padding.
at::Tensor reference_cached_attention(const at::Tensor& q, const model::LayerCache& layer,
                                      std::optional<int64_t> window) {
  const int64_t batch = q.size(0), heads = q.size(1), t = q.size(2), d = q.size(3);
  const int64_t group = heads / layer.heads, slots = layer.used;
  at::Tensor out = at::empty_like(q);
  const at::Tensor slot = at::arange(slots).unsqueeze(0);
  const at::Tensor own = at::arange(slots - t, slots).unsqueeze(1);
  at::Tensor visible = slot <= own;
  if (window) visible = visible.logical_and(own - slot < *window);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor keys = layer.keys[b][h / group].narrow(0, 0, slots);
      const at::Tensor values = layer.values[b][h / group].narrow(0, 0, slots);
      at::Tensor scores = at::matmul(q[b][h], keys.t()) / std::sqrt(static_cast<double>(d));
      scores = scores.masked_fill(visible.logical_not(), -INFINITY);
      if (layer.prefix_mask.defined()) {  // [batch, 1 or cache_heads, 1, prefix_len]
        const int64_t mask_head = layer.prefix_mask.size(1) == 1 ? 0 : h / group;
        scores.narrow(1, 0, layer.prefix_len).add_(layer.prefix_mask[b][mask_head]);
      }
      out[b][h] = at::matmul(at::softmax(scores, -1), values);
    }
  return out;
}

struct DecodeShape {
  int64_t batch, heads, cache_heads, t, head_dim, slots;
  bool padded;
  std::optional<int64_t> window;
};

TEST(CachedAttention, MatchesTheHeadByHeadReference) {
  at::manual_seed(11);
  const int saved_threads = at::get_num_threads();
  c10::InferenceMode inference;
  // head_dim 64 and 128 take the float kernels, 16 the ATen path; slot counts on and off the
  // kernels' 256-key blocks; GQA groups of 3 and 1; one and two new tokens; left padding; a
  // sliding window that cuts.
  const std::vector<DecodeShape> shapes = {
      {1, 9, 3, 1, 64, 1000, false, std::nullopt}, {3, 4, 4, 2, 64, 257, true, std::nullopt},
      {2, 8, 2, 1, 128, 300, true, std::nullopt},  {1, 6, 2, 1, 64, 700, false, int64_t{512}},
      {2, 4, 2, 2, 16, 90, true, std::nullopt},     {5, 3, 3, 1, 64, 1, false, std::nullopt}};
  for (const int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (const DecodeShape& s : shapes) {
      model::LayerCache layer;
      const int64_t capacity = s.slots + 7;  // spare slots, as a decode cache has
      layer.keys = at::randn({s.batch, s.cache_heads, capacity, s.head_dim});
      layer.values = at::randn({s.batch, s.cache_heads, capacity, s.head_dim});
      layer.batch = s.batch;
      layer.heads = s.cache_heads;
      layer.capacity = capacity;
      layer.used = s.slots;
      layer.prefix_len = s.slots - s.t;
      if (s.padded && layer.prefix_len > 3) {
        layer.prefix_mask = at::zeros({s.batch, 1, 1, layer.prefix_len});
        layer.prefix_mask[s.batch - 1].narrow(2, 0, 3).fill_(-INFINITY);  // three padding slots
      }
      const at::Tensor q = at::randn({s.batch, s.heads, s.t, s.head_dim}) * 2;
      const at::Tensor got = model::cached_attention(q, layer, s.window);
      const at::Tensor expected = reference_cached_attention(q, layer, s.window);
      ASSERT_EQ(got.sizes(), expected.sizes());
      EXPECT_LE((got - expected).abs().max().item<double>(), 1e-5)
          << threads << " threads, batch " << s.batch << ", heads " << s.heads << "/"
          << s.cache_heads << ", t " << s.t << ", head_dim " << s.head_dim << ", slots " << s.slots;
    }
  }
  at::set_num_threads(saved_threads);
}

// The same layer in the dense layout, every slot stored (the padding's zeros) and every block read.
model::LayerCache dense_copy(const model::LayerCache& layer) {
  model::LayerCache dense = layer;
  std::tie(dense.keys, dense.values) = model::dense_entries(layer);
  dense.keys = dense.keys.contiguous();
  dense.values = dense.values.contiguous();
  dense.capacity = layer.used;
  dense.segment_base.clear();
  dense.head_padding.clear();
  return dense;
}

// One decoded token appended to every (row, head), as extend writes it: {keys, values}.
std::pair<at::Tensor, at::Tensor> append_token(model::LayerCache& layer, int64_t d) {
  const at::Tensor k = at::randn({layer.batch, layer.heads, 1, d});
  const at::Tensor v = at::randn({layer.batch, layer.heads, 1, d});
  model::append_entries(layer, k, v);
  return {k, v};
}

TEST(CachedAttention, PassesOverBlocksOfLeftPaddingWithTheSameResult) {
  at::manual_seed(12);
  c10::InferenceMode inference;
  // Rows that keep 600, 37 and 299 entries: the shorter two are padded over two full 256-slot
  // blocks and one, and into the next block by an amount that is not whole groups of four keys
  // (the scores' kernel). Stored in segments (no padding); the result equals, bit for bit, the
  // dense layout's with every block read, the padding's zeros included.
  std::vector<std::pair<at::Tensor, at::Tensor>> rows;
  for (const int64_t kept : {600, 37, 299})
    rows.push_back({at::randn({2, kept, 64}), at::randn({2, kept, 64})});
  model::LayerCache layer = model::assemble_layer_cache(rows, 3);
  EXPECT_EQ(layer.head_padding, (std::vector<int64_t>{0, 0, 563, 563, 301, 301}));
  ASSERT_TRUE(layer.segmented());
  EXPECT_EQ(model::cache_bytes(layer), 2 * (600 + 37 + 299 + 3 * 3) * 64 * 4 * 2);
  // Reserved slots hold NaN until a token fills them: a cache never reads them.
  for (const int64_t base : layer.segment_base) {
    layer.keys.narrow(0, base + layer.used, 3).fill_(NAN);
    layer.values.narrow(0, base + layer.used, 3).fill_(NAN);
  }
  append_token(layer, 64);
  const at::Tensor q = at::randn({3, 4, 1, 64}) * 2;
  const at::Tensor got = model::cached_attention(q, layer, std::nullopt);
  EXPECT_TRUE(at::equal(got, model::cached_attention(q, dense_copy(layer), std::nullopt)));
  EXPECT_LE((got - reference_cached_attention(q, dense_copy(layer), std::nullopt))
                .abs()
                .max()
                .item<double>(),
            1e-5);
}

// Ragged heads (adakv): each (row, cache head) keeps its own count, left-padded to the layer's
// longest head. Decode attention must equal, per query head, attention over that head's own kept
// entries and the decoded token alone, on the float kernels (head_dim 64) and on ATen (16).
TEST(CachedAttention, RaggedHeadsAttendOnlyToTheirOwnEntries) {
  at::manual_seed(13);
  c10::InferenceMode inference;
  const std::vector<std::vector<int64_t>> counts = {{300, 41, 170}, {5, 260, 261}};
  const int64_t batch = 2, cache_heads = 3, heads = 6, group = heads / cache_heads;
  for (const int64_t d : {64, 16}) {
    std::vector<std::vector<std::pair<at::Tensor, at::Tensor>>> own(batch);  // [b][h] entries
    std::vector<std::pair<at::Tensor, at::Tensor>> rows;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t longest = *std::max_element(counts[b].begin(), counts[b].end());
      // What precedes a head's entries in its row is not its own: NaN, which the cache zeroes.
      at::Tensor k = at::full({cache_heads, longest, d}, NAN), v = at::full_like(k, NAN);
      for (int64_t h = 0; h < cache_heads; ++h) {
        const int64_t c = counts[b][h];
        own[b].push_back({at::randn({c, d}), at::randn({c, d})});
        k[h].narrow(0, longest - c, c).copy_(own[b][h].first);
        v[h].narrow(0, longest - c, c).copy_(own[b][h].second);
      }
      rows.push_back({k, v});
    }
    model::LayerCache layer = model::assemble_layer_cache(rows, 2, counts);
    EXPECT_EQ(layer.prefix_len, 300);
    EXPECT_EQ(layer.head_padding, (std::vector<int64_t>{0, 259, 130, 295, 40, 39}));
    // Stored without padding: the sum of the kept entries and the 2 reserved slots per head.
    EXPECT_EQ(model::cache_bytes(layer), (300 + 41 + 170 + 5 + 260 + 261 + 6 * 2) * d * 4 * 2);
    EXPECT_FALSE(model::dense_entries(layer).first.isnan().any().item<bool>());
    const auto [new_k, new_v] = append_token(layer, d);
    // Each row's entries back per head, as the decode-time path re-lays them: the head's own, the
    // decoded token last, its padding zero.
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<int64_t> held;
      for (const int64_t c : counts[b]) held.push_back(c + 1);
      const int64_t width = *std::max_element(held.begin(), held.end());
      const auto [k, v] = model::last_entries(layer, b, width, held);
      for (int64_t h = 0; h < cache_heads; ++h) {
        const int64_t c = held[size_t(h)];
        EXPECT_TRUE(
            at::equal(k[h].narrow(0, width - c, c), at::cat({own[b][h].first, new_k[b][h]})));
        EXPECT_TRUE(
            at::equal(v[h].narrow(0, width - c, c), at::cat({own[b][h].second, new_v[b][h]})));
        EXPECT_EQ(k[h].narrow(0, 0, width - c).abs().sum().item<double>(), 0.0);
      }
    }
    const at::Tensor q = at::randn({batch, heads, 1, d}) * 2;
    const at::Tensor got = model::cached_attention(q, layer, std::nullopt);
    at::Tensor expected = at::empty_like(q);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t c = h / group;
        const at::Tensor keys = at::cat({own[b][c].first, new_k[b][c]});
        const at::Tensor values = at::cat({own[b][c].second, new_v[b][c]});
        const at::Tensor scores = at::matmul(q[b][h], keys.t()) / std::sqrt(double(d));
        expected[b][h] = at::matmul(at::softmax(scores, -1), values);
      }
    EXPECT_LE((got - expected).abs().max().item<double>(), 1e-5) << "head_dim " << d;
    EXPECT_TRUE(at::equal(got, model::cached_attention(q, dense_copy(layer), std::nullopt)))
        << "head_dim " << d << ": the segmented layout's result differs from the dense one's";
  }
}

// A row compressed in place (the decode-time path between re-lays): its kept entries end where its
// entries ended, the slots before them become padding, the other rows are not touched and no
// storage moves. Attention after the next token equals attention over the same entries re-laid
// from scratch, on the float kernels (head_dim 64) and on ATen (16), also where the new padding
// reaches past the slots the prompt took (the mask grows) and for ragged heads.
TEST(CachedAttention, ARowCompressedInPlaceAttendsAsTheSameEntriesReLaid) {
  at::manual_seed(14);
  c10::InferenceMode inference;
  const int64_t cache_heads = 2, heads = 4;
  for (const int64_t d : {64, 16}) {
    std::vector<std::pair<at::Tensor, at::Tensor>> rows;
    for (const int64_t kept : {300, 12, 40})
      rows.push_back({at::randn({cache_heads, kept, d}), at::randn({cache_heads, kept, d})});
    model::LayerCache layer = model::assemble_layer_cache(rows, 8);
    for (int s = 0; s < 5; ++s) append_token(layer, d);  // used 305, prefix_len 300
    const at::Tensor keys_before = layer.keys.clone();
    const std::vector<int64_t> bases = layer.segment_base;
    // Row 0 keeps 4 and 2 of its 305 (padding 301 and 303: past the prompt's 300 slots); row 2
    // keeps 30 of its 45 on both heads.
    const auto [k0, v0] = model::last_entries(layer, 0, 305);
    const at::Tensor pick0 = at::tensor({0, 7, 299, 304}, at::kLong);
    at::Tensor keep0 = k0.index_select(1, pick0), vals0 = v0.index_select(1, pick0);
    keep0[1].narrow(0, 0, 2).zero_();  // head 1 holds its last 2
    vals0[1].narrow(0, 0, 2).zero_();
    model::replace_row_entries(layer, 0, keep0, vals0, {4, 2});
    const auto [k2, v2] = model::last_entries(layer, 2, 45);
    const at::Tensor pick2 = at::arange(15, 45, at::kLong);
    const at::Tensor keep2 = k2.index_select(1, pick2), vals2 = v2.index_select(1, pick2);
    model::replace_row_entries(layer, 2, keep2, vals2);
    EXPECT_EQ(layer.head_padding, (std::vector<int64_t>{301, 303, 288, 288, 275, 275}));
    EXPECT_EQ(layer.prefix_len, 303);
    EXPECT_EQ(layer.segment_base, bases);
    EXPECT_TRUE(at::equal(layer.keys.narrow(0, bases[2] + 288, 17),
                          keys_before.narrow(0, bases[2] + 288, 17)))
        << "row 1 changed";
    EXPECT_THROW(model::replace_row_entries(layer, 1, k2, v2), Error);  // keeps more than it holds
    // The same entries re-laid from scratch, with the rows' counts per head.
    model::LayerCache relaid = model::assemble_layer_cache(
        {{keep0, vals0}, model::last_entries(layer, 1, 17), {keep2, vals2}}, 3,
        {{4, 2}, {17, 17}, {30, 30}});
    const at::Tensor k = at::randn({3, cache_heads, 1, d}), v = at::randn({3, cache_heads, 1, d});
    model::append_entries(layer, k, v);
    model::append_entries(relaid, k, v);
    const at::Tensor q = at::randn({3, heads, 1, d}) * 2;
    const at::Tensor got = model::cached_attention(q, layer, std::nullopt);
    EXPECT_LE((got - model::cached_attention(q, relaid, std::nullopt)).abs().max().item<double>(),
              1e-6)
        << "head_dim " << d;
    EXPECT_LE((got - reference_cached_attention(q, dense_copy(layer), std::nullopt))
                  .abs()
                  .max()
                  .item<double>(),
              1e-5)
        << "head_dim " << d;
  }
}

}  // namespace
}  // namespace kvs::test
