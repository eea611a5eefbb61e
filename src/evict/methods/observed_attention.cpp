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

const Param<bool> kNormalize = boolean_param(
    "normalize", true,
    "divide key i's sum by the n - i queries that see it (kvpress); false: H2O's unnormalised sum");

class ObservedAttention final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "observed_attention",
        .summary = "the attention every prompt query paid each key (H2O)",
        .paper = "2306.14048",
        .code = "FMInference/H2O; NVIDIA/kvpress observed_attention_press.py",
        .kvpress = "ObservedAttentionPress",
        .budget = "kept tokens (none protected)",
        .checked = kKvpressCheck,
        .params = {kNormalize.spec},
        .needs = kNeedsColumnSums,
        .budget_free = true};
    return info;
  }
  // While decoding the column sums run over every query seen (decode_time.h); the normalisation
  // counts the queries that saw key i by its index, which a compressed cache no longer tells.
  std::string decoding_refusal(const Params& params) const override {
    if (!params.get(kNormalize)) return "";
    return "observed_attention divides key i's sum by the n - i queries after it, counted by "
           "index; set \"normalize\": false (H2O's plain sum) or use h2o";
  }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    const int64_t kv_heads = view.keys.size(0), n = view.keys.size(1);
    at::Tensor sums = view.column_sums;  // [heads, n]
    if (params.get(kNormalize))
      sums = sums / at::arange(n, 0, -1, sums.options());  // n - i queries see key i
    return sums.view({kv_heads, -1, n}).mean(1).contiguous();
  }
};

const ObservedAttention method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
