#include "search/fidelity.h"

#include <algorithm>

#include "core/error.h"
#include "core/timer.h"
#include "model/transformer.h"
#include "search/decode_time.h"

namespace kvs::search {

double rouge_l_tokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  if (a.empty() || b.empty()) return 0.0;
  std::vector<int32_t> previous(b.size() + 1, 0), current(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j)
      current[j] =
          a[i - 1] == b[j - 1] ? previous[j - 1] + 1 : std::max(previous[j], current[j - 1]);
    std::swap(previous, current);
  }
  const double lcs = previous[b.size()];
  if (lcs == 0) return 0.0;
  const double p = lcs / double(a.size()), r = lcs / double(b.size());
  return 2 * p * r / (p + r);
}

FidelityResult measure_fidelity(const FidelityRequest& request) {
  if (request.policies.empty()) throw Error("fidelity: no policy given");
  if (request.new_tokens < 1) throw error_at("--new-tokens", "must be >= 1");
  if (request.block < 1) throw error_at("--block", "must be >= 1");
  if (request.prompt_ids.empty()) throw Error("fidelity: empty prompt");
  const model::Transformer model = model::Transformer::load(request.model_dir, request.load);
  Timer timer;
  FidelityResult out;
  out.prompt_tokens = int64_t(request.prompt_ids.size());
  out.steps = request.new_tokens;

  // The full cache's own continuation (no stop token: L steps).
  out.reference = full_cache_continuation(model, request.prompt_ids, request.new_tokens);

  // Teacher-forced on it, beside the full cache: KL and agreement per step.
  DecodeTimeOptions forced;
  forced.teacher = out.reference;
  forced.full_cache = true;
  const DecodeTimeResult teacher =
      decode_with_schedules(model, request.prompt_ids, request.policies, forced);
  // Free-running, each policy its own greedy choices.
  DecodeTimeOptions free_running;
  free_running.max_new_tokens = request.new_tokens;
  const DecodeTimeResult own =
      decode_with_schedules(model, request.prompt_ids, request.policies, free_running);

  for (size_t i = 0; i < request.policies.size(); ++i) {
    const DecodeTimeRow& row = teacher.rows[i];
    PolicyFidelity f;
    f.name = request.policies[i].name;
    const std::vector<double> agree(row.top1.begin(), row.top1.end());
    f.mean_kl = step_mean(row.kl);
    f.top1 = step_mean(agree);
    f.block_kl = block_means(row.kl, request.block);
    f.block_top1 = block_means(agree, request.block);
    const std::vector<int32_t>& tokens = own.rows[i].tokens;
    for (size_t s = 0; s < tokens.size() && s < out.reference.size(); ++s)
      if (tokens[s] != out.reference[s]) {
        f.first_divergence = int64_t(s) + 1;
        break;
      }
    f.rouge_l = rouge_l_tokens(tokens, out.reference);
    f.largest_cache = std::max(row.largest_cache, own.rows[i].largest_cache);
    f.compressions = row.compressions;
    out.policies.push_back(std::move(f));
  }
  out.seconds = timer.seconds();
  return out;
}

}  // namespace kvs::search
