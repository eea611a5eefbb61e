// diverse: the paper's score (Beyond Mean Attention): s = mu + lambda1 sigma from the window
// statistics, admitted greedily by s~ + lambda2 corr(i, S) (MMR over the top candidate_factor x B
// tokens, greedy_select.h), lambda1 and lambda2 as profiles over depth (Global, Segments, Curve
// under sinh), on PyramidKV's schedule by default. Its score and schedule: window_scoring.h.
#include "evict/window_scoring.h"

namespace kvs::evict {
namespace {

class Diverse final : public WindowMethod {
 public:
  bool greedy() const override { return true; }
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "diverse",
        .summary =
            "the paper's mu + lambda1 sigma + lambda2 corr(i, S), greedy MMR admission, "
            "lambda profiles",
        .paper = "Beyond Mean Attention (this paper)",
        .code = "kvsearch",
        .budget = "selected tokens + the W window",
        .checked = "tests/evict/test_select_reference.py",
        .params = declared_params("pyramid", true),
        .needs = kNeedsWindowQueries};
    return info;
  }
};

const Diverse method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
