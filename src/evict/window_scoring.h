// The window-statistics methods' common part: SnapKV, PyramidKV and the paper's diverse score are
// scored from the attention statistics of their last W prompt queries (window_stats.h, computed
// once per layer and window for every policy of a batch), by s = mu + lambda1 sigma (score.h),
// with a layer schedule (budget.h: uniform or PyramidKV's) and lambda profiles over depth
// (profile.h); each keeps its W window on top of what its selector chooses: top-k (snapkv,
// pyramidkv) or the greedy admission (diverse, greedy_select.h). Each method's file states its
// card and its selector. Their parameters: window_params.h.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>

#include "evict/method.h"
#include "evict/window_params.h"
#include "evict/window_stats.h"

namespace kvs::evict {

class WindowMethod : public Method {
 public:
  // true: the greedy admission (MMR) chooses; false: top-k.
  virtual bool greedy() const = 0;

  // The base scores [cache_heads, n] with the W window at +infinity.
  at::Tensor scores(const LayerView& view, const Params& params) const override;
  // The layer's schedule budget: its selector's choice from [0, n - W), then the window.
  at::Tensor select(const LayerView& view, const Params& params) const override;
  // counts[h] - W chosen by its selector on head h alone, then the window.
  at::Tensor select_counts(const LayerView& view, const Params& params,
                           const std::vector<int64_t>& counts) const override;
  void prepare(const LayerView& view, const Params& params) const override;
  int64_t observation_window(const Params& params) const override;
  std::optional<int64_t> statistics_window(const Params& params) const override;
  int64_t always_kept(const Params& params) const override;
  bool cache_per_query_head(const Params& params) const override;
  bool keeps_whole(int64_t n, int64_t budget, int64_t num_layers,
                   const Params& params) const override;
  int64_t layer_budget(int64_t n, int64_t budget, int64_t layer, int64_t num_layers,
                       const Params& params) const override;
  void check(int64_t budget, const Params& params, const std::string& where) const override;
  // The layout every recorded policy of these methods has (kind, schedule, terms, lambda1,
  // lambda2, candidate_factor), so that recorded runs keep their identity.
  nlohmann::json to_json(const std::string& label, int64_t budget,
                         const Params& params) const override;

  // `count` positions of [0, n - W) chosen by its selector, [cache_heads, count] ascending (the
  // building block bench select times).
  at::Tensor select_tokens(const WindowStats& stats, const at::Tensor& keys, const Params& params,
                           int64_t count, int64_t layer, int64_t num_layers) const;

 protected:
  // The card's parameters: window_params()' with the method's defaults (schedule, dispersion),
  // and the greedy admission's where it admits greedily.
  std::vector<ParamSpec> declared_params(const std::string& schedule, bool dispersion) const;
};

// The window statistics of the view's window queries, computed once per layer and window for
// every policy that reads them (LayerView::shared_as).
const WindowStats& shared_window_stats(const LayerView& view);

// selected [rows, count] + the window positions n - W .. n - 1 of every row.
at::Tensor append_window(const at::Tensor& selected, int64_t prompt_length, int64_t window);

}  // namespace kvs::evict
