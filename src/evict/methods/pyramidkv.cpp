// pyramidkv: SnapKV's score on PyramidKV's linear per-layer budgets, its floor divisions included
// (Cai et al., arXiv 2406.02069; KVCache-Factory's schedule, not kvpress's PyramidKVPress). Its
// score and schedule: window_scoring.h.
#include "evict/window_scoring.h"

namespace kvs::evict {
namespace {

class PyramidKv final : public WindowMethod {
 public:
  bool greedy() const override { return false; }
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "pyramidkv",
        .summary = "SnapKV's score on PyramidKV's linear per-layer budgets",
        .paper = "2406.02069",
        .code =
            "Zefan-Cai/KVCache-Factory pyramidkv_utils.py (its schedule, not kvpress's "
            "PyramidKVPress)",
        .budget = "selected tokens + the W window (mean over layers)",
        .checked = "tests/evict/test_select_reference.py",
        .params = declared_params("pyramid", false),
        .needs = kNeedsWindowQueries};
    return info;
  }
};

const PyramidKv method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
