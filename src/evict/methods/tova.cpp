// tova: the attention of the last prompt query (Oren et al., arXiv 2401.06104; kvpress's
// TOVAPress). a_h = softmax(q_h k^T / sqrt(d)) over all n keys for each query head h of the last
// position, averaged over ALL query heads (not per group): one score per layer, the same kept set
// for every KV head. The last position itself is always kept.
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "evict/method.h"

namespace kvs::evict {
namespace {

class Tova final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "tova",
        .summary = "the last query's attention, averaged over every query head",
        .paper = "2401.06104",
        .code = "schwartz-lab-NLP/TOVA src/tova_cache.py",
        .kvpress = "TOVAPress",
        .budget = "kept tokens, the last one included",
        .checked = kKvpressCheck,
        .needs = kNeedsLastQuery,
        .budget_free = true};
    return info;
  }
  at::Tensor scores(const LayerView& view, const Params&) const override {
    const at::Tensor keys = view.keys.to(at::kFloat), q = view.last_query.to(at::kFloat);
    const int64_t kv_heads = keys.size(0), n = keys.size(1), d = keys.size(2);
    const int64_t group = q.size(0) / kv_heads;
    // [kv_heads, group, n]: query head g * group + j reads KV head g.
    const at::Tensor logits =
        at::matmul(q.view({kv_heads, group, d}), keys.transpose(1, 2)) / std::sqrt(double(d));
    at::Tensor score =
        at::softmax(logits, -1).mean(at::IntArrayRef{0, 1});  // over all query heads: [n]
    score.narrow(0, n - 1, 1).fill_(std::numeric_limits<float>::infinity());
    return score.unsqueeze(0).expand({kv_heads, n}).contiguous();
  }
};

const Tova method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
