// Policies of several cache layouts on one prefill (model/prefill_observer.h): the policies are
// grouped by cache layout (granularity and window statistics' window), each group compressed by
// its own CompressingObserver; the prefill exposes the widest window and each group's observer
// receives the last rows of it that its own window asks for. decode_with_policies and the
// decode-time run (decode_time.h) prefill through it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "evict/compressed_cache.h"
#include "evict/policy.h"
#include "model/prefill_observer.h"

namespace kvs::search {

// Policies that share one decode batch: the same granularity (cache heads) and statistics window.
struct LayoutGroup {
  std::vector<size_t> members;  // indices into the caller's policy list
  std::unique_ptr<evict::CompressingObserver> observer;
};

class LayoutGroups final : public model::PrefillObserver {
 public:
  // members: the indices into `policies` that share this prefill.
  LayoutGroups(const std::vector<evict::Policy>& policies, const std::vector<size_t>& members,
               int64_t num_layers, int64_t decode_capacity);
  int64_t window() const override { return window_; }
  uint32_t signals() const override { return signals_; }
  void on_layer(const model::PrefillLayer& layer) override;
  std::vector<LayoutGroup>& groups() { return groups_; }

 private:
  std::vector<LayoutGroup> groups_;
  int64_t window_ = 0;
  uint32_t signals_ = model::kSignalNone;
};

}  // namespace kvs::search
