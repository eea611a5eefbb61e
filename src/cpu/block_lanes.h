// The 32 float32 values of one GGUF Q4_1 or Q8_0 block (docs/gguf.md §2) as four AVX2 vectors of
// eight (elements 0-7, 8-15, 16-23, 24-31), for the code that dequantizes every weight once per
// decode step: gguf_dequantize.cpp's block functions and row_product.cpp's fused products. Each
// product of a scale and a quant is exact in float32, so q * d + m rounds once with or without the
// fused multiply-add: the values equal the scalar reference bit for bit. Callers check
// block_lanes_available() first and pass half_float_table(). Torch-free.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>

#include "cpu/features.h"

namespace kvs::cpu {

inline bool block_lanes_available() { return at_least(Level::Avx2); }

// half_to_float of every 16-bit pattern (gguf_dequantize.cpp): a scale is then one broadcast
// load, where a conversion would take the shuffle port that the quants' widening needs.
const float* half_float_table();

// Layout: half d, half m, then 16 bytes whose low nibbles are elements 0..15, high ones 16..31.
__attribute__((target("avx2,fma"), always_inline)) inline void q4_1_lanes(const float* half,
                                                                          const uint8_t* b,
                                                                          __m256 out[4]) {
  const __m256 d = _mm256_broadcast_ss(half + (b[0] | b[1] << 8));
  const __m256 m = _mm256_broadcast_ss(half + (b[2] | b[3] << 8));
  // Bytes 0-7 and 8-15 widened to 32-bit lanes straight from memory (one shuffle each); the
  // nibbles are then a mask and a shift away.
  const __m256i first =
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 4)));
  const __m256i second =
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 12)));
  const __m256i nibble = _mm256_set1_epi32(0x0F);
  out[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(first, nibble)), d, m);
  out[1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(second, nibble)), d, m);
  out[2] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(first, 4)), d, m);
  out[3] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(second, 4)), d, m);
}

// Layout: half d, then 32 signed bytes.
__attribute__((target("avx2,fma"), always_inline)) inline void q8_0_lanes(const float* half,
                                                                          const uint8_t* b,
                                                                          __m256 out[4]) {
  const __m256 d = _mm256_broadcast_ss(half + (b[0] | b[1] << 8));
  for (int k = 0; k < 4; ++k) {
    const __m256i q =
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + 8 * k)));
    out[k] = _mm256_mul_ps(_mm256_cvtepi32_ps(q), d);
  }
}

}  // namespace kvs::cpu

#endif
