#include "model/generate.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <numeric>

#include "model/transformer.h"

namespace kvs::model {

at::Tensor without_early_stops(const at::Tensor& logits, int64_t generated, int64_t min_new_tokens,
                               const std::set<int32_t>& stop_ids) {
  if (generated >= min_new_tokens || stop_ids.empty()) return logits;
  at::Tensor masked = logits.clone();
  for (int32_t id : stop_ids)
    if (id >= 0 && id < masked.size(1)) masked.select(1, id).fill_(-INFINITY);
  return masked;
}

GreedyResult greedy_decode(const Transformer& model, DecodeCache& cache,
                           const at::Tensor& first_logits, const GreedyOptions& options) {
  c10::InferenceMode inference;
  const int64_t batch = first_logits.size(0);
  GreedyResult result;
  result.tokens.resize(static_cast<size_t>(batch));
  std::vector<bool> done(static_cast<size_t>(batch), false);
  std::vector<at::Tensor> step_logits;
  const int64_t max_new = std::max<int64_t>(1, options.max_new_tokens);
  // The batch rows still decoding; logits row i belongs to row running[i]. A finished row
  // leaves the batch (and its cache) unless every step's logits are kept for the whole batch.
  std::vector<int64_t> running(static_cast<size_t>(batch));
  std::iota(running.begin(), running.end(), int64_t{0});
  at::Tensor logits = first_logits;
  reserve_decode_slots(cache, max_new);
  for (int64_t step = 0; step < max_new; ++step) {
    if (options.collect_logits) step_logits.push_back(logits.to(at::kCPU));
    at::Tensor next = without_early_stops(logits, step, options.min_new_tokens, options.stop_ids)
                          .argmax(-1)
                          .to(at::kCPU);
    const auto* next_ids = next.data_ptr<int64_t>();
    std::vector<int64_t> still_running;  // indices into `running`
    for (size_t i = 0; i < running.size(); ++i) {
      const int64_t row = running[i];
      if (done[row]) continue;  // stopped earlier, kept in the batch
      const auto id = static_cast<int32_t>(next_ids[i]);
      result.tokens[row].push_back(id);
      done[row] = options.stop_ids.count(id) > 0 ||
                  static_cast<int64_t>(result.tokens[row].size()) >= max_new;
      if (!done[row]) still_running.push_back(static_cast<int64_t>(i));
    }
    result.steps = step + 1;
    if (still_running.empty()) break;
    if (!options.collect_logits && still_running.size() < running.size()) {
      keep_rows(cache, still_running);
      next = next.index_select(0, at::tensor(still_running, at::kLong));
      std::vector<int64_t> rows;
      for (int64_t i : still_running) rows.push_back(running[i]);
      running = std::move(rows);
    }
    // Stopped rows that stay in the batch keep decoding their last token; their outputs are ignored.
    logits = model.extend(next.to(first_logits.device()).unsqueeze(1), cache).squeeze(1);
  }
  if (options.collect_logits) result.step_logits = at::stack(step_logits);
  return result;
}

}  // namespace kvs::model
