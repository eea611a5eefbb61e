// streaming_llm: the first n_sink positions (attention sinks) and the most recent ones, the same
// for every head and layer (Xiao et al., arXiv 2309.17453; kvpress's StreamingLLMPress). Scored as
// +infinity for the sinks and the position itself elsewhere, so the B best are the n_sink sinks
// and the last B - n_sink tokens. Positions continue from the prompt length (no re-rotation), as
// in kvpress.
#include <ATen/ATen.h>

#include <limits>

#include "evict/method.h"

namespace kvs::evict {
namespace {

const Param<int64_t> kSinks = integer_param("n_sink", 4, 0, "leading positions always kept");

class StreamingLlm final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{.name = "streaming_llm",
                                 .summary = "attention sinks and a recent window",
                                 .paper = "2309.17453",
                                 .code = "mit-han-lab/streaming-llm",
                                 .kvpress = "StreamingLLMPress",
                                 .budget = "sinks + recent tokens",
                                 .checked = kKvpressCheck,
                                 .params = {kSinks.spec},
                                 .budget_free = true};
    return info;
  }
  int64_t always_kept(const Params& params) const override { return params.get(kSinks); }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    const int64_t kv_heads = view.keys.size(0), n = view.keys.size(1);
    const int64_t sinks = std::min<int64_t>(params.get(kSinks), n);
    at::Tensor score = at::arange(n, view.keys.options().dtype(at::kFloat));
    score.narrow(0, 0, sinks).fill_(std::numeric_limits<float>::infinity());
    return score.unsqueeze(0).expand({kv_heads, n}).contiguous();
  }
};

const StreamingLlm method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
