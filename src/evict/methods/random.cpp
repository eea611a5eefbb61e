// random: uniform random scores, the control every study needs (kvpress's RandomPress). s_i is a
// draw of U[0, 1) from a CPU generator seeded with `seed` at every layer, as kvpress seeds a fresh
// generator in each call: torch.rand over [kv_heads, n] in the same order, so the kept sets equal
// RandomPress(seed=S)'s on the CPU, and every layer keeps the same positions. No sink or window is
// protected.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "evict/method.h"

namespace kvs::evict {
namespace {

const Param<int64_t> kSeed = integer_param("seed", 0, 0, "the generator's seed, at every layer");

class Random final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{.name = "random",
                                 .summary = "uniform random scores (the control)",
                                 .paper = "kvpress's baseline",
                                 .code = "NVIDIA/kvpress random_press.py",
                                 .kvpress = "RandomPress",
                                 .budget = "kept tokens (none protected)",
                                 .checked = kKvpressCheck,
                                 .params = {kSeed.spec},
                                 .budget_free = true};
    return info;
  }
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    at::Generator generator =
        at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(params.get(kSeed)));
    const at::Tensor draw =
        at::rand({view.keys.size(0), view.keys.size(1)}, generator, at::TensorOptions(at::kFloat));
    return draw.to(view.keys.device());
  }
};

const Random method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
