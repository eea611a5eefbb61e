// cake: layer budgets from each layer's attention dispersion and shift, and a variance-aware token
// indicator (Qin et al., CAKE, arXiv 2503.12491, ICLR 2025; reference antgroup/cakekv,
// cake/model/modify_llama.py, cake/cake_cache.py, cake/utils.py; not in kvpress).
// From the last W window queries' attention A (the softmax over all n keys in float32, causal
// inside the window, per query head) cut to the prefix columns i < n - W:
//   indicator  I_i = mean_t A[t, i] + gamma Var_t A[t, i] (unbiased over the W rows), average-
//              pooled (kernel 5, zero padding counted), then the mean over each KV head's group;
//   preference P_l = H_l^(1/tau1) V_l^(1/tau2), H_l = -sum A log(A + 1e-10) (every head, row and
//              prefix column), V_l = sum over heads and columns of Var_t A[t, i].
// Layer budgets (prefix part): T = (B - W) L, b_l = int(P_l / sum P x T), then cakekv's
// adjust_budgets: each b_l capped at n - W, the excess spread evenly over the uncapped layers (the
// remainder to the lowest layers), then the sum corrected to T the same way. Layer l keeps its
// b_l best indicators plus the W window. B is the mean over layers of the entries a KV head keeps.
// As the reference (cake_cache.py), a prompt of at most B + W tokens is kept whole (B counting the
// window, so up to W entries more than B per head). tau1 = tau2 = 1 is the reference's fallback;
// its per-model values are in the card. The prefill holds each layer's best min(n, W + T)
// candidates until every preference is known.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/strfmt.h"
#include "cpu/window_dispersion.h"
#include "evict/method.h"

namespace kvs::evict {
namespace {

const Param<int64_t> kWindow =
    integer_param("window", 32, 2, "observation window W (>= 2: a variance over its rows), kept");
const Param<double> kGamma =
    number_param("gamma", 200, 0, "weight of the variance in the token indicator");
const Param<double> kTau1 = number_param("tau1", 1, 1e-3,
                                         "entropy temperature (cakekv's model2tau.json: "
                                         "mistral-0.3-7b 0.8 at B = 1024, 1.0 at 128; llama3.1-8b "
                                         "1.6)");
const Param<double> kTau2 = number_param("tau2", 1, 1e-3,
                                         "variance temperature (mistral-0.3-7b 0.5 at B = 1024, "
                                         "0.8 at 128; llama3.1-8b 0.4 / 0.6)");

// [heads, W, n]: the window rows' scaled scores over every key, row t seeing the window columns
// j <= t (-inf beyond).
at::Tensor window_logits(const LayerView& view) {
  const at::Tensor keys = view.keys, queries = view.window_queries;
  const int64_t heads = queries.size(0), window = queries.size(1), d = queries.size(2);
  const int64_t kv_heads = keys.size(0), n = keys.size(1), group = heads / kv_heads;
  at::Tensor logits =
      at::matmul(queries.reshape({kv_heads, group * window, d}), keys.transpose(1, 2))
          .view({heads, window, n}) /
      std::sqrt(double(d));
  const at::Tensor future = at::ones({window, window}, keys.options().dtype(at::kBool)).triu(1);
  logits.narrow(2, n - window, window)
      .masked_fill_(future, -std::numeric_limits<float>::infinity());
  return logits;
}

// The indicator [heads, n - W] and the layer's entropy and variance sums: on the CPU from
// cpu::window_dispersion, elsewhere (and as its reference) in ATen.
at::Tensor window_indicator(const LayerView& view, double gamma, cpu::WindowDispersion& sums) {
  const at::Tensor logits = window_logits(view);
  const at::Tensor attention = at::softmax(logits, -1);
  const int64_t heads = logits.size(0), window = logits.size(1), n = logits.size(2);
  if (attention.is_cpu()) {  // float32, as every LayerView tensor
    at::Tensor indicator = at::empty({heads, n - window}, attention.options());
    sums = cpu::window_dispersion(attention.data_ptr<float>(), logits.data_ptr<float>(), heads,
                                  window, n, gamma, indicator.data_ptr<float>());
    return indicator;
  }
  const at::Tensor a = attention.narrow(2, 0, n - window);
  const at::Tensor variance = a.var(1, /*unbiased=*/true);
  sums.entropy = -(a * at::log(a + 1e-10)).sum().item<double>();
  sums.variance = variance.sum().item<double>();
  return a.mean(1) + gamma * variance;
}

// cakekv's adjust_budgets(budgets, total, cap): the caps' excess spread, then the sum made total.
std::vector<int64_t> adjust_budgets(std::vector<int64_t> b, int64_t total, int64_t cap) {
  const auto spread = [&](int64_t amount, const std::vector<size_t>& layers, int sign) {
    if (layers.empty()) return;
    const int64_t each = amount / int64_t(layers.size()), rest = amount % int64_t(layers.size());
    for (size_t j = 0; j < layers.size(); ++j) b[layers[j]] += sign * (each + (int64_t(j) < rest));
  };
  int64_t excess = 0;
  for (int64_t& x : b) {
    excess += std::max<int64_t>(x - cap, 0);
    x = std::min(x, cap);
  }
  std::vector<size_t> below;
  for (size_t l = 0; l < b.size(); ++l)
    if (b[l] < cap) below.push_back(l);
  if (excess > 0) spread(excess, below, +1);
  int64_t sum = 0;
  for (int64_t x : b) sum += x;
  const int64_t diff = total - sum;
  std::vector<size_t> valid;
  for (size_t l = 0; l < b.size(); ++l)
    if (diff > 0 ? b[l] < cap : b[l] > 1) valid.push_back(l);
  if (diff != 0) spread(std::abs(diff), valid, diff > 0 ? +1 : -1);
  return b;
}

class Cake final : public Method {
 public:
  const MethodInfo& info() const override {
    static const MethodInfo info{
        .name = "cake",
        .summary =
            "layer budgets from attention entropy and variance; mean + gamma variance of the "
            "window",
        .paper = "2503.12491",
        .code = "antgroup/cakekv cake/model/modify_llama.py, cake/utils.py",
        .budget =
            "mean over layers of the kept tokens per KV head (layers differ), the W window "
            "included",
        .checked = "tests/evict/test_allocators_reference.py",
        .params = {kWindow.spec, kGamma.spec, kTau1.spec, kTau2.spec},
        .needs = kNeedsWindowQueries,
        .layer_budgets = true};
    return info;
  }

  int64_t observation_window(const Params& params) const override { return params.get(kWindow); }
  int64_t always_kept(const Params& params) const override { return params.get(kWindow); }
  // The reference compresses only a prompt longer than B + W.
  bool keeps_whole(int64_t n, int64_t budget, int64_t, const Params& params) const override {
    return n <= budget + params.get(kWindow);
  }

  at::Tensor scores(const LayerView& view, const Params& params) const override {
    return layer_scores(view, params).scores;
  }

  // The indicator and the preference from one window attention.
  LayerScores layer_scores(const LayerView& view, const Params& params) const override {
    cpu::WindowDispersion sums;
    const at::Tensor indicator = window_indicator(view, params.get(kGamma), sums);
    const int64_t heads = indicator.size(0), prefix = indicator.size(1);
    const int64_t kv_heads = view.keys.size(0), n = view.keys.size(1);
    const at::Tensor pooled =
        at::avg_pool1d(indicator.unsqueeze(0), {5}, {1}, {2}, false, true).squeeze(0);
    LayerScores out;
    out.scores =
        at::full({kv_heads, n}, std::numeric_limits<float>::infinity(), view.keys.options());
    out.scores.narrow(1, 0, prefix)
        .copy_(pooled.view({kv_heads, heads / kv_heads, prefix}).mean(1));
    out.preference = std::pow(sums.entropy, 1.0 / params.get(kTau1)) *
                     std::pow(sums.variance, 1.0 / params.get(kTau2));
    return out;
  }

  std::vector<int64_t> allocate_layers(const std::vector<double>& preferences, int64_t n,
                                       int64_t budget, const Params& params) const override {
    const int64_t window = params.get(kWindow);
    const int64_t layers = static_cast<int64_t>(preferences.size());
    const int64_t total = (budget - window) * layers;
    double sum = 0;
    for (double p : preferences) sum += p;
    std::vector<int64_t> b;
    for (double p : preferences) {
      // A degenerate layer set (no finite positive preference) falls back to uniform budgets.
      const double share = std::isfinite(sum) && sum > 0 ? p / sum : 1.0 / double(layers);
      b.push_back(static_cast<int64_t>(share * double(total)));
    }
    b = adjust_budgets(std::move(b), total, n - window);
    for (int64_t& x : b) x = std::clamp<int64_t>(x, 0, n - window) + window;
    return b;
  }

  int64_t layer_budget_cap(int64_t n, int64_t budget, int64_t num_layers,
                           const Params& params) const override {
    const int64_t window = params.get(kWindow);
    return std::min(n, window + (budget - window) * num_layers);
  }
};

const Cake method;
const MethodRegistration registration(method);

}  // namespace
}  // namespace kvs::evict
