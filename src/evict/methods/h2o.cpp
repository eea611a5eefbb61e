// h2o: heavy hitters and the recent window (Zhang et al., arXiv 2306.14048; FMInference/H2O's
// H2OKVCache_LayerWise). A key's score is the attention every query so far paid it, summed (H2O's
// plain sum, not kvpress's per-query normalisation), averaged over each KV head's group; the
// last round(recent_share * B) entries are always kept (the recent window) and the best of the
// others fill the budget. After a prefill the sum runs over the prompt's queries; while decoding
// (its native rule: {"decoding": {"interval": 1, "target": B}}, one eviction per step) the
// decode-time cache adds every decoded query's attention to it (search/decode_time.h).
#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "evict/method.h"

namespace kvs::evict {
namespace {

const Param<double> kRecentShare = number_param(
    "recent_share", 0.5, 0.0, 1.0,
    "the share of the budget kept as the most recent entries (H2O's recent_ratio / (heavy_ratio + "
    "recent_ratio); 0.5 in its scripts)");

int64_t recent_count(int64_t budget, const Params& params) {
  return static_cast<int64_t>(std::llround(double(budget) * params.get(kRecentShare)));
}

class H2o final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "h2o",
        .summary = "attention summed over every query so far, plus the recent window",
        .paper = "2306.14048",
        .code = "FMInference/H2O h2o_hf/utils_real_drop (H2OKVCache_LayerWise)",
        .kvpress = "",
        .budget = "heavy hitters + the round(recent_share x B) most recent",
        .checked = "tests/decode/test_native_rules.py",
        .params = {kRecentShare.spec},
        .needs = kNeedsColumnSums};
    return info;
  }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    const int64_t kv_heads = view.keys.size(0), n = view.keys.size(1);
    at::Tensor s = view.column_sums.view({kv_heads, -1, n}).mean(1).contiguous();  // [kv, n]
    const int64_t recent = std::min(recent_count(view.budget, params), n);
    if (recent > 0) s.narrow(1, n - recent, recent).fill_(std::numeric_limits<float>::infinity());
    return s;
  }
};

const H2o method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
