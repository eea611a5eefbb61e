// What the AVX-512 kernels (the fused prefill attention, the window statistics) share: the
// KVS_AVX512 function attribute, exp on sixteen float lanes, and the one diagnostic setting their
// intrinsics need. Callers build the code that uses them with KVS_AVX512 and ask
// cpu::at_least(Level::Avx512) (features.h) before calling it.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#define KVS_AVX512 __attribute__((target("avx512f")))

// GCC 12's AVX-512 reductions start from _mm512_undefined_ps, which -Wuninitialized flags inside
// the intrinsics' header (GCC bug 105593): silenced for the files that include this one.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace kvs::cpu {

// exp(x) for x <= 0: 2^k p(r) with Cephes's expf polynomial (about 1 ulp); below -103 (masked
// scores among them) exactly 0, where the true value is under 2e-45.
KVS_AVX512 inline __m512 exp_nonpositive(__m512 x) {
  const __mmask16 representable = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-103.0f), _CMP_GE_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(-103.0f));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  // 1 + r + r^2 p, with the 1 added last: r + 1 first would round away r's low bits.
  p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_maskz_mov_ps(representable, _mm512_scalef_ps(p, k));
}

}  // namespace kvs::cpu

#endif
