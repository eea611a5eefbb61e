#include "cpu/window_stats_avx512.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/features.h"
#include "cpu/parallel_tasks.h"
#include "cpu/simd_exp.h"

namespace kvs::cpu {

#if defined(__x86_64__)

namespace {

constexpr int64_t kLanes = 16;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// scores[j][v] = dot(key j, query rows 16v .. 16v + 15) for `Keys` keys (d floats apart) and V
// vectors of rows, and top[v] their running max: queries_t holds the rows transposed (row e =
// element e of every query row, `stride` floats), so Keys x V accumulators stay in registers while
// the keys stream from cache and each key's element is broadcast once. Each dot product is one
// chain of FMAs over e. D is d where it is known when compiled (one register then addresses every
// key of the block), else 0.
template <int V, int Keys, int64_t D>
KVS_AVX512 void key_scores(const float* queries_t, int64_t stride, const float* keys,
                           int64_t runtime_d, float* scores, float* top) {
  const int64_t d = D > 0 ? D : runtime_d;
  __m512 acc[Keys][V];
  for (auto& key : acc)
    for (auto& a : key) a = _mm512_setzero_ps();
  // The keys of the block two ahead, one cache line per step: the hardware's prefetcher does not
  // keep up with Keys rows read across at once, and the keys (8 MB per head at n = 15.6k) come
  // from the last-level cache. A prefetch past the end of the keys is dropped, never a fault.
  const char* ahead = reinterpret_cast<const char*>(keys + 2 * Keys * d);
  const int64_t lines = Keys * d / kLanes;
  for (int64_t e = 0; e < d; ++e) {
    for (int64_t line = e; line < lines; line += d) _mm_prefetch(ahead + line * 64, _MM_HINT_T0);
    __m512 q[V];
    for (int v = 0; v < V; ++v) q[v] = _mm512_loadu_ps(queries_t + e * stride + v * kLanes);
    for (int j = 0; j < Keys; ++j) {
      const __m512 b = _mm512_set1_ps(keys[j * d + e]);
      for (int v = 0; v < V; ++v) acc[j][v] = _mm512_fmadd_ps(q[v], b, acc[j][v]);
    }
  }
  for (int j = 0; j < Keys; ++j) {
    for (int v = 0; v < V; ++v) {
      _mm512_storeu_ps(scores + j * stride + v * kLanes, acc[j][v]);
    }
  }
  for (int v = 0; v < V; ++v) {
    __m512 m = _mm512_loadu_ps(top + v * kLanes);
    for (int j = 0; j < Keys; ++j) m = _mm512_max_ps(m, acc[j][v]);
    _mm512_storeu_ps(top + v * kLanes, m);
  }
}

// Keys [begin, end): twelve at a time times two vectors (32 rows), or 24 times one, which is 24
// accumulators of the 32 registers.
template <int V, int64_t D>
KVS_AVX512 void key_range_scores(const float* queries_t, int64_t stride, const float* keys,
                                 int64_t begin, int64_t end, int64_t d, float* scores, float* top) {
  constexpr int Keys = 24 / V;
  int64_t i = begin;
  for (; i + Keys <= end; i += Keys)
    key_scores<V, Keys, D>(queries_t, stride, keys + i * d, d, scores + i * stride, top);
  for (; i < end; ++i)
    key_scores<V, 1, D>(queries_t, stride, keys + i * d, d, scores + i * stride, top);
}

template <int V>
KVS_AVX512 void key_range_scores(const float* queries_t, int64_t stride, const float* keys,
                                 int64_t begin, int64_t end, int64_t d, float* scores, float* top) {
  if (d == 64)
    key_range_scores<V, 64>(queries_t, stride, keys, begin, end, d, scores, top);
  else if (d == 128)
    key_range_scores<V, 128>(queries_t, stride, keys, begin, end, d, scores, top);
  else
    key_range_scores<V, 0>(queries_t, stride, keys, begin, end, d, scores, top);
}

// rows[r] becomes column r of the 16 x 16 block the rows held.
KVS_AVX512 void transpose16(__m512 rows[kLanes]) {
  __m512 t[kLanes];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    rows[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    rows[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    rows[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    rows[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // rows[4i + c] now holds, in its 128-bit lane l, column 4l + c of rows 4i .. 4i + 3: gather
  // column k's four lanes from the four groups of rows.
  for (int c = 0; c < 4; ++c) {
    t[c] = _mm512_shuffle_f32x4(rows[c], rows[4 + c], 0x88);
    t[4 + c] = _mm512_shuffle_f32x4(rows[c], rows[4 + c], 0xdd);
    t[8 + c] = _mm512_shuffle_f32x4(rows[8 + c], rows[12 + c], 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(rows[8 + c], rows[12 + c], 0xdd);
  }
  for (int c = 0; c < 4; ++c) {
    rows[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);
    rows[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xdd);
    rows[4 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0x88);
    rows[12 + c] = _mm512_shuffle_f32x4(t[4 + c], t[12 + c], 0xdd);
  }
}

// A thread's buffers, reused across its KV heads: the group's query rows transposed and its
// scores, key-major ([n rounded up to 16, rows rounded up to 16], 2 MB at n = 15.6k and 32 rows).
struct Scratch {
  std::vector<float> queries_t, scores, max, inverse_sum, block;
};

// One KV head: scores, the causal mask inside the window, softmax over all n keys, then mu and
// sigma of each query head's `window` rows for the n - window keys before the window.
KVS_AVX512 void head_stats(const float* queries, const float* keys, int64_t group, int64_t window,
                           int64_t n, int64_t d, float* mu, float* sigma, Scratch& s) {
  const int64_t rows = group * window, stride = round_up(rows, kLanes), vectors = stride / kLanes;
  const int64_t padded = round_up(n, kLanes), scorable = n - window;
  s.queries_t.assign(static_cast<size_t>(d * stride), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t e = 0; e < d; ++e) s.queries_t[e * stride + r] = queries[r * d + e];
  s.scores.resize(static_cast<size_t>(padded * stride));
  float* scores = s.scores.data();

  // Each row's max comes with its scores over the keys before the window; the window keys are
  // masked first (window query w sits at position n - window + w and must not see the window keys
  // after it). Keys past n (the padding to 16) weigh nothing.
  s.max.assign(static_cast<size_t>(stride), kNegInf);
  float* top = s.max.data();
  float unused[2 * kLanes];
  for (int64_t c = 0; c < vectors; c += 2) {
    const float* q = s.queries_t.data() + c * kLanes;
    float* out = scores + c * kLanes;
    if (vectors - c >= 2) {
      key_range_scores<2>(q, stride, keys, 0, scorable, d, out, top + c * kLanes);
      key_range_scores<2>(q, stride, keys, scorable, n, d, out, unused);
    } else {
      key_range_scores<1>(q, stride, keys, 0, scorable, d, out, top + c * kLanes);
      key_range_scores<1>(q, stride, keys, scorable, n, d, out, unused);
    }
  }
  for (int64_t later = 1; later < window; ++later)
    for (int64_t member = 0; member < group; ++member)
      for (int64_t w = 0; w < later; ++w)
        scores[(scorable + later) * stride + member * window + w] = kNegInf;
  for (int64_t i = scorable; i < n; ++i)
    for (int64_t v = 0; v < vectors; ++v)
      _mm512_storeu_ps(top + v * kLanes,
                       _mm512_max_ps(_mm512_loadu_ps(top + v * kLanes),
                                     _mm512_loadu_ps(scores + i * stride + v * kLanes)));
  std::fill(scores + n * stride, scores + padded * stride, kNegInf);

  // exp(score - max) in place, and its sum per row: sixteen keys in float, those partial sums in
  // double.
  s.inverse_sum.resize(static_cast<size_t>(stride));
  for (int64_t v = 0; v < vectors; ++v) {
    const __m512 row_max = _mm512_loadu_ps(top + v * kLanes);
    __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();
    for (int64_t i0 = 0; i0 < padded; i0 += kLanes) {
      __m512 partial = _mm512_setzero_ps();
      for (int64_t i = i0; i < i0 + kLanes; ++i) {
        float* at = scores + i * stride + v * kLanes;
        const __m512 x = exp_nonpositive(_mm512_sub_ps(_mm512_loadu_ps(at), row_max));
        _mm512_storeu_ps(at, x);
        partial = _mm512_add_ps(partial, x);
      }
      low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(partial)));
      high = _mm512_add_pd(
          high,
          _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(partial), 1))));
    }
    alignas(64) double sum[kLanes];
    _mm512_store_pd(sum, low);
    _mm512_store_pd(sum + 8, high);
    for (int64_t lane = 0; lane < kLanes; ++lane)
      s.inverse_sum[v * kLanes + lane] = static_cast<float>(1.0 / sum[lane]);
  }

  // Sixteen keys at a time: their weights (exp times the row's 1 / sum) turned row-major into
  // `block`, then each query head's mean and sample deviation over its window rows, as the
  // reference computes them.
  s.block.resize(static_cast<size_t>(stride * kLanes));
  float* block = s.block.data();
  const __m512 inv_window = _mm512_set1_ps(1.0f / static_cast<float>(window));
  const __m512 inv_dof = _mm512_set1_ps(1.0f / static_cast<float>(window - 1));
  for (int64_t i0 = 0; i0 < scorable; i0 += kLanes) {
    for (int64_t v = 0; v < vectors; ++v) {
      const __m512 inverse = _mm512_loadu_ps(s.inverse_sum.data() + v * kLanes);
      __m512 tile[kLanes];
      for (int64_t j = 0; j < kLanes; ++j)
        tile[j] = _mm512_mul_ps(_mm512_loadu_ps(scores + (i0 + j) * stride + v * kLanes), inverse);
      transpose16(tile);
      for (int64_t r = 0; r < kLanes; ++r)
        _mm512_storeu_ps(block + (v * kLanes + r) * kLanes, tile[r]);
    }
    const __mmask16 keep =
        static_cast<__mmask16>(scorable - i0 >= kLanes ? 0xffff : (1u << (scorable - i0)) - 1u);
    for (int64_t member = 0; member < group; ++member) {
      const float* weights = block + member * window * kLanes;
      __m512 mean = _mm512_setzero_ps();
      for (int64_t w = 0; w < window; ++w)
        mean = _mm512_add_ps(mean, _mm512_loadu_ps(weights + w * kLanes));
      mean = _mm512_mul_ps(mean, inv_window);
      __m512 squares = _mm512_setzero_ps();
      for (int64_t w = 0; w < window; ++w) {
        const __m512 deviation = _mm512_sub_ps(_mm512_loadu_ps(weights + w * kLanes), mean);
        squares = _mm512_fmadd_ps(deviation, deviation, squares);
      }
      _mm512_mask_storeu_ps(mu + member * scorable + i0, keep, mean);
      _mm512_mask_storeu_ps(sigma + member * scorable + i0, keep,
                            _mm512_sqrt_ps(_mm512_mul_ps(squares, inv_dof)));
    }
  }
}

}  // namespace

bool window_stats_avx512_available() { return at_least(Level::Avx512); }

void window_stats_avx512(const float* scaled_queries, const float* keys, int64_t kv_heads,
                         int64_t group, int64_t window, int64_t n, int64_t d, float* mu,
                         float* sigma) {
  if (!window_stats_avx512_available()) throw Error("window_stats_avx512: needs AVX-512F");
  const int64_t scorable = n - window;
  cpu::for_each_task(kv_heads, [&](int64_t g) {
    // Kept by each thread across calls: a fresh 2 MB of scores per layer would be zeroed and
    // faulted in again each time.
    thread_local Scratch scratch;
    head_stats(scaled_queries + g * group * window * d, keys + g * n * d, group, window, n, d,
               mu + g * group * scorable, sigma + g * group * scorable, scratch);
  });
}

#else

bool window_stats_avx512_available() { return false; }

void window_stats_avx512(const float*, const float*, int64_t, int64_t, int64_t, int64_t, int64_t,
                         float*, float*) {
  throw Error("window_stats_avx512: built for x86-64 only");
}

#endif

}  // namespace kvs::cpu
