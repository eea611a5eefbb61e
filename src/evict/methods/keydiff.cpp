// keydiff: keeps the keys least like the head's mean direction (Park et al., arXiv 2504.15364;
// kvpress's KeyDiffPress, the plain variant, not BlockPress's). With unit keys u_i = k_i / ||k_i||
// and the anchor m = mean over all n positions of u_j, s_i = -cos(k_i, m). No sink or window is
// protected.
#include <ATen/ATen.h>

#include "evict/method.h"

namespace kvs::evict {
namespace {

class KeyDiff final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "keydiff",
        .summary = "the keys least like the mean key direction (anchor cosine)",
        .paper = "2504.15364",
        .code = "NVIDIA/kvpress keydiff_press.py",
        .kvpress = "KeyDiffPress",
        .budget = "kept tokens (none protected)",
        .checked = kKvpressCheck,
        .budget_free = true};
    return info;
  }
  at::Tensor scores(const LayerView& view, const Params&) const override {
    const at::Tensor keys = view.keys.to(at::kFloat);
    // As torch's F.normalize (p = 2, eps 1e-12) and F.cosine_similarity, which kvpress calls.
    const at::Tensor unit = keys / keys.norm(2, {-1}, true).clamp_min(1e-12);
    const at::Tensor anchor = unit.mean(at::IntArrayRef{1}, true);  // [kv_heads, 1, d]
    return at::cosine_similarity(keys, anchor, -1).neg().contiguous();
  }
};

const KeyDiff method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
