// observed_attention: the attention every prompt query paid each key (H2O, Zhang et al., arXiv
// 2306.14048; kvpress's ObservedAttentionPress). Per query head, c_i = sum over queries t >= i of
// a(t, i); kvpress divides by the n - i queries that see key i (normalize, the default), H2O's own
// code keeps the plain sum (normalize false), which favours early keys. Averaged over each KV
// head's group. No sink or window is protected. The prefill sums the columns in blocks of query
// rows (model/attention.h): one more Q K^T sweep, never the n x n matrix kvpress's eager
// attention holds.
#include <ATen/ATen.h>

#include "evict/method.h"

namespace kvs::evict {
namespace {

class ObservedAttention final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info = budget_free(method_info(
        "observed_attention", "the attention every prompt query paid each key (H2O)", "2306.14048",
        "FMInference/H2O; NVIDIA/kvpress observed_attention_press.py", "ObservedAttentionPress",
        "kept tokens (none protected)", kKvpressCheck,
        {boolean_param("normalize", true,
                       "divide key i's sum by the n - i queries that see it (kvpress); false: "
                       "H2O's unnormalised sum")},
        kNeedsColumnSums));
    return info;
  }
  at::Tensor scores(const LayerView& view, const MethodParams& params) const override {
    const int64_t kv_heads = view.keys.size(0), n = view.keys.size(1);
    at::Tensor sums = view.column_sums;  // [heads, n]
    if (params.at("normalize") != 0.0)
      sums = sums / at::arange(n, 0, -1, sums.options());  // n - i queries see key i
    return sums.view({kv_heads, -1, n}).mean(1).contiguous();
  }
};

const ObservedAttention method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
