// `generate --policy`: an eviction policy as the runner's cache compressor (torch-free header).
#pragma once

#include "evict/policy.h"
#include "model/text_generation.h"

namespace kvs::evict {

// Compresses the prompt's cache with `policy` during prefill (one row, CompressingObserver).
model::CacheCompressorFactory cache_compressor(const Policy& policy);

}  // namespace kvs::evict
