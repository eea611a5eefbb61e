#include "cpu/flash_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/features.h"
#include "cpu/parallel_tasks.h"
#include "cpu/simd_exp.h"

namespace kvs::cpu {

#if defined(__x86_64__)

namespace {

constexpr int64_t kBlock = 64;  // queries per task and keys per step: 16 KB of scores
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// acc[i][j] = sum over e < depth of a[i * a_stride + e] * b[e * b_stride + 16 j .. + 15]: four
// rows of `a` times 64 columns of `b` in sixteen registers, one FMA chain per entry in e order,
// while the rows of b stream from cache. The scores (a: queries, b: transposed keys) and the
// weighted values (a: weights, b: values) are both this product.
KVS_AVX512 inline void four_rows_by_64_columns(const float* a, int64_t a_stride, const float* b,
                                               int64_t b_stride, int64_t depth, __m512 acc[4][4]) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t e = 0; e < depth; ++e) {
    const float* be = b + e * b_stride;
    const __m512 b0 = _mm512_loadu_ps(be), b1 = _mm512_loadu_ps(be + 16),
                 b2 = _mm512_loadu_ps(be + 32), b3 = _mm512_loadu_ps(be + 48);
    for (int i = 0; i < 4; ++i) {
      const __m512 x = _mm512_set1_ps(a[i * a_stride + e]);
      acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(x, b2, acc[i][2]);
      acc[i][3] = _mm512_fmadd_ps(x, b3, acc[i][3]);
    }
  }
}

// s[r][c] = dot(qs[r], key c) for a block of kBlock queries (scaled, d apart) and kBlock keys:
// kt holds the block's keys transposed (row e = element e of the 64 keys).
KVS_AVX512 void block_scores(const float* qs, int64_t d, const float* kt, float* s) {
  for (int64_t r = 0; r < kBlock; r += 4) {
    __m512 acc[4][4];
    four_rows_by_64_columns(qs + r * d, d, kt, kBlock, d, acc);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) _mm512_storeu_ps(s + (r + i) * kBlock + 16 * j, acc[i][j]);
  }
}

// One block's online softmax step for every query row: the row's running max m and sum l take in
// the block's scores, which become exp(s - m); o's row is rescaled to the new max.
KVS_AVX512 void block_softmax(float* s, float* m, float* l, float* o, int64_t d) {
  for (int64_t r = 0; r < kBlock; ++r) {
    float* row = s + r * kBlock;
    __m512 x[4];
    for (int j = 0; j < 4; ++j) x[j] = _mm512_loadu_ps(row + 16 * j);
    const float block_max =
        _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(x[0], x[1]), _mm512_max_ps(x[2], x[3])));
    const float new_max = std::max(m[r], block_max);
    const __m512 shift = _mm512_set1_ps(new_max);
    __m512 sum = _mm512_setzero_ps();
    for (int j = 0; j < 4; ++j) {
      x[j] = exp_nonpositive(_mm512_sub_ps(x[j], shift));
      _mm512_storeu_ps(row + 16 * j, x[j]);
      sum = _mm512_add_ps(sum, x[j]);
    }
    const float rescale = std::exp(m[r] - new_max);  // 0 on the first block (m = -inf)
    l[r] = l[r] * rescale + _mm512_reduce_add_ps(sum);
    m[r] = new_max;
    if (rescale != 1.0f) {
      const __m512 factor = _mm512_set1_ps(rescale);
      for (int64_t c = 0; c < d; c += 16)
        _mm512_storeu_ps(o + r * d + c, _mm512_mul_ps(factor, _mm512_loadu_ps(o + r * d + c)));
    }
  }
}

// o[r] += sum_j p[r][j] v[j] over the block's first `keys` keys, 64 columns at a time. The block's
// sum starts from zero and is added to o after, as a blocked product would: one chain through
// every key would gather more rounding at long prompts.
KVS_AVX512 void block_values(const float* p, int64_t keys, const float* v, int64_t d, float* o) {
  for (int64_t c = 0; c < d; c += 64) {
    for (int64_t r = 0; r < kBlock; r += 4) {
      __m512 acc[4][4];
      four_rows_by_64_columns(p + r * kBlock, kBlock, v + c, d, keys, acc);
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          float* out = o + (r + i) * d + c + 16 * j;
          _mm512_storeu_ps(out, _mm512_add_ps(_mm512_loadu_ps(out), acc[i][j]));
        }
      }
    }
  }
}

// A thread's blocks of scores and output rows, reused across its tasks.
struct Scratch {
  std::vector<float> queries, scores, out, max, sum;
  explicit Scratch(int64_t d)
      : queries(kBlock * d), scores(kBlock * kBlock), out(kBlock * d), max(kBlock), sum(kBlock) {}
};

// Query block qb of head h, scaled by 1 / sqrt(d) into w.queries, zero past n.
void scaled_queries(const float* q, int64_t n, int64_t d, int64_t h, int64_t qb, Scratch& w) {
  const int64_t q0 = qb * kBlock, rows = std::min(kBlock, n - q0);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float* head_q = q + (h * n + q0) * d;
  for (int64_t i = 0; i < kBlock * d; ++i) w.queries[i] = i < rows * d ? head_q[i] * scale : 0.0f;
}

// Scores past each query's own position masked: the diagonal block (blocks of queries and keys
// are aligned).
void mask_above_diagonal(float* s) {
  for (int64_t r = 0; r < kBlock; ++r)
    for (int64_t c = r + 1; c < kBlock; ++c) s[r * kBlock + c] = kNegInf;
}

// Query block qb of head h: every key block up to the diagonal, whose scores past each query's
// own position are masked. With `lse`, each row's log-sum-exp of its scaled scores goes there.
void attend_block(const float* q, const float* kt, const float* v, int64_t n, int64_t blocks,
                  int64_t d, int64_t h, int64_t qb, int64_t group, float* out, float* lse,
                  Scratch& w) {
  const int64_t q0 = qb * kBlock, rows = std::min(kBlock, n - q0);
  scaled_queries(q, n, d, h, qb, w);
  std::fill(w.out.begin(), w.out.end(), 0.0f);
  std::fill(w.max.begin(), w.max.end(), kNegInf);
  std::fill(w.sum.begin(), w.sum.end(), 0.0f);
  const float* head_kt = kt + (h / group) * blocks * d * kBlock;
  const float* head_v = v + (h / group) * n * d;
  for (int64_t k0 = 0; k0 < q0 + rows; k0 += kBlock) {
    block_scores(w.queries.data(), d, head_kt + k0 * d, w.scores.data());
    if (k0 + kBlock > q0) mask_above_diagonal(w.scores.data());
    block_softmax(w.scores.data(), w.max.data(), w.sum.data(), w.out.data(), d);
    // Keys past the last query's position have zero weight; past n they are not in v.
    const int64_t keys = std::min(kBlock, q0 + rows - k0);
    block_values(w.scores.data(), keys, head_v + k0 * d, d, w.out.data());
  }
  float* head_out = out + (h * n + q0) * d;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = 0; e < d; ++e) head_out[r * d + e] = w.out[r * d + e] / w.sum[r];
  }
  if (lse)
    for (int64_t r = 0; r < rows; ++r) lse[h * n + q0 + r] = w.max[r] + std::log(w.sum[r]);
}

// Key block kb of head h: every query row from the diagonal on adds its attention weights,
// exp(s - lse) with the row's log-sum-exp from the attention sweep, to the block's 64 column sums.
// The scores are the attention sweep's own (same scaled queries, same kernel).
KVS_AVX512 void column_block(const float* q, const float* kt, const float* lse, int64_t n,
                             int64_t blocks, int64_t d, int64_t h, int64_t kb, int64_t group,
                             float* sums, Scratch& w) {
  const float* block_kt = kt + ((h / group) * blocks + kb) * d * kBlock;
  __m512 total[4];
  for (int j = 0; j < 4; ++j) total[j] = _mm512_setzero_ps();
  for (int64_t qb = kb; qb < blocks; ++qb) {
    const int64_t q0 = qb * kBlock, rows = std::min(kBlock, n - q0);
    scaled_queries(q, n, d, h, qb, w);
    block_scores(w.queries.data(), d, block_kt, w.scores.data());
    if (qb == kb) mask_above_diagonal(w.scores.data());
    for (int64_t r = 0; r < rows; ++r) {
      const __m512 shift = _mm512_set1_ps(lse[h * n + q0 + r]);
      const float* row = w.scores.data() + r * kBlock;
      for (int j = 0; j < 4; ++j) {
        // s - lse <= 0 but for rounding; masked scores give exactly 0.
        const __m512 x =
            _mm512_min_ps(_mm512_sub_ps(_mm512_loadu_ps(row + 16 * j), shift), _mm512_setzero_ps());
        total[j] = _mm512_add_ps(total[j], exp_nonpositive(x));
      }
    }
  }
  float block_sums[kBlock];
  for (int j = 0; j < 4; ++j) _mm512_storeu_ps(block_sums + 16 * j, total[j]);
  const int64_t k0 = kb * kBlock;
  std::copy(block_sums, block_sums + std::min(kBlock, n - k0), sums + h * n + k0);
}

}  // namespace

bool causal_attention_available(int64_t head_dim) {
  return at_least(Level::Avx512) && head_dim > 0 && head_dim % 64 == 0;
}

namespace {

// The keys transposed block by block, [kv_heads, blocks, d, kBlock], zero past n: the scores'
// kernel reads 64 keys' element e as one row, and a block's rows are contiguous (rows n floats
// apart would share the same few sets of the first-level cache).
std::vector<float> transposed_keys(const float* k, int64_t kv_heads, int64_t n, int64_t d) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<float> kt(static_cast<size_t>(kv_heads * blocks * d * kBlock), 0.0f);
  at::parallel_for(0, kv_heads * blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t head = tile / blocks, k0 = tile % blocks * kBlock;
      float* dst = kt.data() + tile * d * kBlock;
      for (int64_t j = 0; j < std::min(kBlock, n - k0); ++j) {
        const float* key = k + (head * n + k0 + j) * d;
        for (int64_t e = 0; e < d; ++e) dst[e * kBlock + j] = key[e];
      }
    }
  });
  return kt;
}

void check_available(int64_t d, const char* what) {
  if (!causal_attention_available(d))
    throw Error(std::string(what) + ": needs AVX-512F and a head_dim that is a multiple of 64");
}

}  // namespace

void causal_attention(const float* q, const float* k, const float* v, int64_t heads,
                      int64_t kv_heads, int64_t n, int64_t d, float* out, float* row_lse) {
  check_available(d, "causal_attention");
  const int64_t group = heads / kv_heads, blocks = (n + kBlock - 1) / kBlock;
  const std::vector<float> kt = transposed_keys(k, kv_heads, n, d);
  // Tasks from the longest (the last query blocks, which see the most keys) to the shortest,
  // taken by the threads as they finish theirs.
  for_each_task(
      heads * blocks, [d] { return Scratch(d); },
      [&](int64_t t, Scratch& scratch) {
        attend_block(q, kt.data(), v, n, blocks, d, t % heads, blocks - 1 - t / heads, group, out,
                     row_lse, scratch);
      });
}

void causal_attention_column_sums(const float* q, const float* k, const float* row_lse,
                                  int64_t heads, int64_t kv_heads, int64_t n, int64_t d,
                                  float* sums) {
  check_available(d, "causal_attention_column_sums");
  const int64_t group = heads / kv_heads, blocks = (n + kBlock - 1) / kBlock;
  const std::vector<float> kt = transposed_keys(k, kv_heads, n, d);
  // A task per (head, key block), from the first key blocks (which every later query sees) to
  // the last; each task owns its block's column sums.
  for_each_task(
      heads * blocks, [d] { return Scratch(d); },
      [&](int64_t t, Scratch& scratch) {
        column_block(q, kt.data(), row_lse, n, blocks, d, t % heads, t / heads, group, sums,
                     scratch);
      });
}

#else

bool causal_attention_available(int64_t) { return false; }

void causal_attention(const float*, const float*, const float*, int64_t, int64_t, int64_t, int64_t,
                      float*, float*) {
  throw Error("causal_attention: built for x86-64 only");
}

void causal_attention_column_sums(const float*, const float*, const float*, int64_t, int64_t,
                                  int64_t, int64_t, float*) {
  throw Error("causal_attention_column_sums: built for x86-64 only");
}

#endif

}  // namespace kvs::cpu
