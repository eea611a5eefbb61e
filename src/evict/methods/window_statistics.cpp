// The window-statistics methods: SnapKV, PyramidKV and the paper's diverse score. They are scored
// from the attention statistics of the last W prompt queries (window_stats.h, score.h) and keep
// the W window on top of their selection; their settings are Policy's fields (policy.h), which
// these entries list for `kvsearch methods`.
#include "evict/method.h"

namespace kvs::evict {
namespace {

using Type = MethodParam::Type;

// The fields every window-statistics method takes, with Policy's defaults.
std::vector<MethodParam> window_params(std::vector<MethodParam> own) {
  std::vector<MethodParam> params = {
      {"window", Type::Integer, "8", 1, "observation window W: the last W prompt tokens, kept"},
      {"kernel", Type::Integer, "7", 1, "pooling kernel along the tokens (odd)"},
      {"pooling", Type::Text, "\"max\"", 0, "max, avg (kvpress's, zero padding counted) or none"},
      {"granularity", Type::Text, "\"query_head\"", 0,
       "query_head (K/V repeated per query head) or kv_head (kvpress's)"},
      {"group_reduce", Type::Text, "\"mean\"", 0, "kv_head: mean or max over the group"},
      {"beta", Type::Integer, "20", 1, "pyramid: the smallest layer selects (B - W) / beta"},
      {"redistribute", Type::Boolean, "false", 0, "pyramid: total equal to the uniform one"}};
  params.insert(params.end(), own.begin(), own.end());
  return params;
}

class WindowMethod final : public Method {
 public:
  explicit WindowMethod(MethodInfo info) : info_(std::move(info)) {}
  const MethodInfo& info() const override { return info_; }

 private:
  MethodInfo info_;
};

const WindowMethod snapkv(MethodInfo{
    "snapkv", "mean attention of the last W queries, pooled; uniform budgets", "2404.14469",
    "FasterDecoding/SnapKV; Zefan-Cai/KVCache-Factory", "SnapKVPress",
    "selected tokens + the W window",
    "tests/evict/test_select_reference.py, tests/evict/test_methods_vs_kvpress.py",
    window_params({{"schedule", Type::Text, "\"uniform\"", 0, "uniform or pyramid budgets"}}),
    kNeedsWindowQueries, true});
const WindowMethod pyramidkv(MethodInfo{
    "pyramidkv", "SnapKV's score on PyramidKV's linear per-layer budgets", "2406.02069",
    "Zefan-Cai/KVCache-Factory pyramidkv_utils.py (its schedule, not kvpress's PyramidKVPress)", "",
    "selected tokens + the W window (mean over layers)", "tests/evict/test_select_reference.py",
    window_params({{"schedule", Type::Text, "\"pyramid\"", 0, "uniform or pyramid budgets"}}),
    kNeedsWindowQueries, true});
const WindowMethod diverse(MethodInfo{
    "diverse",
    "the paper's mu + lambda1 sigma + lambda2 corr(i, S), greedy MMR admission, lambda profiles",
    "Beyond Mean Attention (this paper)", "kvsearch", "", "selected tokens + the W window",
    "tests/evict/test_select_reference.py",
    window_params({{"lambda1", Type::Profile, "{\"profile\": \"global\", \"a\": [0.0]}", 0,
                    "dispersion coefficient: a profile (global, segments, curve) over depth"},
                   {"lambda2", Type::Profile,
                    "{\"profile\": \"global\", \"a\": [-0.14944312018495765]}", 0,
                    "redundancy coefficient, a profile as lambda1 (default: lambda2 = -0.15)"},
                   {"schedule", Type::Text, "\"pyramid\"", 0, "uniform or pyramid budgets"},
                   {"candidate_factor", Type::Integer, "4", 1,
                    "greedy candidates: the top factor x B_sel tokens"}}),
    kNeedsWindowQueries, true});

const MethodRegistration snapkv_registration(snapkv);
const MethodRegistration pyramidkv_registration(pyramidkv);
const MethodRegistration diverse_registration(diverse);

}  // namespace
}  // namespace kvs::evict
