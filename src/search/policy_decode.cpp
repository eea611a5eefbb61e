#include "search/policy_decode.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/strfmt.h"
#include "core/timer.h"
#include "evict/compressed_cache.h"
#include "model/transformer.h"
#include "search/layout_groups.h"

namespace kvs::search {

namespace {

// The protocols' needs, checked before any prefill: a question span inside the prompt, and for
// the context protocol a context of at least one token before it.
void check_protocols(const std::vector<evict::Policy>& policies, size_t n,
                     const std::optional<longbench::TokenSpan>& question) {
  for (const evict::Policy& p : policies) {
    if (p.observe == evict::Observe::PromptEnd) continue;
    const std::string protocol = std::string("\"") + evict::observe_name(p.observe) + "\"";
    if (!question)
      throw error_at("policy.observe",
                     protocol +
                         " needs the prompt's question span: this prompt has none (give a data "
                         "record whose input is in its prompt, not prompt text)");
    const int64_t begin = question->begin, end = question->end, len = static_cast<int64_t>(n);
    if (begin < 0 || end <= begin || end > len)
      throw error_at(
          "policy.observe",
          strfmt("%s: the question span [%lld, %lld) is empty or outside the %lld-token prompt",
                 protocol.c_str(), (long long)begin, (long long)end, (long long)len));
    if (p.observe == evict::Observe::Context && begin == 0)
      throw error_at(
          "policy.observe",
          protocol + ": the question starts the prompt, there is no context to compress");
  }
}

}  // namespace

PolicyDecodes decode_with_policies(const model::Transformer& model, const std::vector<int32_t>& prompt_ids,
                                   const std::vector<evict::Policy>& policies,
                                   const PolicyDecodeOptions& options) {
  const size_t rows = policies.size() + (options.full_cache ? 1 : 0);
  if (rows == 0) throw Error("decode: no policy given and no full-cache decode asked for");
  check_protocols(policies, prompt_ids.size(), options.question);
  const int64_t capacity = options.greedy.max_new_tokens;
  const int64_t n = static_cast<int64_t>(prompt_ids.size());
  const int64_t num_layers = model.config().num_hidden_layers;
  // Where each protocol ends the compressed part: the prompt's end, the question's end or its
  // start. One prefill per split point; a question that ends the prompt shares the whole one.
  std::map<int64_t, std::vector<size_t>> by_split;
  for (size_t i = 0; i < policies.size(); ++i) {
    const evict::Observe o = policies[i].observe;
    by_split[o == evict::Observe::PromptEnd  ? n
             : o == evict::Observe::Question ? options.question->end
                                             : options.question->begin]
        .push_back(i);
  }
  // The full cache and the decode-time policies come from the whole prompt's prefill.
  if (options.full_cache || options.scheduled) by_split[n];

  PolicyDecodes out;
  out.tokens.resize(rows);
  out.kept_positions.resize(policies.size());
  out.footprints.resize(policies.size());
  const bool logits = options.greedy.collect_logits;
  if (logits) {
    out.prompt_logits.resize(rows);
    out.step_logits.resize(rows);
  }
  // Row `r` of a decode batch is output row `row`: its tokens, and its logits where collected
  // (the batch keeps every row to the end: each row's steps are its own tokens' count).
  auto decode = [&](model::DecodeCache& cache, const at::Tensor& first,
                    const std::vector<size_t>& out_rows) {
    model::GreedyResult result = model::greedy_decode(
        model, cache, first.expand({cache.batch, first.size(1)}), options.greedy);
    for (size_t r = 0; r < out_rows.size(); ++r) {
      if (logits)
        out.step_logits[out_rows[r]] =
            result.step_logits.select(1, int64_t(r)).narrow(0, 0, int64_t(result.tokens[r].size()));
      out.tokens[out_rows[r]] = std::move(result.tokens[r]);
    }
  };
  Timer timer;
  out.prefills = static_cast<int64_t>(by_split.size());
  for (auto& [split, members] : by_split) {
    const int64_t rest = n - split;  // fed uncompressed after the compressed prefill
    LayoutGroups groups(policies, members, num_layers, capacity + rest);
    const bool full_row = options.full_cache && split == n;
    const bool serves = options.scheduled && split == n;  // the decode-time policies' prefill too
    model::PrefillOptions prefill;
    prefill.observer = members.empty() ? nullptr : &groups;
    prefill.keep_cache = full_row;
    prefill.decode_capacity = full_row ? capacity : 0;
    prefill.all_logits = logits;
    std::optional<model::ObserverPair> both;
    if (serves) {
      const model::PrefillOptions theirs = options.scheduled->prefill_options();
      if (theirs.observer)
        prefill.observer =
            prefill.observer ? &both.emplace(prefill.observer, theirs.observer) : theirs.observer;
      prefill.keep_cache = prefill.keep_cache || theirs.keep_cache;
    }
    const std::vector<int32_t> head(prompt_ids.begin(), prompt_ids.begin() + split);
    timer.reset();
    model::PrefillResult pre = model.prefill(head, prefill);
    out.prefill_seconds += timer.seconds();
    // Their decode reads the prompt's cache before the full cache's row appends to it.
    if (serves) out.scheduled = options.scheduled->run(pre);
    const at::Tensor rest_ids =
        at::tensor(std::vector<int64_t>(prompt_ids.begin() + split, prompt_ids.end()), at::kLong)
            .view({1, rest});
    for (LayoutGroup& g : groups.groups()) {
      model::DecodeCache cache = g.observer->take_cache();
      // Without a rest, every row's first token comes from the full-attention prefill's last
      // position; with one, from each row's own extension (the rows' caches differ).
      at::Tensor first = pre.logits.narrow(0, pre.logits.size(0) - 1, 1);
      if (logits)
        for (size_t member : g.members) out.prompt_logits[member] = pre.logits;
      if (rest > 0) {
        timer.reset();
        const at::Tensor extended = model.extend(rest_ids.expand({cache.batch, rest}), cache);
        out.prefill_seconds += timer.seconds();
        if (logits)
          for (size_t r = 0; r < g.members.size(); ++r)
            out.prompt_logits[g.members[r]] = at::cat({pre.logits, extended.select(0, int64_t(r))});
        first = extended.select(1, rest - 1);
      }
      timer.reset();
      decode(cache, first, g.members);
      out.decode_seconds += timer.seconds();
      for (size_t r = 0; r < g.members.size(); ++r) {
        out.kept_positions[g.members[r]] = g.observer->kept_positions(r);
        out.footprints[g.members[r]] = g.observer->footprints()[r];
      }
    }
    if (full_row) {
      if (logits) out.prompt_logits.back() = pre.logits;
      timer.reset();
      decode(pre.cache, pre.logits.narrow(0, pre.logits.size(0) - 1, 1), {rows - 1});
      out.decode_seconds += timer.seconds();
    }
  }
  return out;
}

}  // namespace kvs::search
