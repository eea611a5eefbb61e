// snapkv: the mean attention of the last W prompt queries, pooled along the tokens, top-k per
// head, the W window kept on top (Li et al., arXiv 2404.14469; KVCache-Factory's SnapKV, kvpress's
// SnapKVPress with kv_head granularity). Its score and schedule: window_scoring.h.
#include "evict/window_scoring.h"

namespace kvs::evict {
namespace {

class SnapKv final : public WindowMethod {
 public:
  bool greedy() const override { return false; }
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "snapkv",
        .summary = "mean attention of the last W queries, pooled; uniform budgets",
        .paper = "2404.14469",
        .code = "FasterDecoding/SnapKV; Zefan-Cai/KVCache-Factory",
        .kvpress = "SnapKVPress",
        .budget = "selected tokens + the W window",
        .checked = "tests/evict/test_select_reference.py, tests/evict/test_methods_vs_kvpress.py",
        .params = declared_params("uniform", false),
        .needs = kNeedsWindowQueries};
    return info;
  }
};

const SnapKv method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
