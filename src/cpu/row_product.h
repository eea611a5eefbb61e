// The matrix-vector kernels of CPU decode, float32: y[r][o] = dot(x[r], w[o]) for a few rows of x
// and a block of weight rows (the projections, and attention's scores over the cached keys), and
// its transpose, the few rows of attention weights times the cached values. Decode is bound by
// reading the weights and the cache once per token; the BLAS's own product of a single row
// streams them at about a third of the machine's read bandwidth per thread, these near its limit
// (AVX2 + FMA). Weights stored as GGUF blocks are dequantized as they stream (block_row_product):
// fewer bytes, the same products. Torch-free.
#pragma once

#include <cstdint>

namespace kvs::cpu {

// Whether row_product runs here (an x86-64 CPU with AVX2 and FMA).
bool row_product_available();

// For r < rows and o in [o_begin, o_end): y[r * y_stride + o] = sum_i x[r * in + i] * w[o * in +
// i]. x is [rows, in] and w [out, in], both row-major and contiguous. Each block of four weight
// rows is read from memory once and from cache for every further pair of x rows, so a few rows cost
// little more than one; past a few dozen rows a matrix product (the BLAS) is faster.
void row_product(const float* x, int64_t rows, int64_t in, const float* w, int64_t o_begin,
                 int64_t o_end, float* y, int64_t y_stride);

// row_product with w stored as GGUF blocks of `type` (docs/gguf.md §2; any type dequantize_blocks
// reads): row o is the in / elements-per-block blocks at w + o * (its bytes). The result equals
// row_product on the dequantized rows bit for bit, while a fraction of the bytes is read (Q4_1:
// 5 bits a weight instead of 32). `in` must be whole blocks.
void block_row_product(const float* x, int64_t rows, int64_t in, const uint8_t* w, uint32_t type,
                       int64_t o_begin, int64_t o_end, float* y, int64_t y_stride);

// The other half of decode attention: for r < rows and c < width,
// y[r * y_stride + c] = sum_j p[r * p_stride + j] * v[j * width + c] over j < count. v is
// [count, width] row-major, width a multiple of kCombineColumns. Columns go in blocks of
// kCombineColumns, every block's rows in threes: each block of v is read once for three rows.
constexpr int64_t kCombineColumns = 32;
void row_combination(const float* p, int64_t rows, int64_t p_stride, int64_t count, const float* v,
                     int64_t width, float* y, int64_t y_stride);

}  // namespace kvs::cpu
