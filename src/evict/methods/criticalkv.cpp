// criticalkv: rescores any scoring policy by how much each entry can move the attention output
// (Feng et al., arXiv 2502.03805; kvpress's CriticalKVPress). With the base policy's scores s and
// the budget B: stage 1 keeps the floor(first_stage_ratio x B) best by s (at least one); stage 2
// scores every entry s'_i = (s_i + epsilon) N_i, N_i = the mean over the KV head's group of
// ||v_i W_o^(h)||_1 (W_o^(h): the d x hidden slice of o_proj for query head h), and the rest of
// the budget goes to the best s'. A wrapper: {"method": "criticalkv", "base": {policy}}.
#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "evict/method.h"
#include "evict/topk_select.h"

namespace kvs::evict {
namespace {

// Rows of values projected at a time: bounds the [rows, hidden] product per head.
constexpr int64_t kProjectedRows = 4096;

// N [kv_heads, n]: the group mean of the L1 norm of each value through its head's o_proj slice.
at::Tensor projected_value_norms(const at::Tensor& values, const at::Tensor& o_proj) {
  const int64_t kv_heads = values.size(0), n = values.size(1), d = values.size(2);
  const int64_t heads = o_proj.size(1) / d, group = heads / kv_heads;
  const at::Tensor slices = o_proj.t().reshape({heads, d, o_proj.size(0)});  // [heads, d, hidden]
  at::Tensor norms = at::empty({heads, n}, values.options());
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t r0 = 0; r0 < n; r0 += kProjectedRows) {
      const int64_t rows = std::min(kProjectedRows, n - r0);
      norms[h]
          .narrow(0, r0, rows)
          .copy_(at::matmul(values[h / group].narrow(0, r0, rows), slices[h]).abs().sum(-1));
    }
  }
  return norms.view({kv_heads, group, n}).mean(1);
}

const Param<double> kEpsilon =
    number_param("epsilon", 1e-4, 0.0, "added to the base score before weighting");
const Param<double> kFirstStageRatio = number_param(
    "first_stage_ratio", 0.5, 0.0, "share of B kept by the base score alone (stage 1)");

class CriticalKv final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "criticalkv",
        .summary = "a base policy's scores weighted by the value's output-projection L1 norm",
        .paper = "2502.03805",
        .code = "NVIDIA/kvpress criticalkv_press.py",
        .kvpress = "CriticalKVPress",
        .budget = "kept tokens, those the base always keeps included",
        .checked = kKvpressCheck,
        .params = {kEpsilon.spec, kFirstStageRatio.spec},
        .needs = kNeedsValues | kNeedsOutputProjection,
        .wrapper = true};
    return info;
  }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    const double ratio = params.get(kFirstStageRatio);
    // The norms depend on the layer's values and o_proj alone: one computation for every
    // criticalkv policy of the batch (its budgets, bases and epsilons).
    const auto norms = [&] { return projected_value_norms(view.values, view.output_projection); };
    at::Tensor s =
        (view.base + params.get(kEpsilon)) * view.shared("criticalkv value norms", norms);
    const int64_t first = ratio > 0 ? std::max<int64_t>(1, int64_t(view.budget * ratio)) : 0;
    if (first > 0) {
      const at::Tensor stage1 = select_topk(view.base, std::min(first, view.base.size(1)));
      s.scatter_(1, stage1, std::numeric_limits<float>::infinity());
    }
    return s;
  }
};

const CriticalKv method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
