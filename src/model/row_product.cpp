#include "model/row_product.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "core/gguf.h"
#include "model/block_lanes.h"
#include "model/gguf_dequantize.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kvs::model {

#if defined(__x86_64__)

namespace {

// Up to this many x rows block_row_product dequantizes Q4_1 and Q8_0 weights in registers, once per
// pair of rows; past it, once into a scratch that every row reads.
constexpr int64_t kMaxFusedRows = 2;

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
  for (; i + 8 <= in; i += 8)
    a = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a);
  float s = horizontal_sum(a);
  for (; i < in; ++i) s += w[i] * x[i];
  return s;
}

// dot4 and dot4x2 with the four weight rows stored as GGUF blocks (Q4_1 or Q8_0, rows row_bytes
// apart): each block is dequantized in registers and its four vectors go into the same
// accumulators in the same order as the float32 kernels' loads, so the sums are theirs bit for bit.
template <uint32_t Type>
__attribute__((target("avx2,fma"), always_inline)) inline void block_lanes(const float* half,
                                                                           const uint8_t* b,
                                                                           __m256 out[4]) {
  if constexpr (Type == static_cast<uint32_t>(gguf::TensorType::Q4_1))
    q4_1_lanes(half, b, out);
  else
    q8_0_lanes(half, b, out);
}

template <uint32_t Type>
__attribute__((target("avx2,fma"))) void block_dot4(const float* x, int64_t blocks,
                                                    const uint8_t* w0, int64_t row_bytes,
                                                    int64_t block_bytes, float* out) {
  const float* half = half_float_table();
  __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                 _mm256_setzero_ps()};
  for (int64_t j = 0; j < blocks; ++j) {
    const float* xj = x + 32 * j;
    for (int k = 0; k < 4; ++k) {
      __m256 w[4];
      block_lanes<Type>(half, w0 + k * row_bytes + j * block_bytes, w);
      for (int c = 0; c < 4; ++c) a[k] = _mm256_fmadd_ps(w[c], _mm256_loadu_ps(xj + 8 * c), a[k]);
    }
  }
  for (int k = 0; k < 4; ++k) out[k] = horizontal_sum(a[k]);
}

template <uint32_t Type>
__attribute__((target("avx2,fma"))) void block_dot4x2(const float* x0, const float* x1,
                                                      int64_t blocks, const uint8_t* w0,
                                                      int64_t row_bytes, int64_t block_bytes,
                                                      float* out0, float* out1) {
  const float* half = half_float_table();
  __m256 a[4], b[4];
  for (int k = 0; k < 4; ++k) a[k] = b[k] = _mm256_setzero_ps();
  for (int64_t j = 0; j < blocks; ++j) {
    const float* u = x0 + 32 * j;
    const float* v = x1 + 32 * j;
    for (int k = 0; k < 4; ++k) {
      __m256 w[4];
      block_lanes<Type>(half, w0 + k * row_bytes + j * block_bytes, w);
      for (int c = 0; c < 4; ++c) {
        a[k] = _mm256_fmadd_ps(w[c], _mm256_loadu_ps(u + 8 * c), a[k]);
        b[k] = _mm256_fmadd_ps(w[c], _mm256_loadu_ps(v + 8 * c), b[k]);
      }
    }
  }
  for (int k = 0; k < 4; ++k) {
    out0[k] = horizontal_sum(a[k]);
    out1[k] = horizontal_sum(b[k]);
  }
}

// The rows r < rows of x against four stored weight rows, two x rows per pass.
template <uint32_t Type>
void block_product_of_four_rows(const float* x, int64_t rows, int64_t in, const uint8_t* w,
                                int64_t row_bytes, int64_t block_bytes, float* y,
                                int64_t y_stride) {
  const int64_t blocks = in / 32;
  float block[4], pair[4];
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    block_dot4x2<Type>(x + r * in, x + (r + 1) * in, blocks, w, row_bytes, block_bytes, block,
                       pair);
    for (int k = 0; k < 4; ++k) {
      y[r * y_stride + k] = block[k];
      y[(r + 1) * y_stride + k] = pair[k];
    }
  }
  for (; r < rows; ++r) {
    block_dot4<Type>(x + r * in, blocks, w, row_bytes, block_bytes, block);
    for (int k = 0; k < 4; ++k) y[r * y_stride + k] = block[k];
  }
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

namespace {

// y[r * y_stride + k] = dot(x[r], w[k]) for r < rows and the four weight rows k < 4 at w: they come
// from memory for the first x row and from cache for the others.
void product_of_four_rows(const float* x, int64_t rows, int64_t in, const float* w, float* y,
                          int64_t y_stride) {
  float block[4], pair[4];
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    dot4x2(x + r * in, x + (r + 1) * in, in, w, block, pair);
    for (int k = 0; k < 4; ++k) {
      y[r * y_stride + k] = block[k];
      y[(r + 1) * y_stride + k] = pair[k];
    }
  }
  for (; r < rows; ++r) {
    dot4(x + r * in, in, w, block);
    for (int k = 0; k < 4; ++k) y[r * y_stride + k] = block[k];
  }
}

void product_of_one_row(const float* x, int64_t rows, int64_t in, const float* w, float* y,
                        int64_t y_stride) {
  for (int64_t r = 0; r < rows; ++r) y[r * y_stride] = dot1(x + r * in, in, w);
}

}  // namespace

void row_product(const float* x, int64_t rows, int64_t in, const float* w, int64_t o_begin,
                 int64_t o_end, float* y, int64_t y_stride) {
  if (!row_product_available()) throw Error("row_product: this CPU has no AVX2/FMA");
  int64_t o = o_begin;
  for (; o + 4 <= o_end; o += 4) product_of_four_rows(x, rows, in, w + o * in, y + o, y_stride);
  for (; o < o_end; ++o) product_of_one_row(x, rows, in, w + o * in, y + o, y_stride);
}

void block_row_product(const float* x, int64_t rows, int64_t in, const uint8_t* w, uint32_t type,
                       int64_t o_begin, int64_t o_end, float* y, int64_t y_stride) {
  if (!row_product_available()) throw Error("block_row_product: this CPU has no AVX2/FMA");
  const gguf::BlockLayout* layout = gguf::block_layout(type);
  if (!layout || in % static_cast<int64_t>(layout->elements) != 0)
    throw Error("block_row_product: rows of " + std::to_string(in) + " elements are not whole " +
                gguf::type_name(type) + " blocks");
  const uint64_t blocks_per_row = static_cast<uint64_t>(in) / layout->elements;
  const int64_t row_bytes = static_cast<int64_t>(blocks_per_row * layout->bytes);
  const int64_t block_bytes = static_cast<int64_t>(layout->bytes);
  int64_t o = o_begin;
  // A few x rows: the weights are dequantized in registers, once per pair of x rows.
  const auto fused = [&](auto product) {
    for (; o + 4 <= o_end; o += 4)
      product(x, rows, in, w + o * row_bytes, row_bytes, block_bytes, y + o, y_stride);
  };
  const bool lanes = block_lanes_available() && rows <= kMaxFusedRows;
  if (lanes && type == static_cast<uint32_t>(gguf::TensorType::Q4_1))
    fused(block_product_of_four_rows<static_cast<uint32_t>(gguf::TensorType::Q4_1)>);
  else if (lanes && type == static_cast<uint32_t>(gguf::TensorType::Q8_0))
    fused(block_product_of_four_rows<static_cast<uint32_t>(gguf::TensorType::Q8_0)>);
  // Otherwise (more rows, the other types, and the last rows short of four) four weight rows at a
  // time are dequantized into this thread's scratch, which stays in the first-level cache, and
  // multiplied there by the float32 kernels.
  thread_local std::vector<float> scratch;
  scratch.resize(static_cast<size_t>(4 * in));
  float* w4 = scratch.data();
  for (; o + 4 <= o_end; o += 4) {
    for (int k = 0; k < 4; ++k)
      dequantize_blocks(type, w + (o + k) * row_bytes, blocks_per_row, w4 + k * in);
    product_of_four_rows(x, rows, in, w4, y + o, y_stride);
  }
  for (; o < o_end; ++o) {
    dequantize_blocks(type, w + o * row_bytes, blocks_per_row, w4);
    product_of_one_row(x, rows, in, w4, y + o, y_stride);
  }
}

void row_combination(const float* p, int64_t rows, int64_t p_stride, int64_t count, const float* v,
                     int64_t width, float* y, int64_t y_stride) {
  if (!row_product_available()) throw Error("row_combination: this CPU has no AVX2/FMA");
  if (width % kCombineColumns != 0)
    throw Error("row_combination: the width must be whole blocks of 32 columns");
  for (int64_t c = 0; c < width; c += kCombineColumns) {
    int64_t r = 0;
    for (; r + 3 <= rows; r += 3)
      combine_block<3>(p + r * p_stride, p_stride, count, v + c, width, y + r * y_stride + c,
                       y_stride);
    if (rows - r == 2)
      combine_block<2>(p + r * p_stride, p_stride, count, v + c, width, y + r * y_stride + c,
                       y_stride);
    else if (rows - r == 1)
      combine_block<1>(p + r * p_stride, p_stride, count, v + c, width, y + r * y_stride + c,
                       y_stride);
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

void block_row_product(const float*, int64_t, int64_t, const uint8_t*, uint32_t, int64_t, int64_t,
                       float*, int64_t) {
  throw Error("block_row_product: built for x86-64 with AVX2 only");
}

#endif

}  // namespace kvs::model
