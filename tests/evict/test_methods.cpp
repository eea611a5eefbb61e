// The method registry (evict/method.h) and its scoring methods: each score against its formula
// written out with plain loops, the selection they make through select_layer, the method dialect
// of the policy JSON, and its errors. kvpress's own presses are the oracle of
// test_methods_vs_kvpress.py; this file checks the definitions.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "evict/compressed_cache.h"
#include "evict/layer_selection.h"
#include "evict/method.h"
#include "evict/policy.h"
#include "evict/window_params.h"
#include "model/prefill_observer.h"

namespace kvs::test {
namespace {

using evict::Policy;
using nlohmann::json;

Policy method_policy(const json& j) { return evict::policy_from_json(j, "policy"); }

std::string parse_error(const json& j) {
  try {
    method_policy(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The kept positions of one KV head, as a set.
std::set<int64_t> kept_row(const at::Tensor& kept, int64_t row) {
  const at::Tensor r = kept[row].contiguous();
  return std::set<int64_t>(r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel());
}

// The `count` best positions of a score row by plain sorting (higher first, lower position on
// ties), as a set.
std::set<int64_t> best(const std::vector<double>& score, int64_t count) {
  std::vector<int64_t> order(score.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return score[a] > score[b]; });
  return std::set<int64_t>(order.begin(), order.begin() + count);
}

struct Layer {
  at::Tensor queries, keys, values;  // [heads, W, d], [kv_heads, n, d] x 2
};

Layer random_layer(int64_t heads, int64_t kv_heads, int64_t n, int64_t d, int64_t window,
                   uint64_t seed) {
  at::manual_seed(seed);
  return {at::randn({heads, window, d}), at::randn({kv_heads, n, d}) * 2 + 0.3,
          at::randn({kv_heads, n, d})};
}

at::Tensor select(const Policy& p, const Layer& l) {
  return evict::select_layer(l.queries, l.keys, l.values, {p}, 0, 4).front();
}

TEST(Methods, TheRegistryListsEveryMethodOnceAndRefusesUnknownNames) {
  std::vector<std::string> names;
  for (const evict::Method* m : evict::registered_methods()) names.push_back(m->info().name);
  for (const char* expected :
       {"adakv", "cake", "criticalkv", "diverse", "expected_attention", "keydiff", "knorm", "lagkv",
        "observed_attention", "pyramidkv", "r_kv", "snapkv", "streaming_llm", "tova"})
    EXPECT_EQ(std::count(names.begin(), names.end(), expected), 1) << expected;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(
      parse_error({{"method", "h2o_typo"}, {"budget", 64}})
          .rfind("policy.method: unknown method 'h2o_typo' (registered: adakv, cake, criticalkv, ",
                 0),
      0u);
  const json listed = evict::methods_to_json();
  EXPECT_EQ(listed.size(), names.size());
  EXPECT_NE(evict::methods_markdown().find("| `knorm` | arXiv 2406.11430 |"), std::string::npos);
}

// A budget equal to what a method always keeps is that alone (kvpress's SnapKV at n_kept = 64 with
// its window of 64; StreamingLLM's sinks and recent tokens): nothing is scored in.
TEST(Methods, ABudgetEqualToTheWindowKeepsTheWindowAlone) {
  const Layer l = random_layer(6, 2, 300, 16, 64, 3);
  const json snapkv = {{"method", "snapkv"}, {"budget", 64},     {"window", 64},
                       {"kernel", 5},        {"pooling", "avg"}, {"granularity", "kv_head"}};
  std::set<int64_t> window;
  for (int64_t i = 300 - 64; i < 300; ++i) window.insert(i);
  for (const json& policy :
       {snapkv, json{{"method", "pyramidkv"}, {"budget", 64}, {"window", 64}}}) {
    const at::Tensor kept = select(method_policy(policy), l);
    for (int64_t h = 0; h < kept.size(0); ++h)
      EXPECT_EQ(kept_row(kept, h), window) << policy.dump();
  }
  const at::Tensor streaming =
      select(method_policy({{"method", "streaming_llm"}, {"budget", 4}, {"n_sink", 4}}), l);
  for (int64_t h = 0; h < streaming.size(0); ++h)
    EXPECT_EQ(kept_row(streaming, h), (std::set<int64_t>{0, 1, 2, 3}));
}

TEST(Methods, KnormKeepsTheKeysOfLowestNorm) {
  const Layer l = random_layer(6, 2, 300, 16, 1, 1);
  const at::Tensor kept = select(method_policy({{"method", "knorm"}, {"budget", 40}}), l);
  ASSERT_EQ(kept.sizes(), (at::IntArrayRef{2, 40}));
  for (int64_t h = 0; h < 2; ++h) {
    std::vector<double> score;
    const auto k = l.keys.accessor<float, 3>();
    for (int64_t i = 0; i < 300; ++i) {
      double sq = 0;
      for (int64_t e = 0; e < 16; ++e) sq += double(k[h][i][e]) * k[h][i][e];
      score.push_back(-std::sqrt(sq));
    }
    EXPECT_EQ(kept_row(kept, h), best(score, 40)) << "head " << h;
  }
}

TEST(Methods, KeyDiffKeepsTheKeysLeastLikeTheMeanDirection) {
  const Layer l = random_layer(6, 2, 257, 16, 1, 2);
  const at::Tensor kept = select(method_policy({{"method", "keydiff"}, {"budget", 33}}), l);
  const auto k = l.keys.accessor<float, 3>();
  for (int64_t h = 0; h < 2; ++h) {
    std::vector<double> anchor(16, 0.0), norm(257, 0.0), score;
    for (int64_t i = 0; i < 257; ++i) {
      for (int64_t e = 0; e < 16; ++e) norm[i] += double(k[h][i][e]) * k[h][i][e];
      norm[i] = std::sqrt(norm[i]);
      for (int64_t e = 0; e < 16; ++e) anchor[e] += k[h][i][e] / norm[i] / 257;
    }
    double anchor_norm = 0;
    for (double a : anchor) anchor_norm += a * a;
    anchor_norm = std::sqrt(anchor_norm);
    for (int64_t i = 0; i < 257; ++i) {
      double dot = 0;
      for (int64_t e = 0; e < 16; ++e) dot += k[h][i][e] * anchor[e];
      score.push_back(-dot / (norm[i] * anchor_norm));
    }
    EXPECT_EQ(kept_row(kept, h), best(score, 33)) << "head " << h;
  }
}

TEST(Methods, StreamingLlmKeepsTheSinksAndTheMostRecentTokens) {
  const Layer l = random_layer(6, 2, 300, 16, 1, 3);
  const at::Tensor kept =
      select(method_policy({{"method", "streaming_llm"}, {"budget", 75}, {"n_sink", 4}}), l);
  std::set<int64_t> expected = {0, 1, 2, 3};
  for (int64_t i = 229; i < 300; ++i) expected.insert(i);
  for (int64_t h = 0; h < 2; ++h) EXPECT_EQ(kept_row(kept, h), expected);
}

TEST(Methods, TovaAveragesTheLastQueryOverEveryHeadAndKeepsTheLastToken) {
  const int64_t heads = 6, kv_heads = 2, n = 200, d = 16, group = heads / kv_heads;
  const Layer l = random_layer(heads, kv_heads, n, d, 3, 4);
  const at::Tensor kept = select(method_policy({{"method", "tova"}, {"budget", 50}}), l);
  const auto q = l.queries.accessor<float, 3>();
  const auto k = l.keys.accessor<float, 3>();
  std::vector<double> score(n, 0.0);
  for (int64_t h = 0; h < heads; ++h) {
    std::vector<double> logit(n);
    double top = -1e300, sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      double dot = 0;
      for (int64_t e = 0; e < d; ++e) dot += q[h][2][e] * k[h / group][i][e];  // the last row
      logit[i] = dot / std::sqrt(double(d));
      top = std::max(top, logit[i]);
    }
    for (int64_t i = 0; i < n; ++i) sum += std::exp(logit[i] - top);
    for (int64_t i = 0; i < n; ++i) score[i] += std::exp(logit[i] - top) / sum / heads;
  }
  score[n - 1] = std::numeric_limits<double>::infinity();
  const std::set<int64_t> expected = best(score, 50);
  for (int64_t h = 0; h < kv_heads; ++h) EXPECT_EQ(kept_row(kept, h), expected) << "head " << h;
}

// LagKV's score for one KV head, written out: chunks of `lag` after the sinks, each rescaled by
// the next chunk's per-channel min and max, the unbiased std over channels, a softmax over the
// chunk, keys and values averaged, then the rank within the chunk / lag; 1 for the rest.
std::vector<double> lagkv_row(const at::Tensor& keys, const at::Tensor& values, int64_t head,
                              int64_t sinks, int64_t lag) {
  const int64_t n = keys.size(1), d = keys.size(2), chunks = (n - sinks) / lag;
  std::vector<double> score(n, 1.0);
  const auto spread = [&](const at::Tensor& t, int64_t c) {
    const auto a = t.accessor<float, 3>();
    std::vector<double> out(lag);
    for (int64_t j = 0; j < lag; ++j) {
      std::vector<double> x(d);
      for (int64_t e = 0; e < d; ++e) {
        double lo = 1e300, hi = -1e300;
        for (int64_t r = 0; r < lag; ++r) {
          lo = std::min<double>(lo, a[head][sinks + (c + 1) * lag + r][e]);
          hi = std::max<double>(hi, a[head][sinks + (c + 1) * lag + r][e]);
        }
        x[e] = (a[head][sinks + c * lag + j][e] - lo) / (hi - lo);
      }
      double mean = 0, var = 0;
      for (double v : x) mean += v / d;
      for (double v : x) var += (v - mean) * (v - mean) / (d - 1);
      out[j] = std::sqrt(var);
    }
    double top = *std::max_element(out.begin(), out.end()), sum = 0;
    for (double& v : out) sum += (v = std::exp(v - top));
    for (double& v : out) v /= sum;
    return out;
  };
  for (int64_t c = 0; c + 1 < chunks; ++c) {
    const std::vector<double> k = spread(keys, c), v = spread(values, c);
    for (int64_t j = 0; j < lag; ++j) {
      int64_t rank = 0;
      for (int64_t o = 0; o < lag; ++o) rank += (k[o] + v[o]) / 2 < (k[j] + v[j]) / 2;
      score[sinks + c * lag + j] = double(rank) / lag;
    }
  }
  return score;
}

TEST(Methods, LagKvRanksEachChunkAgainstTheNext) {
  const Layer l = random_layer(6, 2, 4 + 4 * 16 + 5, 8, 1, 6);
  const at::Tensor kept = select(
      method_policy({{"method", "lagkv"}, {"budget", 40}, {"n_sink", 4}, {"lag_size", 16}}), l);
  for (int64_t h = 0; h < 2; ++h)
    EXPECT_EQ(kept_row(kept, h), best(lagkv_row(l.keys, l.values, h, 4, 16), 40)) << h;
  // Shorter than n_sink + 2 lag: the sinks and the most recent tokens.
  const Layer short_layer = random_layer(6, 2, 30, 8, 1, 7);
  const at::Tensor recent =
      select(method_policy({{"method", "lagkv"}, {"budget", 10}}), short_layer);
  std::set<int64_t> expected = {0, 1, 2, 3};
  for (int64_t i = 24; i < 30; ++i) expected.insert(i);
  EXPECT_EQ(kept_row(recent, 0), expected);
}

TEST(Methods, APromptWithinTheBudgetKeepsEverything) {
  const Layer l = random_layer(6, 2, 30, 16, 1, 5);
  const at::Tensor kept = select(method_policy({{"method", "knorm"}, {"budget", 64}}), l);
  EXPECT_TRUE(at::equal(kept, at::arange(30, at::kLong).unsqueeze(0).expand({2, 30})));
}

TEST(Methods, TheMethodDialectRoundTripsAndKeepsRecordedPoliciesAsTheyWere) {
  for (const json& j : {json{{"method", "knorm"}, {"budget", 128}},
                        json{{"method", "streaming_llm"}, {"budget", 128}, {"n_sink", 8}},
                        json{{"method", "tova"}, {"budget", 64}, {"name", "tova-64"}},
                        json{{"method", "lagkv"}, {"budget", 64}, {"cross_scoring", true}}}) {
    const Policy p = method_policy(j);
    EXPECT_EQ(evict::policy_from_json(evict::policy_to_json(p)), p) << j.dump();
    EXPECT_EQ(p.method_name(), j["method"]);
  }
  EXPECT_EQ(
      method_policy({{"method", "streaming_llm"}, {"budget", 128}}).params.values().at("n_sink"),
      evict::ParamValue(int64_t{4}));
  // The paper's methods under their names equal their reference settings.
  const Policy snap = method_policy({{"method", "snapkv"},
                                     {"budget", 128},
                                     {"window", 64},
                                     {"kernel", 5},
                                     {"pooling", "avg"},
                                     {"granularity", "kv_head"}});
  Policy expected = evict::snapkv_policy(128);
  const evict::WindowParams& w = evict::window_params();
  expected.params.set(w.window, int64_t{64});
  expected.params.set(w.kernel, int64_t{5});
  expected.params.set(w.pooling, std::string("avg"));
  expected.params.set(w.granularity, std::string("kv_head"));
  EXPECT_EQ(snap, expected);
  EXPECT_EQ(method_policy({{"method", "pyramidkv"}, {"budget", 64}}), evict::pyramidkv_policy(64));
  Policy diverse = evict::global_policy(64);
  diverse.name = "diverse";
  EXPECT_EQ(method_policy({{"method", "diverse"}, {"budget", 64}}), diverse);
  // A recorded policy's JSON is unchanged by the registry.
  EXPECT_EQ(evict::policy_to_json(evict::snapkv_policy(64)).count("method"), 0u);
  EXPECT_EQ(evict::snapkv_policy(64).method_name(), "snapkv");
  EXPECT_EQ(evict::global_policy(64).method_name(), "diverse");
}

// observed_attention from column sums written out: every query's softmax row added per key, and
// divided by the n - i queries that see key i unless normalize is off; the group's mean.
TEST(Methods, ObservedAttentionAveragesTheAttentionEveryQueryPaid) {
  const int64_t heads = 4, kv_heads = 2, n = 60, d = 8, group = heads / kv_heads;
  at::manual_seed(11);
  const at::Tensor q = at::randn({heads, n, d}), k = at::randn({kv_heads, n, d});
  const auto qa = q.accessor<float, 3>();
  const auto ka = k.accessor<float, 3>();
  std::vector<std::vector<double>> sums(heads, std::vector<double>(n, 0.0));
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t t = 0; t < n; ++t) {
      std::vector<double> logit(t + 1, 0.0);
      double total = 0;
      for (int64_t i = 0; i <= t; ++i) {
        for (int64_t e = 0; e < d; ++e) logit[i] += qa[h][t][e] * ka[h / group][i][e];
        total += std::exp(logit[i] / std::sqrt(double(d)));
      }
      for (int64_t i = 0; i <= t; ++i)
        sums[h][i] += std::exp(logit[i] / std::sqrt(double(d))) / total;
    }
  }
  at::Tensor column_sums = at::empty({heads, n});
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < n; ++i) column_sums[h][i] = sums[h][i];
  const at::Tensor values = at::randn({kv_heads, n, d});
  const at::Tensor window = q.narrow(1, n - 1, 1);
  for (const bool normalize : {true, false}) {
    model::PrefillLayer layer(0, k, values, window);
    layer.column_sums = column_sums;
    const at::Tensor kept =
        evict::select_layer(
            layer,
            {method_policy(
                {{"method", "observed_attention"}, {"budget", 20}, {"normalize", normalize}})},
            4)
            .front();
    for (int64_t g = 0; g < kv_heads; ++g) {
      std::vector<double> score(n, 0.0);
      for (int64_t j = 0; j < group; ++j)
        for (int64_t i = 0; i < n; ++i)
          score[i] += sums[g * group + j][i] / (normalize ? double(n - i) : 1.0) / group;
      EXPECT_EQ(kept_row(kept, g), best(score, 20)) << "normalize " << normalize << ", head " << g;
    }
  }
  // Where the prefill gave no column sums, the method says so.
  try {
    select(method_policy({{"method", "observed_attention"}, {"budget", 20}}),
           random_layer(heads, kv_heads, n, d, 1, 3));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "policy 0 (observed_attention): needs the attention column sums, not given here");
  }
}

// expected_attention written out: per query head, the pre-RoPE queries' mean and biased covariance
// over t >= n_sink, rotated by the RoPE matrix averaged over positions n .. n + F - 1, the
// expected logit of each key, its softmax, the group's mean, times the value's norm.
TEST(Methods, ExpectedAttentionScoresKeysByTheFutureQueriesStatistics) {
  const int64_t heads = 4, kv_heads = 2, n = 40, d = 8, group = heads / kv_heads, sink = 4;
  const int64_t future = 16;
  at::manual_seed(12);
  const at::Tensor pre = at::randn({heads, n, d}) + 0.5, k = at::randn({kv_heads, n, d});
  const at::Tensor v = at::randn({kv_heads, n, d});
  const at::Tensor inv_freq = at::pow(100.0, -at::arange(0, d, 2, at::kFloat) / double(d));
  const auto pa = pre.accessor<float, 3>();
  const auto ka = k.accessor<float, 3>();
  const auto va = v.accessor<float, 3>();
  const auto fa = inv_freq.accessor<float, 1>();
  // R = mean over p of diag(cos_p) + diag(sin_p) P, P = [[0, -I], [I, 0]] (half-split RoPE).
  std::vector<std::vector<double>> r(d, std::vector<double>(d, 0.0));
  for (int64_t p = n; p < n + future; ++p) {
    for (int64_t e = 0; e < d; ++e) {
      const double angle = p * double(fa[e % (d / 2)]);
      r[e][e] += std::cos(angle) / future;
      if (e < d / 2)
        r[e][e + d / 2] -= std::sin(angle) / future;
      else
        r[e][e - d / 2] += std::sin(angle) / future;
    }
  }
  std::vector<std::vector<double>> score(kv_heads, std::vector<double>(n, 0.0));
  const int64_t m = n - sink;
  for (int64_t h = 0; h < heads; ++h) {
    std::vector<double> mean(d, 0.0);
    for (int64_t t = sink; t < n; ++t)
      for (int64_t e = 0; e < d; ++e) mean[e] += pa[h][t][e] / m;
    std::vector<std::vector<double>> cov(d, std::vector<double>(d, 0.0));
    for (int64_t t = sink; t < n; ++t)
      for (int64_t a = 0; a < d; ++a)
        for (int64_t b = 0; b < d; ++b)
          cov[a][b] += (pa[h][t][a] - mean[a]) * (pa[h][t][b] - mean[b]) / m;
    std::vector<double> mu(d, 0.0);
    std::vector<std::vector<double>> rc(d, std::vector<double>(d, 0.0)),
        rot(d, std::vector<double>(d, 0.0));
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b) {
        mu[a] += r[a][b] * mean[b];
        for (int64_t c = 0; c < d; ++c) rc[a][b] += r[a][c] * cov[c][b];
      }
    for (int64_t a = 0; a < d; ++a)
      for (int64_t b = 0; b < d; ++b)
        for (int64_t c = 0; c < d; ++c) rot[a][b] += rc[a][c] * r[b][c];
    std::vector<double> z(n, 0.0);
    double top = -1e300, total = 0;
    for (int64_t i = sink; i < n; ++i) {
      double linear = 0, quadratic = 0;
      for (int64_t a = 0; a < d; ++a) {
        linear += mu[a] * ka[h / group][i][a];
        for (int64_t b = 0; b < d; ++b)
          quadratic += ka[h / group][i][a] * rot[a][b] * ka[h / group][i][b];
      }
      z[i] = linear / std::sqrt(double(d)) + quadratic / d / 2;
      top = std::max(top, z[i]);
    }
    for (int64_t i = sink; i < n; ++i) total += std::exp(z[i] - top);
    for (int64_t i = sink; i < n; ++i) score[h / group][i] += std::exp(z[i] - top) / total / group;
  }
  const at::Tensor last = pre.narrow(1, n - 1, 1);  // PrefillLayer holds references
  model::PrefillLayer layer(0, k, v, last);
  layer.pre_rope_queries = pre;
  layer.rope_inv_freq = inv_freq;
  const Policy policy = method_policy(
      {{"method", "expected_attention"}, {"budget", 15}, {"n_future_positions", future}});
  const at::Tensor got = evict::method_scores(policy, layer, 4);
  for (int64_t g = 0; g < kv_heads; ++g) {
    for (int64_t i = 0; i < n; ++i) {
      if (i < sink) {
        EXPECT_TRUE(std::isinf(got[g][i].item<float>())) << "sink " << i << " always kept";
        continue;
      }
      double norm = 0;
      for (int64_t e = 0; e < d; ++e) norm += double(va[g][i][e]) * va[g][i][e];
      EXPECT_NEAR(got[g][i].item<float>(), score[g][i] * std::sqrt(norm), 1e-6) << g << ", " << i;
    }
  }
}

// criticalkv over knorm written out: stage 1 keeps floor(B / 2) by knorm's score, the rest go to
// (s + epsilon) x the group's mean L1 norm of v_i through each query head's o_proj slice.
TEST(Methods, CriticalKvWeighsTheBaseScoreByTheProjectedValueNorm) {
  const int64_t heads = 4, kv_heads = 2, n = 50, d = 8, hidden = 12, group = heads / kv_heads;
  const int64_t budget = 16;
  const Layer l = random_layer(heads, kv_heads, n, d, 1, 13);
  const at::Tensor o_proj = at::randn({hidden, heads * d});
  model::PrefillLayer layer(0, l.keys, l.values, l.queries);
  layer.output_projection = o_proj;
  const Policy policy = method_policy(
      {{"method", "criticalkv"}, {"budget", budget}, {"base", {{"method", "knorm"}}}});
  const at::Tensor kept = evict::select_layer(layer, {policy}, 4).front();
  const auto ka = l.keys.accessor<float, 3>();
  const auto va = l.values.accessor<float, 3>();
  const auto wa = o_proj.accessor<float, 2>();
  for (int64_t g = 0; g < kv_heads; ++g) {
    std::vector<double> base(n), weighted(n);
    for (int64_t i = 0; i < n; ++i) {
      double norm = 0, projected = 0;
      for (int64_t e = 0; e < d; ++e) norm += double(ka[g][i][e]) * ka[g][i][e];
      for (int64_t j = 0; j < group; ++j) {
        const int64_t h = g * group + j;
        for (int64_t o = 0; o < hidden; ++o) {
          double x = 0;
          for (int64_t e = 0; e < d; ++e) x += va[g][i][e] * wa[o][h * d + e];
          projected += std::abs(x) / group;
        }
      }
      base[i] = -std::sqrt(norm);
      weighted[i] = (base[i] + 1e-4) * projected;
    }
    const std::set<int64_t> first = best(base, budget / 2);
    for (int64_t i : first) weighted[i] = std::numeric_limits<double>::infinity();
    const std::set<int64_t> got = kept_row(kept, g);
    EXPECT_EQ(got, best(weighted, budget)) << "head " << g;
    for (int64_t i : first) EXPECT_EQ(got.count(i), 1u) << "stage 1 keeps " << i;
  }
  // The prefill computes what a batch's methods need, and only that.
  EXPECT_EQ(policy.needs(), uint32_t(evict::kNeedsValues | evict::kNeedsOutputProjection));
  EXPECT_EQ(evict::snapkv_policy(64).needs(), uint32_t(evict::kNeedsWindowQueries));
}

// r_kv's redundancy never holds the cosine matrix (column sums from the sum of the unit keys, each
// row's last near-duplicate found in blocks of columns from the end): at 5,000 keys the scores
// equal the whole matrix's, written out with ATen.
TEST(Methods, RKvRedundancyWithoutTheMatrixEqualsTheWholeMatrix) {
  const int64_t n = 5000, d = 16, window = 8;
  const Layer l = random_layer(2, 1, n, d, window, 14);
  const Policy policy = method_policy({{"method", "r_kv"}, {"budget", 64}, {"kernel", 1}});
  const model::PrefillLayer layer(0, l.keys, l.values, l.queries);
  const at::Tensor got = evict::method_scores(policy, layer, 4);
  const at::Tensor unit = l.keys / (l.keys.norm(2, {-1}, true) + 1e-8);
  at::Tensor c = at::matmul(unit, unit.transpose(1, 2));  // [1, n, n]
  c.diagonal(0, 1, 2).zero_();
  const at::Tensor columns = at::arange(n, at::kLong);
  const at::Tensor last = at::where(c > 0.5, columns, at::zeros_like(columns)).amax(-1);
  c.scatter_(-1, last.unsqueeze(-1), 0.0);
  const at::Tensor r = at::softmax(c.mean(at::IntArrayRef{1}), -1).narrow(1, 0, n - window);
  const at::Tensor logits = at::matmul(l.queries.reshape({1, 2 * window, d}),
                                       l.keys.narrow(1, 0, n - window).transpose(1, 2)) /
                            std::sqrt(double(d));
  const at::Tensor a = at::softmax(std::get<0>(logits.view({1, 2, window, n - window}).max(1)), -1)
                           .mean(at::IntArrayRef{1});
  const at::Tensor want = 0.07 * a - 0.93 * r;
  EXPECT_LE((got.narrow(1, 0, n - window) - want).abs().max().item<double>(), 1e-8);
  EXPECT_TRUE(std::isinf(got[0][n - 1].item<float>()));
}

// adakv over knorm, both rules written out with plain loops on knorm's own scores (the
// allocation is what is checked, not knorm): per-head counts exact, summing to Hkv x B.
struct AdaKvCase {
  std::vector<std::vector<double>> base;  // [kv_heads][n], knorm's scores
  at::Tensor kept;                        // adakv's selection, ragged rows -1-padded
};

AdaKvCase adakv_case(const std::string& rule, double alpha, int64_t budget, uint64_t seed) {
  const int64_t heads = 6, kv_heads = 3, n = 120;
  Layer l = random_layer(heads, kv_heads, n, 8, 1, seed);
  // Heads of different key scales: their scores compete unevenly, so the counts differ.
  l.keys[0].mul_(0.5);
  l.keys[2].mul_(1.7);
  const model::PrefillLayer layer(0, l.keys, l.values, l.queries);
  const Policy policy = method_policy({{"method", "adakv"},
                                       {"budget", budget},
                                       {"alpha", alpha},
                                       {"rule", rule},
                                       {"base", {{"method", "knorm"}}}});
  const at::Tensor s =
      evict::method_scores(method_policy({{"method", "knorm"}, {"budget", budget}}), layer, 4);
  AdaKvCase c;
  const auto sa = s.accessor<float, 2>();
  for (int64_t h = 0; h < kv_heads; ++h) {
    c.base.emplace_back();
    for (int64_t i = 0; i < n; ++i) c.base.back().push_back(sa[h][i]);
  }
  c.kept = evict::select_layer(layer, {policy}, 4).front();
  return c;
}

// The `count` best (head, position) pairs of the layer: higher first, then lower head, then lower
// position.
std::vector<std::pair<int64_t, int64_t>> layer_best(const std::vector<std::vector<double>>& s,
                                                    int64_t count) {
  std::vector<std::pair<int64_t, int64_t>> all;
  for (size_t h = 0; h < s.size(); ++h)
    for (size_t i = 0; i < s[h].size(); ++i) all.push_back({int64_t(h), int64_t(i)});
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    return s[a.first][a.second] > s[b.first][b.second];
  });
  all.resize(static_cast<size_t>(count));
  return all;
}

std::set<int64_t> kept_positions_of(const at::Tensor& kept, int64_t row) {
  std::set<int64_t> out;
  for (int64_t p : kept_row(kept, row))
    if (p >= 0) out.insert(p);
  return out;
}

TEST(Methods, AdaKvKvpressRuleForcesEachHeadsBestThenTheHeadsCompete) {
  for (const double alpha : {0.2, 0.5, 0.0}) {
    const int64_t budget = 30, kv_heads = 3;
    AdaKvCase c = adakv_case("kvpress", alpha, budget, 21);
    int64_t n_safe = static_cast<int64_t>(budget * alpha);
    if (alpha > 0) n_safe = std::max<int64_t>(1, n_safe);
    std::vector<std::vector<double>> s = c.base;
    for (auto& row : s)
      for (int64_t i : best(row, n_safe)) row[i] = std::numeric_limits<double>::infinity();
    std::vector<std::set<int64_t>> expected(kv_heads);
    for (const auto& [h, i] : layer_best(s, kv_heads * budget)) expected[h].insert(i);
    int64_t total = 0;
    std::set<size_t> sizes;
    for (int64_t h = 0; h < kv_heads; ++h) {
      const std::set<int64_t> got = kept_positions_of(c.kept, h);
      EXPECT_EQ(got, expected[h]) << "alpha " << alpha << " head " << h;
      EXPECT_GE(int64_t(got.size()), n_safe);
      for (int64_t i : best(c.base[h], n_safe)) EXPECT_EQ(got.count(i), 1u) << "forced " << i;
      total += int64_t(got.size());
      sizes.insert(got.size());
    }
    EXPECT_EQ(total, kv_heads * budget);
    EXPECT_GT(sizes.size(), 1u) << "alpha " << alpha << ": the heads' counts should differ";
    EXPECT_EQ(c.kept.size(1), int64_t(*sizes.rbegin()));  // padded to the longest head
  }
}

TEST(Methods, AdaKvOriginalRuleMixesTheGlobalCountWithTheUniformBudget) {
  for (const double alpha : {0.2, 0.7}) {
    const int64_t budget = 25, kv_heads = 3;
    AdaKvCase c = adakv_case("original", alpha, budget, 22);
    std::vector<int64_t> global(kv_heads, 0);
    for (const auto& [h, i] : layer_best(c.base, kv_heads * budget)) ++global[h];
    // b_h = c_h (1 - alpha) + alpha B, floors then +1 to the largest fractional parts.
    std::vector<int64_t> b(kv_heads);
    std::vector<double> frac(kv_heads);
    int64_t sum = 0;
    for (int64_t h = 0; h < kv_heads; ++h) {
      const double x = global[h] * (1 - alpha) + alpha * budget;
      b[h] = int64_t(std::floor(x));
      frac[h] = x - std::floor(x);
      sum += b[h];
    }
    while (sum < kv_heads * budget) {
      int64_t top = 0;
      for (int64_t h = 1; h < kv_heads; ++h)
        if (frac[h] > frac[top]) top = h;
      ++b[top];
      frac[top] = -1;
      ++sum;
    }
    int64_t total = 0;
    for (int64_t h = 0; h < kv_heads; ++h) {
      const std::set<int64_t> got = kept_positions_of(c.kept, h);
      EXPECT_EQ(int64_t(got.size()), b[h]) << "alpha " << alpha << " head " << h;
      EXPECT_EQ(got, best(c.base[h], b[h])) << "alpha " << alpha << " head " << h;
      EXPECT_GE(double(got.size()), std::floor(alpha * budget));  // the floor
      total += int64_t(got.size());
    }
    EXPECT_EQ(total, kv_heads * budget);
    EXPECT_NE(b[0], b[2]) << "alpha " << alpha << ": the heads' counts should differ";
  }
}

TEST(Methods, AdaKvBadInputNamesTheField) {
  const json base = {{"method", "knorm"}};
  EXPECT_EQ(parse_error({{"method", "adakv"}, {"budget", 64}, {"alpha", 1.5}, {"base", base}}),
            "policy.alpha: must be in [0, 1], got 1.5");
  EXPECT_EQ(parse_error({{"method", "adakv"}, {"budget", 64}, {"alpha", -0.1}, {"base", base}}),
            "policy.alpha: must be in [0, 1], got -0.1");
  EXPECT_EQ(parse_error({{"method", "adakv"}, {"budget", 64}, {"rule", "paper"}, {"base", base}}),
            "policy.rule: expected one of kvpress, original, got 'paper'");
  EXPECT_EQ(parse_error({{"method", "adakv"}, {"budget", 64}}),
            "policy.base: adakv wraps a base policy: none given");
  // adakv only moves its base's budget: a greedy (diverse) base is fine at KV-head granularity;
  // criticalkv rescores, and refuses it.
  EXPECT_EQ(parse_error({{"method", "adakv"}, {"budget", 64}, {"base", {{"method", "diverse"}}}}),
            "policy.base.granularity: adakv rescores per KV head: set kv_head");
  EXPECT_EQ(parse_error({{"method", "criticalkv"},
                         {"budget", 64},
                         {"base", {{"method", "diverse"}, {"granularity", "kv_head"}}}}),
            "policy.base: diverse has no scores of its own to rescore (the greedy admission)");
  EXPECT_EQ(
      parse_error(
          {{"method", "adakv"}, {"budget", 64}, {"base", {{"method", "adakv"}, {"base", base}}}}),
      "policy.base: adakv has no scores of its own to rescore (a wrapper)");
  // The policy the issue names is accepted and round-trips, its rule by name.
  const Policy p = method_policy({{"method", "adakv"},
                                  {"budget", 128},
                                  {"alpha", 0.2},
                                  {"base",
                                   {{"method", "snapkv"},
                                    {"budget", 128},
                                    {"window", 64},
                                    {"kernel", 5},
                                    {"pooling", "avg"},
                                    {"granularity", "kv_head"}}}});
  EXPECT_EQ(evict::policy_to_json(p)["rule"], "kvpress");
  EXPECT_EQ(evict::policy_from_json(evict::policy_to_json(p)), p);
  EXPECT_EQ(p.observation_window(), 64);
}

TEST(Methods, AWrapperRoundTripsWithItsBase) {
  const json j = {{"method", "criticalkv"},
                  {"budget", 128},
                  {"base",
                   {{"method", "snapkv"},
                    {"window", 64},
                    {"kernel", 5},
                    {"pooling", "avg"},
                    {"granularity", "kv_head"}}}};
  const Policy p = method_policy(j);
  ASSERT_TRUE(p.base);
  EXPECT_EQ(p.base->budget, 128);
  EXPECT_EQ(p.observation_window(), 64);  // the base's window
  EXPECT_EQ(evict::policy_from_json(evict::policy_to_json(p)), p);
  Policy other = p;
  other.base = std::make_shared<const Policy>(evict::snapkv_policy(128));
  EXPECT_NE(other, p);
}

TEST(Methods, BadInputNamesTheField) {
  EXPECT_EQ(parse_error({{"method", "criticalkv"}, {"budget", 64}}),
            "policy.base: criticalkv wraps a base policy: none given");
  EXPECT_EQ(
      parse_error({{"method", "criticalkv"}, {"budget", 64}, {"base", {{"method", "diverse"}}}}),
      "policy.base: diverse has no scores of its own to rescore (the greedy admission)");
  EXPECT_EQ(parse_error({{"method", "criticalkv"},
                         {"budget", 64},
                         {"base", {{"method", "criticalkv"}, {"base", {{"method", "knorm"}}}}}}),
            "policy.base: criticalkv has no scores of its own to rescore (a wrapper)");
  EXPECT_EQ(parse_error({{"method", "criticalkv"},
                         {"budget", 64},
                         {"base", {{"method", "knorm"}, {"budget", 32}}}}),
            "policy.base.budget: 32 differs from the wrapper's budget 64, which decides");
  EXPECT_EQ(
      parse_error({{"method", "criticalkv"}, {"budget", 64}, {"base", {{"method", "snapkv"}}}}),
      "policy.base.granularity: criticalkv rescores per KV head: set kv_head");
  EXPECT_EQ(parse_error({{"method", "criticalkv"}, {"budget", 64}, {"base", 3}}),
            "policy.base: expected a JSON object, got 3");
  EXPECT_EQ(parse_error({{"method", "knorm"}, {"budget", 64}, {"base", {{"method", "knorm"}}}}),
            "policy.base: knorm is not a wrapper: it takes no base");
  EXPECT_EQ(parse_error({{"method", "knorm"}, {"budget", 64}, {"n_sink", 4}}),
            "policy.n_sink: not a parameter of knorm (its parameters: none)");
  EXPECT_EQ(parse_error({{"method", "streaming_llm"}, {"budget", 64}, {"n_sink", "4"}}),
            "policy.n_sink: expected an integer, got \"4\"");
  EXPECT_EQ(parse_error({{"method", "streaming_llm"}, {"budget", 3}, {"n_sink", 4}}),
            "policy.budget: 3 does not hold the 4 entries streaming_llm always keeps (its sinks or "
            "window)");
  EXPECT_EQ(parse_error({{"method", "streaming_llm"}, {"budget", 64}, {"n_sink", -1}}),
            "policy.n_sink: must be >= 0, got -1");
  EXPECT_EQ(parse_error({{"method", "knorm"}}), "policy: missing required field \"budget\"");
  EXPECT_EQ(parse_error({{"method", "knorm"}, {"budget", 0}}),
            "policy.budget: expected an integer >= 1, got 0");
  EXPECT_EQ(parse_error({{"method", "knorm"}, {"budget", 64}, {"kind", "topk"}}),
            "policy.kind: not a field of the method dialect: \"method\" decides it");
  EXPECT_EQ(parse_error({{"method", "r_kv"}, {"budget", 7}}),
            "policy.budget: 7 does not hold the 8 entries r_kv always keeps (its sinks or window)");
  EXPECT_EQ(parse_error({{"method", "lagkv"}, {"budget", 64}, {"cross_scoring", 1}}),
            "policy.cross_scoring: expected true or false, got 1");
  EXPECT_EQ(parse_error({{"method", 3}, {"budget", 64}}),
            "policy.method: expected a method name, got 3");
  EXPECT_EQ(parse_error({{"method", "snapkv"}, {"budget", 64}, {"n_sink", 4}}),
            "policy.n_sink: not a parameter of snapkv (its parameters: window, kernel, pooling, "
            "granularity, group_reduce, schedule, beta, redistribute, mean, dispersion, lambda1)");
}

}  // namespace
}  // namespace kvs::test

namespace kvs::test {
namespace {

// cake decides a layer only with every layer's preference: one layer alone is refused by name;
// its parameters are checked as the others' are.
TEST(Methods, CakeNeedsEveryLayerAndRefusesBadTemperatures) {
  const Layer l = random_layer(4, 2, 200, 16, 32, 5);
  const evict::Policy cake = method_policy({{"method", "cake"}, {"budget", 64}});
  try {
    select(cake, l);
    ADD_FAILURE() << "cake selected one layer alone";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("moves its budget between layers"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(parse_error({{"method", "cake"}, {"budget", 64}, {"tau1", 0}}),
            "policy.tau1: must be >= 0.001, got 0");
  EXPECT_EQ(parse_error({{"method", "cake"}, {"budget", 64}, {"tau2", -1}}),
            "policy.tau2: must be >= 0.001, got -1");
  EXPECT_EQ(
      parse_error({{"method", "cake"}, {"budget", 31}}),
      "policy.budget: 31 does not hold the 32 entries cake always keeps (its sinks or window)");
  EXPECT_EQ(parse_error({{"method", "mixkv"}, {"budget", 64}, {"host", "pyramid"}})
                .rfind("policy.host: ", 0),
            0u);
}

// cake keeps a prompt of at most B + W tokens whole, as its reference does (cake_cache.py: no
// compression if n <= cache_size + W): at n = B, B + 1 and B + W every layer keeps all n, at
// n = B + W + 1 the layers' counts sum to the uniform total L x B.
TEST(Methods, CakeKeepsAPromptOfAtMostBPlusWWhole) {
  const int64_t budget = 48, window = 8, layers = 3;
  const evict::Policy cake =
      method_policy({{"method", "cake"}, {"budget", budget}, {"window", window}});
  for (const int64_t n : {budget, budget + 1, budget + window, budget + window + 1}) {
    evict::CompressingObserver observer({cake}, layers, 0);
    for (int64_t i = 0; i < layers; ++i) {
      const Layer l = random_layer(4, 2, n, 16, window, 70 + i);
      observer.on_layer(model::PrefillLayer{i, l.keys, l.values, l.queries});
    }
    observer.take_cache();
    int64_t total = 0;
    for (int64_t i = 0; i < layers; ++i) {
      const at::Tensor kept = observer.kept_positions(0)[i];
      total += kept.size(1);
      if (n <= budget + window) {
        EXPECT_TRUE(at::equal(kept, at::arange(n, at::kLong).unsqueeze(0).expand({2, n})))
            << "n " << n << " layer " << i << " is not kept whole";
      }
    }
    EXPECT_EQ(total, n <= budget + window ? layers * n : layers * budget) << "n " << n;
  }
}

// cake's layer budgets through the observer: every layer's preference first, then counts that sum
// to the uniform total, each layer's kept set its count's best scores (the window included).
TEST(Methods, CakeLayerBudgetsSumToTheUniformTotal) {
  const evict::Policy cake = method_policy({{"method", "cake"}, {"budget", 48}, {"window", 8}});
  const int64_t layers = 4;
  std::vector<Layer> data;
  for (int64_t i = 0; i < layers; ++i) {
    data.push_back(random_layer(4, 2, 160, 16, 8, 40 + i));
    data.back().queries = data.back().queries * (0.5 + double(i));  // the layers differ
  }
  evict::CompressingObserver observer({cake}, layers, 0);
  std::vector<at::Tensor> scores;
  for (int64_t i = 0; i < layers; ++i) {
    const model::PrefillLayer layer{i, data[i].keys, data[i].values, data[i].queries};
    observer.on_layer(layer);
    scores.push_back(evict::method_scores(cake, layer, layers));
  }
  observer.take_cache();
  std::set<int64_t> counts;
  int64_t total = 0;
  for (int64_t i = 0; i < layers; ++i) {
    const at::Tensor kept = observer.kept_positions(0)[i];
    counts.insert(kept.size(1));
    total += kept.numel();
    for (int64_t h = 0; h < 2; ++h) {
      const at::Tensor row = scores[i][h];
      std::vector<double> score(row.data_ptr<float>(), row.data_ptr<float>() + row.numel());
      EXPECT_EQ(kept_row(kept, h), best(score, kept.size(1))) << "layer " << i << " head " << h;
    }
  }
  EXPECT_EQ(total, layers * 2 * 48);
  EXPECT_GT(counts.size(), 1u);
}

// The paper's Global on AdaKV budgets: each head's count comes from the diverse base's scores
// (mu + lambda1 sigma) by AdaKV's rule, exactly as over the top-k policy of the same score; each
// head then admits its count greedily (lambda2). At lambda2 = 0 the greedy admission is the top-k
// set, so the kept sets equal adakv over the top-k base; with lambda2 < 0 they differ, with the
// same counts.
TEST(Methods, GlobalOnAdaKvBudgetsAdmitsEachHeadsCountGreedily) {
  const Layer l = random_layer(6, 3, 400, 16, 8, 77);
  const auto policy = [](const std::string& rule, const char* kind, double lambda2) {
    json base = {{"kind", kind},
                 {"budget", 48},
                 {"window", 8},
                 {"schedule", "uniform"},
                 {"granularity", "kv_head"}};
    if (std::string(kind) == "greedy")
      base["lambda2"] = {{"profile", "global"}, {"a", {std::asinh(lambda2)}}};
    return method_policy(
        {{"method", "adakv"}, {"budget", 48}, {"rule", rule}, {"alpha", 0.2}, {"base", base}});
  };
  for (const char* rule : {"kvpress", "original"}) {
    const at::Tensor topk = select(policy(rule, "topk", 0), l);
    const at::Tensor plain = select(policy(rule, "greedy", 0.0), l);
    const at::Tensor diverse = select(policy(rule, "greedy", -0.6), l);
    EXPECT_EQ(evict::kept_counts(topk), evict::kept_counts(diverse)) << rule;
    std::set<int64_t> counts;
    for (int64_t c : evict::kept_counts(topk)) counts.insert(c);
    EXPECT_GT(counts.size(), 1u) << rule << ": the heads kept equal counts";
    bool differs = false;
    for (int64_t h = 0; h < 3; ++h) {
      std::set<int64_t> a = kept_row(topk, h), b = kept_row(plain, h), c = kept_row(diverse, h);
      a.erase(-1), b.erase(-1), c.erase(-1);
      EXPECT_EQ(a, b) << rule << " head " << h;
      differs = differs || a != c;
    }
    EXPECT_TRUE(differs) << rule << ": lambda2 changed nothing";
  }
}

}  // namespace
}  // namespace kvs::test
