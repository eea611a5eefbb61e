// knorm: keeps the keys of lowest L2 norm (Devoto et al., arXiv 2406.11430; kvpress's KnormPress,
// which takes the norm in float32 since 0.5.5). s_i = -||k_i||; no sink or window is protected.
#include <ATen/ATen.h>

#include "evict/method.h"

namespace kvs::evict {
namespace {

class Knorm final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{.name = "knorm",
                                 .summary = "the keys of lowest L2 norm",
                                 .paper = "2406.11430",
                                 .code = "NVIDIA/kvpress knorm_press.py",
                                 .kvpress = "KnormPress",
                                 .budget = "kept tokens (none protected)",
                                 .checked = kKvpressCheck,
                                 .budget_free = true};
    return info;
  }
  at::Tensor scores(const LayerView& view, const Params&) const override {
    return view.keys.to(at::kFloat).norm(2, {-1}).neg().contiguous();
  }
};

const Knorm method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
