// mixkv: a head-wise mix of importance and key diversity (Liu et al., MixKV, arXiv 2510.20707;
// reference xuyang-liu16/MixKV mixkv/mixkv_utils.py, method "headwisemixkv"; not in kvpress).
// Per KV head, over the prefix i < n - W:
//   A_i  SnapKV's window attention: the W rows' full-row softmax (causal inside the window), the
//        mean over the rows, the mean over the group's query heads, average-pooled (kernel, zero
//        padding counted);
//   D_i  key diversity: -u_i . m, u = k / ||k||, m = the mean of all n unit keys; min-max
//        normalised (+1e-8), rescaled to A's mean: D * mean(A) / (mean(D) + 1e-8);
//   V_i  the value norm ||v_i||, min-max normalised and rescaled the same way (the reference has no
//        epsilon there: a head whose values all have one norm gets V = 0 here, not NaN);
//   r    the head's redundancy, the exact mean pairwise cosine of its keys (n ||m||^2 - 1) /
//        (n - 1), computed online (the reference loads offline values measured on Qwen2-VL);
//   s_i = r D_i + (1 - r) (A_i + V_i).
// Host "snapkv": each KV head keeps its B - W best plus the W window. Host "adakv" (the reference's
// AdaKVCluster): head budgets from A alone, c_h = head h's share of the layer's Hkv (B - W) best
// of A (each head's sorted A weighted by its top-(B - W) mass share when normalize is set), b_h =
// round(c_h (1 - alpha) + int(alpha (B - W))) (half to even, as torch.round); head h keeps its
// b_h best s plus the window (heads differ: a ragged cache). While decoding, a head-wise cache's
// heads are scored each over its own entries (A, D, V, r from its keys and values alone).
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "evict/method.h"
#include "evict/topk_select.h"
#include "evict/window_scoring.h"

namespace kvs::evict {
namespace {

const Param<int64_t> kWindow = integer_param("window", 32, 1, "observation window W, always kept");
const Param<int64_t> kKernel =
    integer_param("kernel", 5, 1, "average-pooling kernel of the importance");
const Param<std::string> kHost =
    choice_param("host", "snapkv", {"snapkv", "adakv"},
                 "snapkv (uniform budgets) or adakv (head budgets from the importance)");
const Param<double> kAlpha =
    number_param("alpha", 0.2, 0.0, 1.0, "host adakv: the uniform budget's weight (floor)");
const Param<bool> kNormalize = boolean_param(
    "normalize", true, "host adakv: weigh each head's sorted importance by its top mass share");

// (x - min) / (max - min + eps) per row, then rescaled to the mean of `like`'s row.
at::Tensor normalised(const at::Tensor& x, const at::Tensor& like, double eps) {
  const at::Tensor low = x.amin(-1, true), high = x.amax(-1, true);
  at::Tensor unit = (x - low) / (high - low + eps);
  if (eps == 0) unit = at::where(high > low, unit, at::zeros_like(unit));
  return unit * (like.mean(-1, true) / (unit.mean(-1, true) + 1e-8));
}

// [kv_heads, n - W]: the SnapKV importance A (from the layer's shared window statistics).
at::Tensor importance(const LayerView& view, int64_t kernel) {
  const WindowStats& stats = shared_window_stats(view);
  const int64_t kv_heads = view.keys.size(0), m = stats.scorable();
  const at::Tensor grouped = stats.mu.view({kv_heads, stats.heads() / kv_heads, m}).mean(1);
  if (kernel <= 1) return grouped;
  return at::avg_pool1d(grouped.unsqueeze(0), {kernel}, {1}, {kernel / 2}, false, true).squeeze(0);
}

// Host adakv's budgets: per KV head, the entries its importance earns in the layer's Hkv x base
// best (each head's sorted importance weighted by its top-`base` mass share when normalize is
// set), b_h = round(c_h (1 - alpha) + int(alpha x base)). importance[h]: head h's importance over
// its prefix (heads of a ragged layer hold prefixes of different lengths).
std::vector<int64_t> host_budgets(const std::vector<at::Tensor>& importance, int64_t base,
                                  double alpha, bool normalize) {
  int64_t longest = 0, held = 0;
  for (const at::Tensor& a : importance) longest = std::max(longest, a.numel()), held += a.numel();
  const auto heads = int64_t(importance.size());
  at::Tensor sorted = at::full({heads, longest}, -std::numeric_limits<float>::infinity(),
                               importance.front().options());
  for (int64_t h = 0; h < heads; ++h) {
    const at::Tensor& a = importance[size_t(h)];
    if (a.numel() == 0) continue;
    at::Tensor row = std::get<0>(a.reshape({-1}).sort(-1, /*descending=*/true));
    if (normalize) row = row * (row.narrow(0, 0, std::min(base, row.numel())).sum() / row.sum());
    sorted[h].narrow(0, 0, row.numel()).copy_(row);
  }
  const at::Tensor top =
      rank_top(sorted.reshape({1, -1}).contiguous(), std::min(heads * base, held));
  const at::Tensor counts =
      at::bincount(top.reshape({-1}).div(longest, "floor"), {}, heads).to(at::kDouble);
  const double floor_capacity = double(static_cast<int64_t>(double(base) * alpha));
  const at::Tensor budgets =
      at::round(counts * (1 - alpha) + floor_capacity).to(at::kLong).to(at::kCPU).contiguous();
  return std::vector<int64_t>(budgets.data_ptr<int64_t>(), budgets.data_ptr<int64_t>() + heads);
}

class MixKv final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "mixkv",
        .summary =
            "per head, key diversity mixed with attention + value norm by the head's key "
            "redundancy",
        .paper = "2510.20707",
        .code = "xuyang-liu16/MixKV mixkv/mixkv_utils.py (headwisemixkv)",
        .budget = "selected tokens + the W window (host adakv: the mean over KV heads)",
        .checked = "tests/evict/test_mixkv_reference.py",
        .params = {kWindow.spec, kKernel.spec, kHost.spec, kAlpha.spec, kNormalize.spec},
        .needs = kNeedsWindowQueries | kNeedsValues,
        .ragged = true};
    return info;
  }

  int64_t observation_window(const Params& params) const override { return params.get(kWindow); }
  int64_t always_kept(const Params& params) const override { return params.get(kWindow); }
  // Its window statistics are the layer's shared ones: shared with the paper's methods' batch.
  void prepare(const LayerView& view, const Params&) const override { shared_window_stats(view); }

  at::Tensor scores(const LayerView& view, const Params& params) const override {
    return mixed(view, importance(view, params.get(kKernel)));
  }

  // A ragged layer (its decode-time cache, host adakv) scores each KV head over its own entries.
  at::Tensor select(const LayerView& view, const Params& params) const override {
    const bool ragged = !view.head_entries.empty();
    std::vector<at::Tensor> a, s;  // per KV head: the importance over its prefix, its scores
    if (ragged) {
      for (size_t h = 0; h < view.head_entries.size(); ++h) {
        const LayerView head = view.head_view(int64_t(h));
        a.push_back(importance(head, params.get(kKernel)).contiguous());
        s.push_back(mixed(head, a.back()).contiguous());
      }
    } else {
      const at::Tensor all = importance(view, params.get(kKernel)).contiguous();
      const at::Tensor scored = mixed(view, all).contiguous();
      if (params.get(kHost) == "snapkv") return select_topk(scored, view.budget);
      a = all.split(1), s = scored.split(1);
    }
    const int64_t window = view.window_queries.size(1), n = view.keys.size(1);
    std::vector<int64_t> counts(s.size(), view.budget);
    if (params.get(kHost) == "adakv") {
      counts = host_budgets(a, view.budget - window, params.get(kAlpha), params.get(kNormalize));
      for (int64_t& c : counts) c += window;
    }
    std::vector<at::Tensor> rows;
    for (size_t h = 0; h < s.size(); ++h) {
      const int64_t held = s[h].size(1), count = std::min(counts[h], held);
      rows.push_back(select_topk(s[h], count).reshape({-1}) + (n - held));
    }
    return pad_ragged(rows, s.front().options());
  }

 private:
  // [kv_heads, n]: s over the prefix from the importance a, the window +infinity.
  static at::Tensor mixed(const LayerView& view, const at::Tensor& a) {
    const int64_t kv_heads = view.keys.size(0), n = view.keys.size(1);
    const int64_t prefix = n - view.window_queries.size(1);
    const at::Tensor unit = view.keys / view.keys.norm(2, {-1}, true).clamp_min(1e-12);
    const at::Tensor mean = unit.sum(1, true) / double(n);  // [kv_heads, 1, d]
    const at::Tensor similarity = at::matmul(unit.narrow(1, 0, prefix), mean.transpose(1, 2));
    const at::Tensor diversity = normalised(-similarity.squeeze(-1), a, 1e-8);
    const at::Tensor value_norm = normalised(view.values.narrow(1, 0, prefix).norm(2, {-1}), a, 0);
    const at::Tensor r = (double(n) * mean.squeeze(1).pow(2).sum(-1, true) - 1) / double(n - 1);
    at::Tensor score =
        at::full({kv_heads, n}, std::numeric_limits<float>::infinity(), view.keys.options());
    score.narrow(1, 0, prefix).copy_(r * diversity + (1 - r) * (a + value_norm));
    return score;
  }
};

const MixKv method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
