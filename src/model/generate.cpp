#include "model/generate.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "model/transformer.h"

namespace kvs::model {

GreedyResult greedy_decode(const Transformer& model, DecodeCache& cache,
                           const at::Tensor& first_logits, const GreedyOptions& options) {
  c10::InferenceMode inference;
  const int64_t batch = first_logits.size(0);
  GreedyResult result;
  result.tokens.resize(static_cast<size_t>(batch));
  std::vector<bool> done(static_cast<size_t>(batch), false);
  std::vector<at::Tensor> step_logits;
  const int64_t max_new = std::max<int64_t>(1, options.max_new_tokens);
  at::Tensor logits = first_logits;
  reserve_decode_slots(cache, max_new);
  for (int64_t step = 0; step < max_new; ++step) {
    if (options.collect_logits) step_logits.push_back(logits.to(at::kCPU));
    if (step < options.min_new_tokens && !options.stop_ids.empty()) {
      logits = logits.clone();
      for (int32_t id : options.stop_ids)
        if (id >= 0 && id < logits.size(1)) logits.select(1, id).fill_(-INFINITY);
    }
    const at::Tensor next = logits.argmax(-1).to(at::kCPU);
    const auto* next_ids = next.data_ptr<int64_t>();
    bool all_done = true;
    for (int64_t b = 0; b < batch; ++b) {
      if (done[b]) continue;
      const auto id = static_cast<int32_t>(next_ids[b]);
      result.tokens[b].push_back(id);
      done[b] = options.stop_ids.count(id) > 0 ||
                static_cast<int64_t>(result.tokens[b].size()) >= max_new;
      all_done = all_done && done[b];
    }
    result.steps = step + 1;
    if (all_done) break;
    // Finished rows keep decoding their last token; their outputs are ignored.
    logits = model.extend(next.to(first_logits.device()).unsqueeze(1), cache).squeeze(1);
  }
  if (options.collect_logits) result.step_logits = at::stack(step_logits);
  return result;
}

}  // namespace kvs::model
