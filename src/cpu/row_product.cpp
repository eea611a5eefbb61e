#include "cpu/row_product.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "core/gguf.h"
#include "cpu/block_lanes.h"
#include "cpu/gguf_dequantize.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kvs::cpu {

#if defined(__x86_64__)

namespace {

// Up to this many x rows block_row_product dequantizes Q4_1 and Q8_0 weights in registers, once for
// all rows; past it, once into a scratch that the float32 kernels read.
constexpr int64_t kMaxFusedRows = 2;
// How far ahead (in rows of weights, keys or values) the kernels prefetch what they stream.
// Without it a thread computes and then waits on memory in turn: the hardware prefetcher does not
// run far enough ahead of these short rows (dequantizing blocks: 16 against 9 weights/ns from
// memory on one thread).
constexpr int64_t kPrefetchRows = 8;

__attribute__((target("avx2,fma"))) inline float horizontal_sum(__m256 v) {
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

// The four sums of a0..a3's lanes, into out[0..3]: one reduction tree for four accumulators (a
// pairwise add of lanes), where reducing each alone would take three times the shuffles.
__attribute__((target("avx2,fma"))) inline void sum4(const __m256 a[4], float* out) {
  const __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1)));
}

// The dot products of R consecutive x rows with the four weight rows at w0 (each `in` long), into
// y[r * y_stride + k]: each weight load feeds R products. Every (x row, weight row) pair is summed
// the same way whatever R is, so the grouping of rows never changes a result.
template <int R>
__attribute__((target("avx2,fma"))) void dot4_rows(const float* x, int64_t in, const float* w0,
                                                   float* y, int64_t y_stride) {
  __m256 a[R][4];
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < 4; ++k) a[r][k] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= in; i += 8) {
    __m256 w[4];
    for (int k = 0; k < 4; ++k) {
      if (i % 16 == 0)  // one prefetch per cache line of each row
        _mm_prefetch(reinterpret_cast<const char*>(w0 + (k + kPrefetchRows) * in + i), _MM_HINT_T0);
      w[k] = _mm256_loadu_ps(w0 + k * in + i);
    }
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_loadu_ps(x + r * in + i);
      for (int k = 0; k < 4; ++k) a[r][k] = _mm256_fmadd_ps(w[k], xv, a[r][k]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float sums[4];
    sum4(a[r], sums);
    for (int64_t j = i; j < in; ++j)
      for (int k = 0; k < 4; ++k) sums[k] += w0[k * in + j] * x[r * in + j];
    for (int k = 0; k < 4; ++k) y[r * y_stride + k] = sums[k];
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

// One stored block (Q4_1 or Q8_0) dequantized in registers: block_dot4_rows feeds its four vectors
// to the same accumulators in the same order as dot4_rows's loads, so the sums are its bit for bit.
template <uint32_t Type>
__attribute__((target("avx2,fma"), always_inline)) inline void block_lanes(const float* half,
                                                                           const uint8_t* b,
                                                                           __m256 out[4]) {
  if constexpr (Type == static_cast<uint32_t>(gguf::TensorType::Q4_1))
    q4_1_lanes(half, b, out);
  else
    q8_0_lanes(half, b, out);
}

// dot4_rows with the four weight rows stored as GGUF blocks (rows row_bytes apart, `blocks` blocks
// each).
template <uint32_t Type, int R>
__attribute__((target("avx2,fma"))) void block_dot4_rows(const float* half, const float* x,
                                                         int64_t blocks, const uint8_t* w0,
                                                         int64_t row_bytes, int64_t block_bytes,
                                                         float* y, int64_t y_stride) {
  const int64_t in = 32 * blocks;
  __m256 a[R][4];
  for (int r = 0; r < R; ++r)
    for (int k = 0; k < 4; ++k) a[r][k] = _mm256_setzero_ps();
  for (int64_t j = 0; j < blocks; ++j) {
    for (int k = 0; k < 4; ++k) {
      __m256 w[4];
      const uint8_t* b = w0 + k * row_bytes + j * block_bytes;
      _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetchRows * row_bytes), _MM_HINT_T0);
      block_lanes<Type>(half, b, w);
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < 4; ++c)
          a[r][k] = _mm256_fmadd_ps(w[c], _mm256_loadu_ps(x + r * in + 32 * j + 8 * c), a[r][k]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float sums[4];
    sum4(a[r], sums);
    for (int k = 0; k < 4; ++k) y[r * y_stride + k] = sums[k];
  }
}

// The rows r < rows (at most kMaxFusedRows) of x against four stored weight rows.
template <uint32_t Type>
void block_product_of_four_rows(const float* half, const float* x, int64_t rows, int64_t in,
                                const uint8_t* w, int64_t row_bytes, int64_t block_bytes, float* y,
                                int64_t y_stride) {
  static_assert(kMaxFusedRows == 2, "one and two rows");
  if (rows == 2)
    block_dot4_rows<Type, 2>(half, x, in / 32, w, row_bytes, block_bytes, y, y_stride);
  else if (rows == 1)
    block_dot4_rows<Type, 1>(half, x, in / 32, w, row_bytes, block_bytes, y, y_stride);
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
    _mm_prefetch(reinterpret_cast<const char*>(vj + kPrefetchRows * width), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(vj + kPrefetchRows * width + 16), _MM_HINT_T0);
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

bool row_product_available() { return block_lanes_available(); }  // the same AVX2 + FMA

namespace {

// y[r * y_stride + k] = dot(x[r], w[k]) for r < rows and the four weight rows k < 4 at w: they come
// from memory for the first x rows and from cache for the others.
void product_of_four_rows(const float* x, int64_t rows, int64_t in, const float* w, float* y,
                          int64_t y_stride) {
  int64_t r = 0;
  for (; r + 3 <= rows; r += 3) dot4_rows<3>(x + r * in, in, w, y + r * y_stride, y_stride);
  if (rows - r == 2)
    dot4_rows<2>(x + r * in, in, w, y + r * y_stride, y_stride);
  else if (rows - r == 1)
    dot4_rows<1>(x + r * in, in, w, y + r * y_stride, y_stride);
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
  // One or two x rows: the weights are dequantized in registers, once for both rows.
  const float* half = half_float_table();
  const auto fused = [&](auto product) {
    for (; o + 4 <= o_end; o += 4)
      product(half, x, rows, in, w + o * row_bytes, row_bytes, block_bytes, y + o, y_stride);
  };
  const bool few_rows = rows <= kMaxFusedRows;
  if (few_rows && type == static_cast<uint32_t>(gguf::TensorType::Q4_1))
    fused(block_product_of_four_rows<static_cast<uint32_t>(gguf::TensorType::Q4_1)>);
  else if (few_rows && type == static_cast<uint32_t>(gguf::TensorType::Q8_0))
    fused(block_product_of_four_rows<static_cast<uint32_t>(gguf::TensorType::Q8_0)>);
  // Otherwise (more rows, the other types, and the last rows short of four) four weight rows at a
  // time are dequantized into this thread's scratch, which stays in the first-level cache, and
  // multiplied there by the float32 kernels.
  thread_local std::vector<float> scratch;
  scratch.resize(static_cast<size_t>(4 * in));
  float* w4 = scratch.data();
  for (; o + 4 <= o_end; o += 4) {
    const char* ahead = reinterpret_cast<const char*>(w + (o + kPrefetchRows) * row_bytes);
    for (int64_t line = 0; line < 4 * row_bytes; line += 64)
      _mm_prefetch(ahead + line, _MM_HINT_T0);
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

}  // namespace kvs::cpu
