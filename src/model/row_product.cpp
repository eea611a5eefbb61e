#include "model/row_product.h"

#include "core/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kvs::model {

#if defined(__x86_64__)

namespace {

__attribute__((target("avx2,fma"))) inline float horizontal_sum(__m256 v) {
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

// Four dot products of x with w0..w3 (each `in` long): four independent weight streams per pass.
__attribute__((target("avx2,fma"))) void dot4(const float* x, int64_t in, const float* w0,
                                              float* out) {
  const float* w1 = w0 + in;
  const float* w2 = w1 + in;
  const float* w3 = w2 + in;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 8 <= in; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + i), xv, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w1 + i), xv, a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w2 + i), xv, a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w3 + i), xv, a3);
  }
  float s0 = horizontal_sum(a0), s1 = horizontal_sum(a1), s2 = horizontal_sum(a2),
        s3 = horizontal_sum(a3);
  for (; i < in; ++i) {
    s0 += w0[i] * x[i];
    s1 += w1[i] * x[i];
    s2 += w2[i] * x[i];
    s3 += w3[i] * x[i];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// The same for two x rows at once: each weight load feeds two products (eight accumulators).
__attribute__((target("avx2,fma"))) void dot4x2(const float* x0, const float* x1, int64_t in,
                                                const float* w0, float* out0, float* out1) {
  const float* w1 = w0 + in;
  const float* w2 = w1 + in;
  const float* w3 = w2 + in;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  int64_t i = 0;
  for (; i + 8 <= in; i += 8) {
    const __m256 u = _mm256_loadu_ps(x0 + i), v = _mm256_loadu_ps(x1 + i);
    const __m256 v0 = _mm256_loadu_ps(w0 + i), v1 = _mm256_loadu_ps(w1 + i),
                 v2 = _mm256_loadu_ps(w2 + i), v3 = _mm256_loadu_ps(w3 + i);
    a0 = _mm256_fmadd_ps(v0, u, a0);
    a1 = _mm256_fmadd_ps(v1, u, a1);
    a2 = _mm256_fmadd_ps(v2, u, a2);
    a3 = _mm256_fmadd_ps(v3, u, a3);
    b0 = _mm256_fmadd_ps(v0, v, b0);
    b1 = _mm256_fmadd_ps(v1, v, b1);
    b2 = _mm256_fmadd_ps(v2, v, b2);
    b3 = _mm256_fmadd_ps(v3, v, b3);
  }
  float s[8] = {horizontal_sum(a0), horizontal_sum(a1), horizontal_sum(a2), horizontal_sum(a3),
                horizontal_sum(b0), horizontal_sum(b1), horizontal_sum(b2), horizontal_sum(b3)};
  for (; i < in; ++i) {
    s[0] += w0[i] * x0[i];
    s[1] += w1[i] * x0[i];
    s[2] += w2[i] * x0[i];
    s[3] += w3[i] * x0[i];
    s[4] += w0[i] * x1[i];
    s[5] += w1[i] * x1[i];
    s[6] += w2[i] * x1[i];
    s[7] += w3[i] * x1[i];
  }
  for (int k = 0; k < 4; ++k) {
    out0[k] = s[k];
    out1[k] = s[4 + k];
  }
}

__attribute__((target("avx2,fma"))) float dot1(const float* x, int64_t in, const float* w) {
  __m256 a = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= in; i += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a);
  float s = horizontal_sum(a);
  for (; i < in; ++i) s += w[i] * x[i];
  return s;
}

// Rows r < R of one 32-column block: twelve accumulators stay in registers while v streams by.
template <int R>
__attribute__((target("avx2,fma"))) void combine_block(const float* p, int64_t p_stride,
                                                       int64_t count, const float* v, int64_t width,
                                                       float* y, int64_t y_stride) {
  static_assert(kCombineColumns == 32, "four vectors of eight floats");
  __m256 acc[R][4];
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < 4; ++k) acc[r][k] = _mm256_setzero_ps();
  for (int64_t j = 0; j < count; ++j) {
    const float* vj = v + j * width;
    const __m256 v0 = _mm256_loadu_ps(vj), v1 = _mm256_loadu_ps(vj + 8),
                 v2 = _mm256_loadu_ps(vj + 16), v3 = _mm256_loadu_ps(vj + 24);
    for (int r = 0; r < R; ++r) {
      const __m256 weight = _mm256_broadcast_ss(p + r * p_stride + j);
      acc[r][0] = _mm256_fmadd_ps(weight, v0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(weight, v1, acc[r][1]);
      acc[r][2] = _mm256_fmadd_ps(weight, v2, acc[r][2]);
      acc[r][3] = _mm256_fmadd_ps(weight, v3, acc[r][3]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < 4; ++k) _mm256_storeu_ps(y + r * y_stride + 8 * k, acc[r][k]);
}

}  // namespace

bool row_product_available() {
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return available;
}

void row_product(const float* x, int64_t rows, int64_t in, const float* w, int64_t o_begin,
                 int64_t o_end, float* y, int64_t y_stride) {
  if (!row_product_available()) throw Error("row_product: this CPU has no AVX2/FMA");
  int64_t o = o_begin;
  float block[4], pair[4];
  for (; o + 4 <= o_end; o += 4) {
    // The four weight rows come from memory for the first x row and from cache for the others.
    int64_t r = 0;
    for (; r + 2 <= rows; r += 2) {
      dot4x2(x + r * in, x + (r + 1) * in, in, w + o * in, block, pair);
      for (int k = 0; k < 4; ++k) {
        y[r * y_stride + o + k] = block[k];
        y[(r + 1) * y_stride + o + k] = pair[k];
      }
    }
    for (; r < rows; ++r) {
      dot4(x + r * in, in, w + o * in, block);
      for (int k = 0; k < 4; ++k) y[r * y_stride + o + k] = block[k];
    }
  }
  for (; o < o_end; ++o)
    for (int64_t r = 0; r < rows; ++r) y[r * y_stride + o] = dot1(x + r * in, in, w + o * in);
}

void row_combination(const float* p, int64_t rows, int64_t p_stride, int64_t count, const float* v,
                     int64_t width, float* y, int64_t y_stride) {
  if (!row_product_available()) throw Error("row_combination: this CPU has no AVX2/FMA");
  if (width % kCombineColumns != 0)
    throw Error("row_combination: the width must be whole blocks of 32 columns");
  for (int64_t c = 0; c < width; c += kCombineColumns) {
    int64_t r = 0;
    for (; r + 3 <= rows; r += 3)
      combine_block<3>(p + r * p_stride, p_stride, count, v + c, width, y + r * y_stride + c, y_stride);
    if (rows - r == 2)
      combine_block<2>(p + r * p_stride, p_stride, count, v + c, width, y + r * y_stride + c, y_stride);
    else if (rows - r == 1)
      combine_block<1>(p + r * p_stride, p_stride, count, v + c, width, y + r * y_stride + c, y_stride);
  }
}

#else

bool row_product_available() { return false; }

void row_combination(const float*, int64_t, int64_t, int64_t, const float*, int64_t, float*,
                     int64_t) {
  throw Error("row_combination: built for x86-64 with AVX2 only");
}

void row_product(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t) {
  throw Error("row_product: built for x86-64 with AVX2 only");
}

#endif

}  // namespace kvs::model
