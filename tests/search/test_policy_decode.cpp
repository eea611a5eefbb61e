// The one prefill -> compress -> decode path on a random tiny model: a budget above the prompt
// decodes as the full cache does, compressed rows decode from their own caches, and policies of
// several cache layouts (granularity, window) on one prefill answer as each would alone.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/scratch_dir.h"
#include "core/error.h"
#include "evict/compressed_cache.h"
#include "evict/policy.h"
#include "evict/window_params.h"
#include "model/generate.h"
#include "model/presets.h"
#include "model/transformer.h"
#include "search/decode_time.h"
#include "search/policy_decode.h"

namespace kvs::search {
namespace {

using evict::Policy;

Policy kv_head(Policy p) {
  p.params.set(evict::window_params().granularity, std::string("kv_head"));
  return p;
}

Policy with_window(Policy p, int64_t window) {
  p.params.set(evict::window_params().window, window);
  return p;
}

class TinyModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new test::ScratchDir();
    model::MakeModelOptions options;
    options.preset = "tiny";
    options.seed = 3;
    model::make_random_model(scratch_->file("model"), options);
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }

  static model::Transformer load() {
    model::LoadOptions options;
    options.device = "cpu";
    options.dtype = "f32";
    return model::Transformer::load(scratch_->file("model"), options);
  }

  // Greedy tokens of every policy, then of the full cache when asked.
  static std::vector<std::vector<int32_t>> generate(const model::Transformer& model,
                                                    const std::vector<int32_t>& ids,
                                                    const std::vector<Policy>& policies,
                                                    bool full_cache = false) {
    PolicyDecodeOptions options;
    options.greedy.max_new_tokens = 10;
    options.full_cache = full_cache;
    return decode_with_policies(model, ids, policies, options).tokens;
  }

  static std::vector<int32_t> prompt(int length, int multiplier, int vocab) {
    std::vector<int32_t> ids = {1};
    for (int i = 0; i < length; ++i) ids.push_back(3 + (i * multiplier) % vocab);
    return ids;
  }

  static test::ScratchDir* scratch_;
};
test::ScratchDir* TinyModel::scratch_ = nullptr;

TEST_F(TinyModel, BudgetAtLeastThePromptGeneratesAsWithoutEviction) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(47, 7919, 2000);
  const auto expected = generate(model, ids, {}, /*full_cache=*/true).front();
  ASSERT_EQ(expected.size(), 10u);

  const std::vector<Policy> query_heads = {evict::snapkv_policy(48), evict::pyramidkv_policy(64),
                                           evict::global_policy(100, 0.5, 0.3)};
  const std::vector<Policy> kv_heads = {kv_head(evict::snapkv_policy(48)),
                                        kv_head(evict::global_policy(64, -0.2, -0.5))};
  for (const auto& batch : {query_heads, kv_heads}) {
    const auto rows = generate(model, ids, batch);
    ASSERT_EQ(rows.size(), batch.size());
    for (size_t b = 0; b < rows.size(); ++b) EXPECT_EQ(rows[b], expected) << batch[b].name;
  }
}

TEST_F(TinyModel, CompressedRowsDecodeFromTheirOwnCache) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const Policy small = evict::pyramidkv_policy(16);
  const Policy diverse = evict::global_policy(24, 0.0, -0.5);
  const auto rows = generate(model, ids, {small, diverse, small}, /*full_cache=*/true);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], rows[2]);  // rows do not leak into each other
  for (const auto& r : rows) EXPECT_EQ(r.size(), 10u);
  // Each row is what its policy decodes alone, and eviction changed what the model says: 16 or
  // 24 of 151 prompt entries do not answer as the full cache does.
  EXPECT_EQ(rows[0], generate(model, ids, {small}).front());
  EXPECT_EQ(rows[1], generate(model, ids, {diverse}).front());
  EXPECT_NE(rows[0], rows[3]) << "the 16-entry cache decodes as the full cache: compression ignored";
  EXPECT_NE(rows[1], rows[3]) << "the 24-entry cache decodes as the full cache: compression ignored";
}

// Policies of three layouts (query-head and KV-head granularity, windows 8 and 4) on one prefill:
// each layout decodes in its own batch, the window-4 policies see the last 4 of the 8 window rows,
// and every row answers as its policy does on a prefill of its own.
TEST_F(TinyModel, MixedLayoutsOnOnePrefillAnswerAsEachAlone) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const std::vector<Policy> policies = {evict::snapkv_policy(20),
                                        with_window(evict::snapkv_policy(20), 4),
                                        kv_head(evict::global_policy(24, 0.3, -0.4)),
                                        with_window(evict::global_policy(24, 0.3, -0.4), 4),
                                        evict::pyramidkv_policy(32)};
  const auto rows = generate(model, ids, policies);
  ASSERT_EQ(rows.size(), policies.size());
  for (size_t p = 0; p < policies.size(); ++p)
    EXPECT_EQ(rows[p], generate(model, ids, {policies[p]}).front()) << "policy " << p;
  // The window is part of the policy: window 4 keeps other entries than window 8.
  EXPECT_NE(rows[0], rows[1]);
}

// Budgets that move on one prefill: uniform and pyramid SnapKV, adakv (head-wise), cake (layer-
// wise, decided once every layer is seen) and mixkv on its AdaKV host, each row as its policy
// alone; cake's layers keep
// different counts, and each cache holds the entries its policy kept.
TEST_F(TinyModel, AllocatorsShareOnePrefillAndAnswerAsEachAlone) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const nlohmann::json snap = {{"method", "snapkv"}, {"budget", 40},
                               {"window", 8},        {"kernel", 5},
                               {"pooling", "avg"},   {"granularity", "kv_head"}};
  std::vector<Policy> policies;
  for (const nlohmann::json& j :
       {snap,
        nlohmann::json{
            {"method", "pyramidkv"}, {"budget", 40}, {"window", 8}, {"granularity", "kv_head"}},
        nlohmann::json{{"method", "adakv"}, {"budget", 40}, {"rule", "original"}, {"base", snap}},
        nlohmann::json{{"method", "cake"}, {"budget", 40}, {"window", 16}},
        nlohmann::json{{"method", "mixkv"}, {"budget", 40}, {"window", 16}, {"host", "adakv"}}})
    policies.push_back(evict::policy_from_json(j));
  PolicyDecodeOptions options;
  options.greedy.max_new_tokens = 10;
  const PolicyDecodes together = decode_with_policies(model, ids, policies, options);
  ASSERT_EQ(together.tokens.size(), policies.size());
  for (size_t p = 0; p < policies.size(); ++p) {
    const PolicyDecodes alone = decode_with_policies(model, ids, {policies[p]}, options);
    EXPECT_EQ(together.tokens[p], alone.tokens.front()) << policies[p].method_name();
    EXPECT_EQ(together.footprints[p].kept_entries, alone.footprints.front().kept_entries);
    for (size_t l = 0; l < alone.kept_positions.front().size(); ++l) {
      EXPECT_TRUE(together.kept_positions[p][l].equal(alone.kept_positions.front()[l]))
          << policies[p].method_name() << " layer " << l;
    }
  }
  // cake: layers differ, the total is the uniform one (2 layers x 2 KV heads x 40 here).
  const std::vector<at::Tensor>& cake = together.kept_positions[3];
  std::set<int64_t> per_layer;
  int64_t total = 0;
  for (const at::Tensor& layer : cake) {
    per_layer.insert(layer.size(1));
    total += layer.ge(0).sum().item<int64_t>();
  }
  EXPECT_GT(per_layer.size(), 1u) << "cake gave every layer the same budget";
  EXPECT_EQ(total, int64_t(cake.size()) * cake.front().size(0) * 40);
  EXPECT_EQ(together.footprints[3].kept_entries, total);
}

// Head-wise allocators (adakv's two rules, mixkv on its AdaKV host) compress the prompt only; on
// the decode-time path, beside a decode-time policy, each answers as on the prefill-time path and
// holds its prefill's kept set plus every position decoded, and its cache stores what its heads
// hold and the slots reserved for the steps, no padding.
TEST_F(TinyModel, HeadWiseRowsOnTheScheduledDecodeAnswerAsOnThePrefillPath) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const auto n = static_cast<int64_t>(ids.size());
  const nlohmann::json snap = {{"method", "snapkv"}, {"budget", 40},
                               {"window", 8},        {"kernel", 5},
                               {"pooling", "avg"},   {"granularity", "kv_head"}};
  std::vector<Policy> head_wise;
  for (const nlohmann::json& j :
       {nlohmann::json{{"method", "adakv"}, {"budget", 40}, {"base", snap}},
        nlohmann::json{{"method", "adakv"}, {"budget", 40}, {"rule", "original"}, {"base", snap}},
        nlohmann::json{{"method", "mixkv"}, {"budget", 40}, {"window", 16}, {"host", "adakv"}}})
    head_wise.push_back(evict::policy_from_json(j));
  PolicyDecodeOptions prefill_time;
  prefill_time.greedy.max_new_tokens = 10;
  const PolicyDecodes expected = decode_with_policies(model, ids, head_wise, prefill_time);

  std::vector<Policy> policies = head_wise;
  policies.push_back(evict::policy_from_json(nlohmann::json{
      {"method", "knorm"}, {"decoding", {{"interval", 2}, {"target", 48}, {"buffer", 2}}}}));
  DecodeTimeOptions options;
  options.max_new_tokens = 10;
  const DecodeTimeResult out = decode_with_schedules(model, ids, policies, options);
  ASSERT_EQ(out.rows.size(), policies.size());
  EXPECT_GT(out.rows.back().compressions, 0);
  for (size_t p = 0; p < head_wise.size(); ++p) {
    const std::string name = head_wise[p].method_name() + " " + std::to_string(p);
    EXPECT_EQ(out.rows[p].tokens, expected.tokens[p]) << name;
    bool ragged = false;
    for (size_t l = 0; l < expected.kept_positions[p].size(); ++l) {
      const at::Tensor kept = expected.kept_positions[p][l], held = out.rows[p].held[l];
      std::set<int64_t> counts;
      for (int64_t h = 0; h < kept.size(0); ++h) {
        std::vector<int64_t> want;
        for (int64_t i = 0; i < kept.size(1); ++i)
          if (kept[h][i].item<int64_t>() >= 0) want.push_back(kept[h][i].item<int64_t>());
        counts.insert(int64_t(want.size()));
        for (int64_t t = 0; t < out.steps; ++t) want.push_back(n + t);
        std::vector<int64_t> got;
        for (int64_t i = 0; i < held.size(1); ++i)
          if (held[h][i].item<int64_t>() >= 0) got.push_back(held[h][i].item<int64_t>());
        EXPECT_EQ(got, want) << name << " layer " << l << " head " << h;
      }
      ragged = ragged || counts.size() > 1;
    }
    EXPECT_TRUE(ragged) << name << ": every head kept the same count";

    // Alone: the cache holds each head's entries and its reserved slots, nothing padded.
    const DecodeTimeResult alone = decode_with_schedules(model, ids, {head_wise[p]}, options);
    int64_t slots = 0;
    for (const at::Tensor& kept : expected.kept_positions[p])
      slots += kept.ge(0).sum().item<int64_t>() + kept.size(0) * options.max_new_tokens;
    EXPECT_EQ(alone.peak_cache_bytes, slots * alone.entry_bytes) << name;
    EXPECT_EQ(alone.rows.front().tokens, expected.tokens[p]) << name;
  }
}

TEST_F(TinyModel, RefusesNothingToDecode) {
  const model::Transformer model = load();
  PolicyDecodeOptions options;
  EXPECT_THROW(decode_with_policies(model, prompt(20, 7919, 2000), {}, options), Error);
}

// Logits of several rows (two layouts, one budget each, and the full cache): each row's prompt and
// step logits are the ones it gets decoded alone, and its steps are its own tokens' count.
TEST_F(TinyModel, LogitsOfSeveralRowsEqualEachRowAlone) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(60, 7919, 2000);
  PolicyDecodeOptions options;
  options.greedy.max_new_tokens = 6;
  options.greedy.collect_logits = true;
  options.full_cache = true;
  const std::vector<Policy> policies = {evict::snapkv_policy(16), evict::snapkv_policy(12),
                                        kv_head(evict::global_policy(20, 0.2, -0.3))};
  const PolicyDecodes together = decode_with_policies(model, ids, policies, options);
  ASSERT_EQ(together.step_logits.size(), policies.size() + 1);
  ASSERT_EQ(together.prompt_logits.size(), policies.size() + 1);
  for (size_t r = 0; r <= policies.size(); ++r) {
    PolicyDecodeOptions one = options;
    one.full_cache = r == policies.size();
    const std::vector<Policy> alone_policies =
        one.full_cache ? std::vector<Policy>{} : std::vector<Policy>{policies[r]};
    const PolicyDecodes alone = decode_with_policies(model, ids, alone_policies, one);
    EXPECT_EQ(together.tokens[r], alone.tokens.front()) << "row " << r;
    EXPECT_EQ(together.step_logits[r].size(0), int64_t(together.tokens[r].size())) << "row " << r;
    EXPECT_TRUE(at::allclose(together.step_logits[r], alone.step_logits.front(), 1e-5, 1e-5))
        << "row " << r;
    EXPECT_TRUE(at::equal(together.prompt_logits[r], alone.prompt_logits.front())) << "row " << r;
  }
  // The rows' later steps differ (their caches do; the first step is the shared prefill's): a
  // check that compared a row with itself would pass anyway.
  const int64_t steps = std::min(together.step_logits[0].size(0), together.step_logits[1].size(0));
  ASSERT_GT(steps, 1);
  EXPECT_FALSE(at::allclose(together.step_logits[0].narrow(0, 1, steps - 1),
                            together.step_logits[1].narrow(0, 1, steps - 1)));
}

Policy observing(Policy p, evict::Observe observe) {
  p.observe = observe;
  return p;
}

struct HandDecode {
  std::vector<int32_t> tokens;
  at::Tensor rest_logits;  // [rest, vocab]: the extension's logits on the compressed cache
  std::vector<at::Tensor> kept;
};

// The protocols by hand: prefill ids[0, split) with the policy's observer, take its compressed
// cache, extend it by ids[split, n), then greedy-decode from the extension's last logits.
HandDecode by_hand(const model::Transformer& model, const std::vector<int32_t>& ids, Policy policy,
                   int64_t split, int64_t new_tokens) {
  policy.observe = evict::Observe::PromptEnd;  // the observer itself knows no protocol
  const int64_t n = static_cast<int64_t>(ids.size()), rest = n - split;
  evict::CompressingObserver observer({policy}, model.config().num_hidden_layers,
                                      new_tokens + rest);
  model::PrefillOptions prefill;
  prefill.observer = &observer;
  prefill.keep_cache = false;
  model.prefill(std::vector<int32_t>(ids.begin(), ids.begin() + split), prefill);
  model::DecodeCache cache = observer.take_cache();
  const at::Tensor rest_ids =
      at::tensor(std::vector<int64_t>(ids.begin() + split, ids.end()), at::kLong).view({1, rest});
  const at::Tensor logits = model.extend(rest_ids, cache);
  model::GreedyOptions greedy;
  greedy.max_new_tokens = new_tokens;
  HandDecode out;
  out.tokens =
      model::greedy_decode(model, cache, logits.select(1, rest - 1), greedy).tokens.front();
  out.rest_logits = logits.select(0, 0);
  out.kept = observer.kept_positions(0);
  return out;
}

PolicyDecodes with_question(const model::Transformer& model, const std::vector<int32_t>& ids,
                            const std::vector<Policy>& policies, longbench::TokenSpan question,
                            bool logits = false) {
  PolicyDecodeOptions options;
  options.greedy.max_new_tokens = 10;
  options.greedy.collect_logits = logits;
  options.question = question;
  return decode_with_policies(model, ids, policies, options);
}

// kvpress's protocol: the context (ids before the question) alone is prefilled and compressed,
// the question and what follows extend the compressed cache uncompressed; decode_with_policies
// equals that done by hand, logits to float tolerance and greedy tokens exactly.
TEST_F(TinyModel, ContextProtocolEqualsPrefillCompressExtendByHand) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const longbench::TokenSpan question{110, 140};
  for (const Policy& base :
       {evict::snapkv_policy(24), kv_head(evict::global_policy(32, 0.2, -0.3))}) {
    const Policy policy = observing(base, evict::Observe::Context);
    const PolicyDecodes got = with_question(model, ids, {policy}, question, /*logits=*/true);
    const HandDecode want = by_hand(model, ids, base, question.begin, 10);
    EXPECT_EQ(got.tokens.front(), want.tokens) << base.name;
    ASSERT_EQ(got.prompt_logits.front().size(0), 151);
    const at::Tensor rest =
        got.prompt_logits.front().narrow(0, question.begin, 151 - question.begin);
    EXPECT_TRUE(at::allclose(rest, want.rest_logits, 1e-4, 1e-4)) << base.name;
    // Only the context was compressed: every kept position lies before the question.
    for (const at::Tensor& layer : got.kept_positions.front())
      EXPECT_LT(layer.max().item<int64_t>(), question.begin);
    for (size_t l = 0; l < want.kept.size(); ++l)
      EXPECT_TRUE(at::equal(got.kept_positions.front()[l], want.kept[l])) << "layer " << l;
    // And it is another protocol than the whole prompt's: the kept sets differ somewhere.
    const PolicyDecodes whole = with_question(model, ids, {base}, question);
    bool differs = false;
    for (size_t l = 0; l < want.kept.size(); ++l)
      differs |= !at::equal(whole.kept_positions.front()[l], want.kept[l]);
    EXPECT_TRUE(differs) << base.name << ": the context protocol kept what the whole prompt's did";
  }
}

// The question protocol's observer rows are the W rows that end at the question's last token:
// its kept sets are those of the default protocol on the prompt ids cut at the question's end,
// and its answer is that cache extended by the rest.
TEST_F(TinyModel, QuestionAnchoredRowsEndAtTheQuestionsEnd) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const longbench::TokenSpan question{110, 140};
  const Policy base = evict::snapkv_policy(24);
  const PolicyDecodes got =
      with_question(model, ids, {observing(base, evict::Observe::Question)}, question);
  const std::vector<int32_t> through_question(ids.begin(), ids.begin() + question.end);
  const PolicyDecodes cut = with_question(model, through_question, {base}, question);
  const HandDecode want = by_hand(model, ids, base, question.end, 10);
  for (size_t l = 0; l < want.kept.size(); ++l) {
    EXPECT_TRUE(at::equal(got.kept_positions.front()[l], cut.kept_positions.front()[l]))
        << "layer " << l;
    EXPECT_LT(got.kept_positions.front()[l].max().item<int64_t>(), question.end);
  }
  EXPECT_EQ(got.tokens.front(), want.tokens);
  // The window is the question's: its last W positions are kept, the prompt's last ones are not.
  const at::Tensor layer0 = got.kept_positions.front()[0];
  EXPECT_TRUE((layer0 == question.end - 1).any().item<bool>());
  EXPECT_FALSE((layer0 == 150).any().item<bool>());
}

// One call, three protocols: each row answers as its policy does alone.
TEST_F(TinyModel, MixedProtocolsInOneCallAnswerAsEachAlone) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(150, 104729, 3000);
  const longbench::TokenSpan question{110, 140};
  const std::vector<Policy> policies = {
      observing(evict::snapkv_policy(20), evict::Observe::Context), evict::snapkv_policy(20),
      observing(kv_head(evict::global_policy(24, 0.3, -0.4)), evict::Observe::Question),
      observing(evict::pyramidkv_policy(32), evict::Observe::Context)};
  PolicyDecodeOptions options;
  options.greedy.max_new_tokens = 10;
  options.question = question;
  options.full_cache = true;
  const PolicyDecodes rows = decode_with_policies(model, ids, policies, options);
  ASSERT_EQ(rows.tokens.size(), policies.size() + 1);
  for (size_t p = 0; p < policies.size(); ++p)
    EXPECT_EQ(rows.tokens[p], with_question(model, ids, {policies[p]}, question).tokens.front())
        << "policy " << p;
  EXPECT_EQ(rows.tokens.back(), generate(model, ids, {}, /*full_cache=*/true).front());
}

TEST_F(TinyModel, ProtocolsWithoutAQuestionSpanAreRefusedNamingTheField) {
  const model::Transformer model = load();
  const std::vector<int32_t> ids = prompt(40, 7919, 2000);
  const auto error = [&](const Policy& p, std::optional<longbench::TokenSpan> question) {
    PolicyDecodeOptions options;
    options.question = question;
    try {
      decode_with_policies(model, ids, {p}, options);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const Policy question = observing(evict::snapkv_policy(16), evict::Observe::Question);
  const Policy context = observing(evict::snapkv_policy(16), evict::Observe::Context);
  for (const auto& [p, span] : std::vector<std::pair<Policy, std::optional<longbench::TokenSpan>>>{
           {question, std::nullopt},
           {context, std::nullopt},
           {question, longbench::TokenSpan{20, 20}},
           {context, longbench::TokenSpan{30, 20}},
           {question, longbench::TokenSpan{20, 60}},
           {context, longbench::TokenSpan{0, 10}}}) {
    const std::string e = error(p, span);
    EXPECT_NE(e.find("policy.observe"), std::string::npos) << "got '" << e << "'";
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_EQ(error(evict::snapkv_policy(16), std::nullopt), "");  // the default needs no span
}

}  // namespace
}  // namespace kvs::search
