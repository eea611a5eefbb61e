#include "search/decode_time.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <optional>

#include "core/error.h"
#include "core/strfmt.h"
#include "core/timer.h"
#include "evict/compressed_cache.h"
#include "evict/layer_selection.h"
#include "model/decode_observer.h"
#include "model/generate.h"
#include "model/rope.h"
#include "model/transformer.h"
#include "search/layout_groups.h"

namespace kvs::search {

namespace {

// The slots a re-lay of a shared batch reserves at least: rows that compress every step then
// rewrite only their own entries, in place, for that many steps before the next re-lay, at the
// cost of up to that many slots more per (row, cache head) than its entries.
constexpr int64_t kRelayReserve = 16;

// What one policy's row carries between steps.
struct RowState {
  evict::Policy scoring;  // the policy at its decoding target (budget = target), for select_layer
  std::optional<evict::DecodingSchedule> schedule;
  bool cache_positions = false;  // RoPE positions within the cache (evict/decoding.h)
  // Its method scores by the attention every query paid each entry (h2o): per layer, that sum per
  // query head over the entries held, [heads, count] float32, the prompt's queries and every
  // decoded one's.
  bool accumulates = false;
  std::vector<at::Tensor> sums;
  int64_t since = 0;  // steps since the last compression (or since the prefill)
  // Per layer: the positions held, [kv_heads, count] int64 on the CPU, position order; the steps
  // fed since the last compression follow them (positions appended_from .. seen - 1).
  std::vector<at::Tensor> held;
  // Its heads hold different counts, their positions left-padded with -1 (a head-wise allocator:
  // adakv, mixkv on its AdaKV host): its compressions score each head over its own entries.
  bool ragged = false;
  int64_t appended_from = 0;
  // Per layer: the queries of the buffered steps, oldest first ([heads, d] each, run dtype).
  std::vector<std::deque<at::Tensor>> queries, pre_rope;
};

// Buffers each row's queries of every layer as the steps are fed.
class QueryBuffers final : public model::DecodeStepObserver {
 public:
  QueryBuffers(std::vector<RowState>& rows, bool pre_rope) : rows_(rows), pre_rope_(pre_rope) {}
  void on_layer(const model::DecodeStepLayer& layer) override {
    for (size_t b = 0; b < rows_.size(); ++b) {
      RowState& row = rows_[b];
      if (!row.schedule) continue;
      const auto l = static_cast<size_t>(layer.layer);
      push(row.queries[l], layer.queries[int64_t(b)].select(1, 0), row.schedule->buffer);
      if (pre_rope_)
        push(row.pre_rope[l], layer.pre_rope_queries[int64_t(b)].select(1, 0),
             row.schedule->buffer);
    }
  }

 private:
  static void push(std::deque<at::Tensor>& buffer, const at::Tensor& rows, int64_t capacity) {
    buffer.push_back(rows);
    while (static_cast<int64_t>(buffer.size()) > capacity) buffer.pop_front();
  }
  std::vector<RowState>& rows_;
  bool pre_rope_;
};

// The prefill's observer: the budgeted policies' (LayoutGroups), and the prompt's attention column
// sums per layer where some row accumulates them.
class PrefillTap final : public model::PrefillObserver {
 public:
  PrefillTap(model::PrefillObserver* inner, bool column_sums, int64_t window)
      : inner_(inner), column_sums_(column_sums), window_(window) {}
  int64_t window() const override { return std::max(inner_ ? inner_->window() : 0, window_); }
  uint32_t signals() const override {
    return (inner_ ? inner_->signals() : 0u) | (column_sums_ ? model::kSignalColumnSums : 0u);
  }
  void on_layer(const model::PrefillLayer& layer) override {
    if (column_sums_) sums.push_back(layer.column_sums.to(at::kFloat));
    if (window_ > 0) {
      const int64_t w = std::min(window_, layer.window_queries.size(1));
      queries.push_back(
          layer.window_queries.narrow(1, layer.window_queries.size(1) - w, w).clone());
    }
    if (inner_) inner_->on_layer(layer);
  }
  std::vector<at::Tensor> sums;     // per layer, [heads, n] float32
  std::vector<at::Tensor> queries;  // per layer, the last `window` prompt queries [heads, w, d]

 private:
  model::PrefillObserver* inner_;
  bool column_sums_;
  int64_t window_;
};

// Kept positions per KV head [kv_heads, k] -> the same per query head [heads, k].
at::Tensor per_query_head(const at::Tensor& kept, int64_t heads) {
  return kept.repeat_interleave(heads / kept.size(0), 0);
}

at::Tensor stack_rows(const std::deque<at::Tensor>& rows) {
  return at::stack(std::vector<at::Tensor>(rows.begin(), rows.end()), 1);  // [heads, S, d]
}

at::Tensor positions_of(const RowState& row, size_t layer, int64_t seen) {
  const at::Tensor& held = row.held[layer];
  if (row.appended_from >= seen) return held;
  const at::Tensor fed = at::arange(row.appended_from, seen, held.options())
                             .unsqueeze(0)
                             .expand({held.size(0), seen - row.appended_from});
  return at::cat({held, fed}, 1);
}

// Per KV head, the entries a ragged row's positions [kv_heads, k] hold: k less its padding.
std::vector<int64_t> head_counts(const at::Tensor& positions) {
  const at::Tensor counts = positions.ge(0).sum(1).to(at::kCPU).contiguous();
  return std::vector<int64_t>(counts.data_ptr<int64_t>(),
                              counts.data_ptr<int64_t>() + counts.numel());
}

// Positions [kv_heads, k] at the row indices `kept` [kv_heads, k'] (-1: a ragged row's padding).
at::Tensor gather_positions(const at::Tensor& positions, const at::Tensor& kept) {
  const at::Tensor index = kept.to(at::kCPU);
  return positions.gather(1, index.clamp_min(0)).masked_fill_(index.lt(0), evict::kRaggedPad);
}

// The entries a row holds per KV head on a layer, the heads' mean where they differ (the memory a
// head-wise row takes), rounded up.
int64_t entries_per_head(const at::Tensor& positions, bool ragged) {
  if (!ragged) return positions.size(1);
  const int64_t heads = positions.size(0);
  return (positions.ge(0).sum().item<int64_t>() + heads - 1) / heads;
}

// Row b's entries at its positions [kv_heads, k] (a ragged row's heads padded as they are).
std::pair<at::Tensor, at::Tensor> row_entries(const model::LayerCache& layer, int64_t b,
                                              const at::Tensor& positions, bool ragged) {
  if (!ragged) return model::last_entries(layer, b, positions.size(1));
  return model::last_entries(layer, b, positions.size(1), head_counts(positions));
}

// One layer's cache from each row's entries at its positions on that layer: a ragged row stores
// only what its heads hold (model/kv_cache.h), so its cache is no larger than its entries.
model::LayerCache assemble(const std::vector<std::pair<at::Tensor, at::Tensor>>& entries,
                           const std::vector<RowState>& rows, size_t layer, int64_t extra) {
  if (std::none_of(rows.begin(), rows.end(), [](const RowState& r) { return r.ragged; }))
    return model::assemble_layer_cache(entries, extra);
  std::vector<std::vector<int64_t>> counts;
  for (const RowState& row : rows) {
    const at::Tensor& held = row.held[layer];
    counts.push_back(row.ragged ? head_counts(held)
                                : std::vector<int64_t>(size_t(held.size(0)), held.size(1)));
  }
  return model::assemble_layer_cache(entries, extra, counts);
}

// Keys written at positions `from` [kv_heads, k] moved to the positions 0 .. k - 1 of a cache
// (RoPE composes: rotating by the difference moves them).
at::Tensor rerotate(const at::Tensor& keys, const at::Tensor& from, const at::Tensor& inv_freq) {
  const int64_t k = from.size(1);
  const at::Tensor to = at::arange(k, from.options()).unsqueeze(0).expand_as(from);
  const model::RopeTables delta =
      model::rope_tables_at(inv_freq, to - from, keys.scalar_type(), keys.device());
  return model::apply_rope(keys, delta);
}

// A cache-positions row's length, the same on every layer (its next token's position).
int64_t common_count(const std::vector<int64_t>& per_layer, const std::string& name) {
  for (int64_t count : per_layer)
    if (count != per_layer.front())
      throw error_at("policy.decoding.positions",
                     name +
                         ": positions within the cache need every layer to keep the same count "
                         "(its layers keep " +
                         std::to_string(per_layer.front()) + " and " + std::to_string(count) + ")");
  return per_layer.front();
}

void check_policies(const model::Transformer& model, const std::vector<evict::Policy>& policies,
                    int64_t n, int64_t steps, bool full_cache) {
  const model::ModelConfig& config = model.config();
  for (size_t i = 0; i < policies.size(); ++i) {
    const evict::Policy& p = policies[i];
    const std::string where = policies.size() == 1 ? "policy" : strfmt("policy %zu", i);
    p.validate(where);
    if (p.observe != evict::Observe::PromptEnd)
      throw error_at(where + ".observe", "a decode-time run observes at the prompt's end");
    if (p.budget > 0 && p.cache_per_query_head())
      throw error_at(where + ".granularity",
                     "the decode-time cache holds a row per KV head: set \"kv_head\"");
    if (!p.decoding) continue;
    if (p.decoding->target >= config.max_position_embeddings)
      throw error_at(
          where + ".decoding.target",
          strfmt("%lld entries: the model's context holds %lld positions, so the cache "
                 "never reaches it",
                 (long long)p.decoding->target, (long long)config.max_position_embeddings));
    // R-KV's trigger starts from the prompt's last queries; the others buffer decoding steps.
    if (p.decoding->divide_length == 0 && p.decoding->query_rows() > steps) {
      const bool buffer = p.decoding->buffer <= p.decoding->interval;
      throw error_at(
          where + (buffer ? ".decoding.buffer" : ".decoding.interval"),
          strfmt("%lld steps %s, but the decode has only %lld", (long long)p.decoding->query_rows(),
                 buffer ? "buffered" : "between compressions", (long long)steps));
    }
  }
  // Positions within the cache stay below what the cache holds; original ones reach n + steps.
  const int64_t max_positions = config.max_position_embeddings;
  bool original = full_cache;
  for (size_t i = 0; i < policies.size(); ++i) {
    const evict::Policy& p = policies[i];
    if (!p.decoding || p.decoding->positions != evict::DecodePositions::Cache) {
      original = true;
      continue;
    }
    const int64_t held = std::max(p.budget > 0 ? p.budget : n, p.decoding->target);
    if (held + p.decoding->period() > max_positions)
      throw error_at(
          policies.size() == 1 ? "policy.decoding.target" : strfmt("policy %zu.decoding.target", i),
          strfmt("the cache reaches %lld entries before a compression, past the model's "
                 "%lld positions",
                 (long long)(held + p.decoding->period()), (long long)max_positions));
  }
  if (original && n + steps > max_positions)
    throw Error(
        strfmt("decode: %lld prompt tokens + %lld steps exceed the model's %lld positions "
               "(positions within the cache, \"positions\": \"cache\", run past them)",
               (long long)n, (long long)steps, (long long)max_positions));
}

// Per row of logits [rows, vocab]: -log p(token), and against the full cache's [vocab] logits
// KL(full || row) and argmax agreement.
void measure(const at::Tensor& logits, const at::Tensor& full, const at::Tensor& fed,
             std::vector<DecodeTimeRow>& rows, bool nll) {
  const at::Tensor logp = at::log_softmax(logits.to(at::kFloat), -1);
  if (nll) {
    const at::Tensor picked = logp.gather(1, fed.view({-1, 1})).neg().to(at::kCPU).to(at::kDouble);
    for (int64_t b = 0; b < logp.size(0); ++b)
      rows[size_t(b)].nll.push_back(picked[b][0].item<double>());
  }
  if (!full.defined()) return;
  const at::Tensor full_logp = at::log_softmax(full.to(at::kFloat), -1).unsqueeze(0);
  const at::Tensor kl = (full_logp.exp() * (full_logp - logp)).sum(-1).to(at::kCPU).to(at::kDouble);
  const at::Tensor agree = logits.argmax(-1).eq(full.argmax(-1)).to(at::kCPU);
  for (int64_t b = 0; b < logp.size(0); ++b) {
    rows[size_t(b)].kl.push_back(kl[b].item<double>());
    rows[size_t(b)].top1.push_back(agree[b].item<bool>() ? 1 : 0);
  }
}

// A step's attention added to an accumulating row's sums, on every layer: its query of the step
// (the last buffered) against the entries it holds, the step's own included (a new column).
void add_step_attention(RowState& row, int64_t b, const model::DecodeCache& batch) {
  for (size_t l = 0; l < row.sums.size(); ++l) {
    const model::LayerCache& layer = batch.layers[l];
    at::Tensor& sums = row.sums[l];
    const int64_t count = sums.size(1) + 1;
    const at::Tensor keys = model::last_entries(layer, b, count).first.to(at::kFloat);
    const at::Tensor q = row.queries[l].back().to(at::kFloat);  // [heads, d]
    const int64_t kv_heads = keys.size(0), heads = q.size(0), d = q.size(1);
    const at::Tensor logits =
        at::matmul(q.view({kv_heads, heads / kv_heads, d}), keys.transpose(1, 2)) /
        std::sqrt(double(d));  // [kv_heads, group, count]
    const at::Tensor probs = at::softmax(logits, -1).reshape({heads, count});
    sums = at::cat({sums, at::zeros({heads, 1}, sums.options())}, 1) + probs.to(sums.device());
  }
}

}  // namespace

struct ScheduledDecode::State {
  State(const model::Transformer& model, const std::vector<int32_t>& prompt_ids,
        const std::vector<evict::Policy>& policies, const DecodeTimeOptions& options)
      : model(model), prompt_ids(prompt_ids), policies(policies), options(options) {}
  const model::Transformer& model;
  const std::vector<int32_t>& prompt_ids;
  const std::vector<evict::Policy>& policies;
  const DecodeTimeOptions& options;
  bool forced = false;
  int64_t steps = 0, n = 0, num_layers = 0;
  size_t layers = 0, k = 0;
  std::vector<RowState> rows;
  bool pre_rope = false;
  std::vector<bool> compressed;  // per row: its prompt compressed at the prefill (a budget)
  std::vector<size_t> budgeted;
  std::optional<LayoutGroups> groups;
  std::optional<PrefillTap> tap;
  bool observed = false;  // the tap is needed at the prefill
  bool ran = false;
};

ScheduledDecode::ScheduledDecode(const model::Transformer& model,
                                 const std::vector<int32_t>& prompt_ids,
                                 const std::vector<evict::Policy>& policies,
                                 const DecodeTimeOptions& options)
    : state_(std::make_unique<State>(model, prompt_ids, policies, options)) {
  State& s = *state_;
  s.forced = !options.teacher.empty();
  const int64_t steps = s.steps =
      s.forced ? int64_t(options.teacher.size()) : options.max_new_tokens;
  const int64_t n = s.n = static_cast<int64_t>(prompt_ids.size());
  if (steps < 1) throw Error("decode: no steps to decode (max_new_tokens < 1, no teacher tokens)");
  if (policies.empty() && !options.full_cache)
    throw Error("decode: no policy given and no full-cache decode asked for");
  check_policies(model, policies, n, steps, options.full_cache);
  for (int32_t id : options.teacher)
    if (id < 0 || id >= model.config().vocab_size)
      throw error_at("--teacher-tokens", strfmt("token id %d is outside the vocabulary of %lld", id,
                                                (long long)model.config().vocab_size));
  const int64_t num_layers = s.num_layers = model.config().num_hidden_layers;
  const auto layers = s.layers = static_cast<size_t>(num_layers);
  const size_t k = s.k = policies.size();

  std::vector<RowState>& rows = s.rows;
  rows.resize(k);
  bool& pre_rope = s.pre_rope;
  for (size_t b = 0; b < k; ++b) {
    RowState& row = rows[b];
    row.scoring = policies[b];
    row.schedule = policies[b].decoding;
    row.cache_positions = row.schedule && row.schedule->positions == evict::DecodePositions::Cache;
    if (row.schedule) {
      row.scoring.budget = row.schedule->target;
      row.scoring.decoding.reset();
      if (row.scoring.base) {
        auto base = std::make_shared<evict::Policy>(*row.scoring.base);
        base->budget = row.schedule->target;
        row.scoring.base = base;
      }
      pre_rope |= (row.scoring.needs() & evict::kNeedsPreRopeQueries) != 0;
      row.accumulates = (row.scoring.needs() & evict::kNeedsColumnSums) != 0;
    }
    row.queries.resize(layers);
    row.pre_rope.resize(layers);
    row.appended_from = n;
  }

  // What the prefill observes: the budgeted policies compressed by their prefill-time selection
  // (a prompt no longer than a budget is kept whole, as by a decode-only policy), the prompt's
  // attention column sums where a row accumulates them, its last queries for R-KV's trigger.
  s.compressed.assign(k, false);
  for (size_t b = 0; b < k; ++b) {
    const evict::Policy& p = policies[b];
    s.compressed[b] = p.budget > 0 && !p.method->keeps_whole(n, p.budget, num_layers, p.params);
    if (s.compressed[b]) s.budgeted.push_back(b);
  }
  s.groups.emplace(policies, s.budgeted, num_layers, 0);
  const bool accumulate =
      std::any_of(rows.begin(), rows.end(), [](const RowState& r) { return r.accumulates; });
  int64_t seed_rows = 0;  // R-KV's trigger: the buffer starts with the prompt's last queries
  for (const RowState& r : rows)
    if (r.schedule && r.schedule->divide_length > 0)
      seed_rows = std::max(seed_rows, r.schedule->buffer);
  s.tap.emplace(s.budgeted.empty() ? nullptr : &*s.groups, accumulate, seed_rows);
  s.observed = !s.budgeted.empty() || accumulate || seed_rows > 0;
}

ScheduledDecode::~ScheduledDecode() = default;

model::PrefillOptions ScheduledDecode::prefill_options() {
  State& s = *state_;
  model::PrefillOptions prefill;
  prefill.observer = s.observed ? &*s.tap : nullptr;
  prefill.keep_cache = s.budgeted.size() < s.k || s.options.full_cache;
  prefill.decode_capacity = s.options.full_cache ? s.steps : 0;
  return prefill;
}

DecodeTimeResult ScheduledDecode::run(model::PrefillResult& pre) {
  State& s = *state_;
  if (s.ran) throw Error("decode: a scheduled decode runs once");
  s.ran = true;
  c10::InferenceMode inference;
  const model::Transformer& model = s.model;
  const std::vector<evict::Policy>& policies = s.policies;
  const DecodeTimeOptions& options = s.options;
  const bool forced = s.forced;
  const int64_t steps = s.steps, n = s.n, num_layers = s.num_layers;
  const size_t layers = s.layers, k = s.k;
  std::vector<RowState>& rows = s.rows;
  const bool pre_rope = s.pre_rope;
  const std::vector<bool>& compressed = s.compressed;
  LayoutGroups& groups = *s.groups;
  PrefillTap& tap = *s.tap;
  DecodeTimeResult out;
  out.rows.resize(k + (options.full_cache ? 1 : 0));
  Timer timer;

  // Per layer, each row's prompt entries, then the batch.
  std::vector<std::vector<std::pair<at::Tensor, at::Tensor>>> entries(
      layers, std::vector<std::pair<at::Tensor, at::Tensor>>(k));
  const auto cpu_long = at::TensorOptions().dtype(at::kLong);
  for (LayoutGroup& g : groups.groups()) {
    model::DecodeCache cache = g.observer->take_cache();
    for (size_t r = 0; r < g.members.size(); ++r) {
      RowState& row = rows[g.members[r]];
      for (size_t l = 0; l < layers; ++l) {
        const at::Tensor kept = g.observer->kept_positions(r)[l].to(at::kCPU);
        row.held.push_back(kept);
        row.ragged = row.ragged || (kept.numel() > 0 && kept.select(1, 0).lt(0).any().item<bool>());
        entries[l][g.members[r]] = row_entries(cache.layers[l], int64_t(r), kept, row.ragged);
      }
    }
  }
  const int64_t kv_heads = model.config().num_key_value_heads;
  for (size_t b = 0; b < k; ++b) {
    if (compressed[b]) continue;
    for (size_t l = 0; l < layers; ++l) {
      const model::LayerCache& full = pre.cache.layers[l];
      rows[b].held.push_back(at::arange(n, cpu_long).unsqueeze(0).expand({kv_heads, n}).clone());
      entries[l][b] = model::last_entries(full, 0, n);
    }
  }
  const int64_t heads = model.config().num_attention_heads;
  for (size_t b = 0; b < k; ++b)
    if (rows[b].accumulates)
      for (size_t l = 0; l < layers; ++l)
        rows[b].sums.push_back(
            tap.sums[l].gather(1, per_query_head(rows[b].held[l], heads).to(tap.sums[l].device())));
  tap.sums.clear();
  for (RowState& row : rows) {
    if (!row.schedule || row.schedule->divide_length == 0) continue;
    for (size_t l = 0; l < layers; ++l) {
      const at::Tensor& q = tap.queries[l];  // [heads, w, d]
      const int64_t w = std::min(row.schedule->buffer, q.size(1));
      for (int64_t t = q.size(1) - w; t < q.size(1); ++t) row.queries[l].push_back(q.select(1, t));
    }
  }
  tap.queries.clear();
  model::DecodeCache batch;
  batch.batch = int64_t(k);
  batch.next_position = n;
  // Rows whose positions are those within the cache: the prompt's kept keys move to 0 .. count - 1
  // and each row's next token takes its count; the others continue from n.
  const bool any_cache_positions =
      std::any_of(rows.begin(), rows.end(), [](const RowState& r) { return r.cache_positions; });
  if (any_cache_positions) {
    batch.row_positions.assign(k, n);
    for (size_t b = 0; b < k; ++b) {
      if (!rows[b].cache_positions) continue;
      std::vector<int64_t> counts;
      for (size_t l = 0; l < layers; ++l) counts.push_back(entries[l][b].first.size(1));
      batch.row_positions[b] = common_count(counts, policies[b].name);
      if (!compressed[b]) continue;  // the whole prompt is already at 0 .. n - 1
      for (size_t l = 0; l < layers; ++l)
        entries[l][b].first =
            rerotate(entries[l][b].first, rows[b].held[l].to(entries[l][b].first.device()),
                     model.rope_inv_freq());
    }
  }
  auto spare = [&](int64_t step) {  // slots for the steps until the next re-lay
    int64_t until = steps - step;
    for (const RowState& row : rows)
      if (row.schedule)
        until =
            std::min(until, row.schedule->divide_length > 0 ? row.schedule->divide_length
                                                            : row.schedule->interval - row.since);
    return std::max<int64_t>(until, 1);
  };
  // The slots a re-lay reserves: to the next compression, at least kRelayReserve in a shared batch.
  auto reserve = [&](int64_t step) {
    return k > 1 ? std::max(spare(step), kRelayReserve) : spare(step);
  };
  if (k > 0)
    for (size_t l = 0; l < layers; ++l)
      batch.layers.push_back(assemble(entries[l], rows, l, reserve(0)));
  entries.clear();
  std::optional<model::DecodeCache> full;
  if (options.full_cache) full = std::move(pre.cache);
  auto bytes_of = [](const model::DecodeCache& cache) {
    int64_t bytes = 0;
    for (const model::LayerCache& layer : cache.layers) bytes += model::cache_bytes(layer);
    return bytes;
  };
  auto note_bytes = [&] {
    out.peak_cache_bytes = std::max(out.peak_cache_bytes, bytes_of(batch));
    if (full) out.full_cache_bytes = std::max(out.full_cache_bytes, bytes_of(*full));
  };
  note_bytes();

  // The rows' next-token logits, and the full cache's.
  const at::Tensor first = pre.logits.narrow(0, pre.logits.size(0) - 1, 1);  // [1, vocab]
  at::Tensor logits = k > 0 ? first.expand({int64_t(k), first.size(1)}) : at::Tensor();
  at::Tensor full_logits = options.full_cache ? first : at::Tensor();
  std::vector<bool> done(out.rows.size(), false);
  QueryBuffers buffers(rows, pre_rope);
  auto track = [&](size_t b) {
    int64_t largest = 0;
    for (size_t l = 0; l < layers; ++l)
      largest = std::max(largest, entries_per_head(rows[b].held[l], rows[b].ragged) +
                                      (batch.next_position - rows[b].appended_from));
    out.rows[b].largest_cache = std::max(out.rows[b].largest_cache, largest);
    return largest;
  };
  for (size_t b = 0; b < k; ++b) track(b);

  const auto device = model.device();
  for (int64_t step = 1; step <= steps; ++step) {
    // The token each row is fed, and the measures of its prediction.
    at::Tensor fed;
    if (forced) {
      fed = at::full({int64_t(out.rows.size())}, options.teacher[size_t(step - 1)], cpu_long);
    } else {
      auto choose = [&](const at::Tensor& l) {
        return model::without_early_stops(l, step - 1, options.min_new_tokens, options.stop_ids)
            .argmax(-1)
            .to(at::kCPU);
      };
      std::vector<at::Tensor> choices;
      if (k > 0) choices.push_back(choose(logits));
      if (full) choices.push_back(choose(full_logits));
      fed = at::cat(choices);
    }
    if (k > 0)
      measure(logits, full ? full_logits[0] : at::Tensor(), fed.narrow(0, 0, int64_t(k)).to(device),
              out.rows, forced);
    if (full && forced) {
      std::vector<DecodeTimeRow> one(1);
      measure(full_logits, at::Tensor(), fed.narrow(0, int64_t(k), 1).to(device), one, true);
      out.rows.back().nll.push_back(one.front().nll.front());
    }
    for (size_t b = 0; b < out.rows.size(); ++b) {
      if (done[b]) continue;
      const auto id = static_cast<int32_t>(fed[int64_t(b)].item<int64_t>());
      out.rows[b].tokens.push_back(id);
      if (!forced && options.stop_ids.count(id)) done[b] = true;
    }
    out.steps = step;
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) break;

    timer.reset();
    if (k > 0)
      logits = model.extend(fed.narrow(0, 0, int64_t(k)).to(device).unsqueeze(1), batch, &buffers)
                   .squeeze(1);
    if (full)
      full_logits =
          model.extend(fed.narrow(0, int64_t(k), 1).to(device).unsqueeze(1), *full).squeeze(1);
    out.decode_seconds += timer.seconds();

    // The rows whose schedule is due compress: in place where every layer is segmented and holds
    // the slots to the next compression (only the due rows are rewritten), else every layer is
    // re-laid once, with its slots reserved to the next compression, at least kRelayReserve where
    // rows share the batch.
    timer.reset();
    for (size_t b = 0; b < k; ++b)
      if (rows[b].accumulates) add_step_attention(rows[b], int64_t(b), batch);
    std::vector<size_t> due;
    for (size_t b = 0; b < k; ++b) {
      if (!rows[b].schedule) continue;
      track(b);
      const evict::DecodingSchedule& schedule = *rows[b].schedule;
      // R-KV's counter of every token seen triggers after the step that follows each multiple.
      const bool trigger = schedule.divide_length > 0
                               ? (batch.next_position - 1) % schedule.divide_length == 0
                               : ++rows[b].since >= schedule.interval;
      if (trigger) due.push_back(b);
    }
    const int64_t seen = batch.next_position;
    if (!due.empty()) {
      std::vector<bool> is_due(k, false);
      for (size_t b : due) {
        rows[b].since = 0;
        is_due[b] = true;
      }
      const int64_t extra = spare(step);
      const bool in_place = std::all_of(
          batch.layers.begin(), batch.layers.end(), [&](const model::LayerCache& layer) {
            return layer.segmented() && layer.capacity - layer.used >= extra;
          });
      std::vector<std::vector<at::Tensor>> kept_after(due.size());
      std::vector<bool> evicted(due.size(), false);  // a compression that evicts nothing is none
      std::vector<std::vector<int64_t>> counts(k);   // per row, per layer: entries after the step
      for (size_t l = 0; l < layers; ++l) {
        model::LayerCache& layer = batch.layers[l];
        std::vector<std::pair<at::Tensor, at::Tensor>> relaid(k);
        for (size_t b = 0; b < k; ++b)
          if (!in_place || is_due[b])
            relaid[b] =
                row_entries(layer, int64_t(b), positions_of(rows[b], l, seen), rows[b].ragged);
        for (size_t i = 0; i < due.size(); ++i) {
          RowState& row = rows[due[i]];
          const at::Tensor positions = positions_of(row, l, seen);
          auto& [keys, values] = relaid[due[i]];
          const at::Tensor queries = stack_rows(row.queries[l]);
          model::PrefillLayer view{int64_t(l), keys, values, queries};
          if (pre_rope && !row.pre_rope[l].empty())
            view.pre_rope_queries = stack_rows(row.pre_rope[l]);
          if (row.accumulates) view.column_sums = row.sums[l];
          view.output_projection = model.weights().layers[l].o_proj;
          view.rope_inv_freq = model.rope_inv_freq();
          view.next_position = row.cache_positions ? batch.row_positions[due[i]] : seen;
          if (row.ragged) view.head_counts = head_counts(positions);
          const at::Tensor kept = evict::select_layer(view, {row.scoring}, num_layers).front();
          const bool head_wise = kept.numel() > 0 && kept.select(1, 0).lt(0).any().item<bool>();
          evicted[i] =
              evicted[i] || (head_wise || row.ragged ? kept.ge(0).sum().item<int64_t>() <
                                                           positions.ge(0).sum().item<int64_t>()
                                                     : kept.size(1) < positions.size(1));
          row.ragged = row.ragged || head_wise;
          auto [k_kept, v_kept] = evict::gather_kept(keys, values, kept);
          // Within the cache, an entry's position is its index: the kept ones move down to theirs.
          if (row.cache_positions) k_kept = rerotate(k_kept, kept, model.rope_inv_freq());
          relaid[due[i]] = {k_kept, v_kept};
          row.held[l] = gather_positions(positions, kept);
          if (row.accumulates)
            row.sums[l] = row.sums[l].gather(
                1, per_query_head(kept.clamp_min(0), heads).to(row.sums[l].device()));
          if (options.trace) kept_after[i].push_back(row.held[l]);
        }
        if (in_place) {
          for (size_t b : due) {
            const at::Tensor& held = rows[b].held[l];
            model::replace_row_entries(layer, int64_t(b), relaid[b].first, relaid[b].second,
                                       rows[b].ragged ? head_counts(held) : std::vector<int64_t>{});
            counts[b].push_back(relaid[b].first.size(1));
          }
          continue;
        }
        for (size_t b = 0; b < k; ++b)
          if (!is_due[b]) rows[b].held[l] = positions_of(rows[b], l, seen);
        for (size_t b = 0; b < k; ++b) counts[b].push_back(relaid[b].first.size(1));
        layer = assemble(relaid, rows, l, reserve(step));
      }
      for (size_t b : due)
        if (rows[b].cache_positions)
          batch.row_positions[b] = common_count(counts[b], policies[b].name);
      for (size_t b = 0; b < k; ++b)
        if (!in_place || is_due[b]) rows[b].appended_from = seen;
      for (size_t i = 0; i < due.size(); ++i) {
        RowState& row = rows[due[i]];
        if (row.schedule->divide_length == 0) {  // R-KV's queries roll on
          for (auto& q : row.queries) q.clear();
          for (auto& q : row.pre_rope) q.clear();
        }
        if (!evicted[i]) continue;
        ++out.rows[due[i]].compressions;
        if (options.trace) out.rows[due[i]].trace.push_back({step, seen, std::move(kept_after[i])});
      }
    }
    for (size_t b = 0; b < k; ++b) out.rows[b].cache_size.push_back(track(b));
    note_bytes();
    out.compress_seconds += timer.seconds();
  }
  for (size_t b = 0; b < k; ++b)
    for (size_t l = 0; l < layers; ++l)
      out.rows[b].held.push_back(positions_of(rows[b], l, batch.next_position));
  if (!batch.layers.empty()) {
    const at::Tensor& keys = batch.layers.front().keys;
    out.entry_bytes = 2 * keys.size(-1) * int64_t(keys.element_size());
  }
  return out;
}

std::vector<std::vector<int64_t>> held_counts(const DecodeTimeRow& row) {
  std::vector<std::vector<int64_t>> counts;
  for (const at::Tensor& held : row.held) counts.push_back(head_counts(held));
  return counts;
}

double step_mean(const std::vector<double>& values) {
  if (values.empty()) throw Error("decode: no step was measured");
  double sum = 0;
  for (double v : values) sum += v;
  return sum / double(values.size());
}

std::vector<double> block_means(const std::vector<double>& values, int64_t block) {
  if (block < 1) throw error_at("--block", "must be >= 1");
  std::vector<double> out;
  for (size_t s = 0; s < values.size(); s += size_t(block)) {
    const size_t end = std::min(values.size(), s + size_t(block));
    out.push_back(
        step_mean(std::vector<double>(values.begin() + int64_t(s), values.begin() + int64_t(end))));
  }
  return out;
}

std::vector<int32_t> full_cache_continuation(const model::Transformer& model,
                                             const std::vector<int32_t>& prompt_ids, int64_t steps,
                                             DecodeTimeResult* timing) {
  DecodeTimeOptions greedy;
  greedy.max_new_tokens = steps;
  greedy.full_cache = true;
  DecodeTimeResult out = decode_with_schedules(model, prompt_ids, {}, greedy);
  std::vector<int32_t> tokens = std::move(out.rows.front().tokens);
  if (timing) *timing = std::move(out);
  return tokens;
}

DecodeTimeResult decode_with_schedules(const model::Transformer& model,
                                       const std::vector<int32_t>& prompt_ids,
                                       const std::vector<evict::Policy>& policies,
                                       const DecodeTimeOptions& options) {
  c10::InferenceMode inference;
  ScheduledDecode decode(model, prompt_ids, policies, options);
  Timer timer;
  model::PrefillResult pre = model.prefill(prompt_ids, decode.prefill_options());
  const double prefill_seconds = timer.seconds();
  DecodeTimeResult out = decode.run(pre);
  out.prefill_seconds = prefill_seconds;
  return out;
}

}  // namespace kvs::search
