#include "evict/generation_policy.h"

#include "evict/compressed_cache.h"

namespace kvs::evict {
namespace {

class PolicyCompressor final : public model::CacheCompressor {
 public:
  PolicyCompressor(const Policy& policy, int64_t num_layers, int64_t decode_capacity)
      : observer_({policy}, num_layers, decode_capacity) {}
  model::PrefillObserver& observer() override { return observer_; }
  model::DecodeCache take_cache() override { return observer_.take_cache(); }

 private:
  CompressingObserver observer_;
};

}  // namespace

model::CacheCompressorFactory cache_compressor(const Policy& policy) {
  policy.validate();
  return [policy](int64_t num_layers, int64_t decode_capacity) {
    return std::make_unique<PolicyCompressor>(policy, num_layers, decode_capacity);
  };
}

}  // namespace kvs::evict
