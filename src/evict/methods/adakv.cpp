// adakv: head-wise budgets inside a layer (Feng et al., arXiv 2407.11550). A wrapper over any
// scoring policy (its "base"): the layer's KV heads share Hkv x B entries, so each head keeps its
// own count (a ragged cache, model/kv_cache.h). Two rules, named by "rule":
// - "kvpress" (kvpress 0.5.5's AdaKVPress): n_safe = int(alpha x B), at least 1 when alpha > 0;
//   each head's n_safe best base scores are forced (+inf), then the Hkv x B best scores over all
//   heads of the layer are kept (the Hkv x (n - B) lowest evicted).
// - "original" (FFY0/AdaKV's AdaptiveSnapKVCluster, without --normalize): c_h = head h's share of
//   the layer's Hkv x B best base scores; head h keeps its b_h best, b_h = c_h (1 - alpha) +
//   alpha x B rounded by largest remainder (floors, then +1 to the largest fractional parts, ties
//   to the lower head), so that the b_h sum to Hkv x B exactly (a plain round() can miss by a
//   few). B counts what the base always keeps (its window): those score +inf and are kept first.
// Ties in the layer's ranking go to the lower head, then the lower position (rank_top's rule).
// Each head then keeps what its base selects at its count: its best base scores, or, over a
// diverse (greedy) base, the greedy admission at that count (the paper's Global on AdaKV budgets).
// Over a window-statistics base the layer's total is Hkv x its schedule's layer budget (a
// pyramid base gives PyramidKV's layer budgets shared out head-wise, AdaKV's pyram_mode).
// While decoding (a decoding schedule) each head holds its own entries: the base scores each head
// over those alone (LayerView::head_entries), and every compression shares Hkv x target out again.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "evict/method.h"
#include "evict/topk_select.h"

namespace kvs::evict {
namespace {

const Param<double> kAlpha = number_param(
    "alpha", 0.2, 0.0, 1.0,
    "kvpress: share of B each head keeps by its own scores; original: the uniform budget's "
    "weight (floor)");
const Param<std::string> kRule =
    choice_param("rule", "kvpress", {"kvpress", "original"},
                 "kvpress (AdaKVPress) or original (the AdaKV paper's budget mix)");

// The layer's `count` best (head, position) pairs, as flat indices h * n + i, best first.
std::vector<int64_t> layer_top(const at::Tensor& scores, int64_t count) {
  const at::Tensor top = rank_top(scores.reshape({1, -1}), count).to(at::kCPU).contiguous();
  return std::vector<int64_t>(top.data_ptr<int64_t>(), top.data_ptr<int64_t>() + count);
}

// The entries each head holds: a ragged layer's (LayerView::head_entries), else all n.
std::vector<int64_t> held_entries(const LayerView& view, int64_t heads, int64_t n) {
  return view.head_entries.empty() ? std::vector<int64_t>(size_t(heads), n) : view.head_entries;
}

// kvpress's safeguard: each head's n_safe best scores set to +inf (never a ragged layer's padding,
// which the base scored -inf: a head holding fewer than n_safe has all its entries forced).
at::Tensor with_safeguard(const at::Tensor& base, int64_t budget, double alpha) {
  int64_t n_safe = static_cast<int64_t>(static_cast<double>(budget) * alpha);
  if (alpha > 0) n_safe = std::max<int64_t>(1, n_safe);
  n_safe = std::min(n_safe, base.size(1));
  at::Tensor s = base.clone();
  if (n_safe > 0) s.scatter_(1, select_topk(base, n_safe), std::numeric_limits<float>::infinity());
  return at::where(at::isneginf(base), base, s);
}

class AdaKv final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "adakv",
        .summary =
            "head-wise budgets: a base policy's scores, the layer's heads compete for Hkv x B",
        .paper = "2407.11550",
        .code = "NVIDIA/kvpress adakv_press.py; FFY0/AdaKV",
        .kvpress = "AdaKVPress",
        .budget =
            "mean kept tokens per KV head (heads differ, Hkv x B per layer), the base's "
            "kept included",
        .checked = kKvpressCheck,
        .params = {kAlpha.spec, kRule.spec},
        .wrapper = true,
        .allocates = true,
        .ragged = true};
    return info;
  }

  // The kvpress rule's scores (its safeguard forced); the original rule's are the base's.
  at::Tensor scores(const LayerView& view, const Params& params) const override {
    if (params.get(kRule) == "original") return view.base;
    return with_safeguard(view.base, view.budget, params.get(kAlpha));
  }

  // Each head's count by the rule, then the base's own selection at those counts (its top-k, or
  // the greedy admission of a diverse base: Global on AdaKV budgets).
  at::Tensor select(const LayerView& view, const Params& params) const override {
    const at::Tensor base = view.base.to(at::kFloat).cpu().contiguous();
    const int64_t heads = base.size(0), n = base.size(1), budget = std::min(view.budget, n);
    const double alpha = params.get(kAlpha);
    // The layer's share: Hkv x B, or every entry a ragged layer holds where that is fewer.
    const std::vector<int64_t> entries = held_entries(view, heads, n);
    const int64_t total =
        std::min(heads * budget, std::accumulate(entries.begin(), entries.end(), int64_t{0}));
    std::vector<int64_t> counts(static_cast<size_t>(heads), 0);
    if (params.get(kRule) == "kvpress") {
      for (int64_t flat : layer_top(with_safeguard(base, budget, alpha).contiguous(), total))
        ++counts[static_cast<size_t>(flat / n)];
      return view.base_select(counts);
    }
    for (int64_t flat : layer_top(base, total)) ++counts[static_cast<size_t>(flat / n)];
    std::vector<int64_t> b(counts.size());
    std::vector<double> fraction(counts.size());
    int64_t assigned = 0;
    for (size_t h = 0; h < counts.size(); ++h) {
      const double x = double(counts[h]) * (1.0 - alpha) + alpha * double(budget);
      b[h] = static_cast<int64_t>(std::floor(x));
      fraction[h] = x - std::floor(x);
      assigned += b[h];
    }
    std::vector<size_t> order(counts.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t c) { return fraction[a] > fraction[c]; });
    for (size_t i = 0; assigned < heads * budget && i < order.size(); ++i, ++assigned)
      ++b[order[i]];
    for (size_t h = 0; h < b.size(); ++h) b[h] = std::min(b[h], entries[h]);
    return view.base_select(b);
  }
};

const AdaKv method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
