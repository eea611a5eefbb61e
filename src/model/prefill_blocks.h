// The blocked prefill attention's memory bound (attention.cpp): blocks of query rows sized so that
// their fp32 scores and probabilities, all heads together, stay within kBlockScoreBytes at any
// prompt length; with SDPA's own tiles, no n x n matrix is ever held. Torch-free.
#pragma once

#include <cstdint>

namespace kvs::model {

constexpr int64_t kBlockScoreBytes = int64_t{64} << 20;

// Query rows per block when each row sees `keys` keys: at most block_size, at least 1, and as
// many as keep 2 x heads x rows x keys floats within kBlockScoreBytes.
int64_t prefill_block_rows(int64_t heads, int64_t keys, int64_t block_size);

}  // namespace kvs::model
