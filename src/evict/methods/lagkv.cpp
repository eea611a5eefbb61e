// lagkv: lag-relative statistics, attention-free (Liang et al., arXiv 2504.04704; kvpress's
// LagKVPress). After n_sink sinks the prompt is cut into chunks of lag_size; each chunk but the
// last is scored against the next one (its reference): per channel the reference's min and max
// rescale the chunk's keys, and a token's score is the softmax over its chunk of the standard
// deviation of its rescaled channels; the same for the values, and the two are averaged. Unless
// cross_scoring, the score becomes the token's rank within its chunk / lag_size, so every chunk
// keeps about the same count. The sinks, the last chunk and the remainder after it score 1 (kept
// first). A prompt shorter than n_sink + 2 lag_size keeps the sinks and the most recent tokens.
#include <ATen/ATen.h>

#include "cpu/lag_statistics.h"
#include "evict/method.h"

namespace kvs::evict {
namespace {

// states [kv_heads, chunks, lag, d] -> [kv_heads, chunks - 1, lag]: each chunk against the next.
// The ATen expression: the reference of cpu::lag_chunk_scores and the path off the CPU.
at::Tensor chunk_scores_aten(const at::Tensor& states) {
  const int64_t chunks = states.size(1);
  const at::Tensor reference = states.narrow(1, 1, chunks - 1);
  const at::Tensor scored = states.narrow(1, 0, chunks - 1);
  const at::Tensor low = std::get<0>(reference.min(2, true));
  const at::Tensor high = std::get<0>(reference.max(2, true));
  // No epsilon, as the reference: a channel constant over a reference chunk gives NaN.
  return ((scored - low) / (high - low)).std(-1, /*unbiased=*/true).softmax(-1);
}

const Param<int64_t> kSinks = integer_param("n_sink", 4, 0, "leading positions always kept");
const Param<int64_t> kLagSize = integer_param("lag_size", 128, 1, "chunk length");
const Param<bool> kCrossScoring =
    boolean_param("cross_scoring", false, "compare scores across chunks, not ranks");

class LagKv final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "lagkv",
        .summary = "lag-relative spread of keys and values, chunk by chunk (attention-free)",
        .paper = "2504.04704",
        .code = "AI-Lab-China-Merchants-Bank/LagKV lag_kv.py",
        .kvpress = "LagKVPress",
        .budget = "sinks + the last chunks + the best-ranked of every chunk",
        .checked = kKvpressCheck,
        .params = {kSinks.spec, kLagSize.spec, kCrossScoring.spec},
        .needs = kNeedsValues,
        .budget_free = true};
    return info;
  }
  int64_t always_kept(const Params& params) const override { return params.get(kSinks); }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    const at::Tensor keys = view.keys.to(at::kFloat), values = view.values.to(at::kFloat);
    const int64_t kv_heads = keys.size(0), n = keys.size(1), d = keys.size(2);
    const int64_t sinks = params.get(kSinks);
    const int64_t lag = params.get(kLagSize);
    at::Tensor score = at::ones({kv_heads, n}, keys.options());
    if (n < sinks + 2 * lag) {  // too short for one scored chunk: the most recent tokens
      if (n > sinks) {
        score.narrow(1, sinks, n - sinks)
            .copy_((at::arange(n - sinks, keys.options()) / double(n - sinks)).unsqueeze(0));
      }
      return score;
    }
    const int64_t chunks = (n - sinks) / lag, end = sinks + chunks * lag;
    const auto chunk_scores = [&](const at::Tensor& states) {
      if (states.is_cpu()) {
        const at::Tensor dense = states.contiguous();
        at::Tensor out = at::empty({kv_heads, chunks - 1, lag}, dense.options());
        cpu::lag_chunk_scores(dense.data_ptr<float>(), kv_heads, n, d, sinks, chunks, lag,
                              out.data_ptr<float>());
        return out;
      }
      return chunk_scores_aten(
          states.narrow(1, sinks, end - sinks).reshape({kv_heads, chunks, lag, d}));
    };
    at::Tensor chunk = (chunk_scores(keys) + chunk_scores(values)) / 2;
    if (!params.get(kCrossScoring)) {
      // The rank within the chunk (0 for the lowest), / lag.
      chunk = chunk.argsort(/*stable=*/true, -1, false)
                  .argsort(/*stable=*/true, -1, false)
                  .to(at::kFloat) /
              double(lag);
    }
    score.narrow(1, sinks, (chunks - 1) * lag).copy_(chunk.reshape({kv_heads, -1}));
    return score;
  }
};

const LagKv method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
