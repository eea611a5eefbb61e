// Prefill attention's memory: the blocked path sizes its blocks so that their scores stay within
// kBlockScoreBytes at any prompt length, and neither backend holds an n x n matrix (the resident
// memory a long prefill adds stays far below one). Equality of the backends is in
// test_runner_invariants.cpp.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "model/attention.h"
#include "model/prefill_blocks.h"

namespace kvs::test {
namespace {

using model::AttentionBackend;
using model::kBlockScoreBytes;
using model::prefill_block_rows;

int64_t status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  return -1;
}

TEST(PrefillAttention, BlockRowsKeepTheScoresWithinTheBound) {
  for (const int64_t heads : {1, 9, 32}) {
    for (const int64_t keys : {1, 100, 4096, 32768, 131072, 1 << 22}) {
      const int64_t rows = prefill_block_rows(heads, keys, 1024);
      EXPECT_GE(rows, 1);
      EXPECT_LE(rows, 1024);
      if (rows > 1) EXPECT_LE(2 * heads * rows * keys * 4, kBlockScoreBytes) << heads << " " << keys;
      // As many rows as fit: one more would exceed the bound (or the block size caps them).
      if (rows < 1024) EXPECT_GT(2 * heads * (rows + 1) * keys * 4, kBlockScoreBytes);
    }
  }
  EXPECT_EQ(prefill_block_rows(32, 32768, 1024), 8);  // Mistral's heads at 32k tokens
  EXPECT_EQ(prefill_block_rows(4, 100, 16), 16);
}

TEST(PrefillAttention, LongPrefillHoldsNoScoreMatrix) {
  if (status_bytes("VmHWM") < 0) GTEST_SKIP() << "no /proc/self/status";
  const int64_t heads = 4, kv_heads = 2, n = 12288, d = 16;
  const int64_t score_matrix = heads * n * n * 4;  // 2.25 GiB
  at::manual_seed(3);
  c10::InferenceMode inference;
  const at::Tensor q = at::randn({heads, n, d}), k = at::randn({kv_heads, n, d}),
                   v = at::randn({kv_heads, n, d});
  std::vector<AttentionBackend> backends = {AttentionBackend::Blocked};
  if (model::sdpa_available()) backends.push_back(AttentionBackend::Sdpa);
  for (const AttentionBackend backend : backends) {
    model::PrefillAttentionOptions options;
    options.backend = backend;
    const int64_t before = status_bytes("VmRSS");
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    const at::Tensor out = model::prefill_attention(q, k, v, options);
    const int64_t added = status_bytes("VmHWM") - before;
    ASSERT_EQ(out.sizes(), q.sizes());
    // The live peak is the output plus one block's scores, probabilities and mask (about 1.4 x
    // kBlockScoreBytes); glibc keeps freed blocks below its dynamic mmap threshold resident, which
    // can double that. A ninth of one n x n score matrix.
    EXPECT_LE(added, 4 * kBlockScoreBytes + static_cast<int64_t>(out.nbytes()))
        << "backend " << static_cast<int>(backend) << " added " << added << " bytes; the n x n "
        << "scores would take " << score_matrix;
  }
}

}  // namespace
}  // namespace kvs::test
