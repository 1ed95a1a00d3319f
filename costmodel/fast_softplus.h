#pragma once
// softplus(z) = log(1 + e^z), the activation that makes the network's
// coefficients positive. Fast enough to run 32 times per stage evaluation;
// the training path (network_gradient.cpp) uses the exact double version.
//
// Accuracy: relative error < 1e-5 against the exact value for |z| < 80
// (test/costmodel checks it); softplus(z) > 0 for every finite z >= -87
// (below that e^z underflows and the result is 0).

#include <cmath>
#include <cstddef>

#include "costmodel/fast_log1p.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpusched {

// e^x for x <= 0 (x < -87 gives 0): 2^n * e^r with n = round(x / ln2),
// |r| <= ln2 / 2, e^r by its Taylor series to r^7 (error < 2e-8).
inline float fast_exp_nonpositive(float x) {
    if (x < -87.0f) return 0.0f;
    const float n = std::nearbyint(x * 1.44269504089f);
    const float r = x - n * 0.693147180560f;
    const float p =
        1.0f +
        r * (1.0f +
             r * (0.5f + r * (1.0f / 6 +
                              r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
    return std::ldexp(p, static_cast<int>(n));
}

inline float fast_softplus(float z) {
    const float a = z > 0 ? -z : z; // -|z|
    return (z > 0 ? z : 0.0f) + fast_log1p(fast_exp_nonpositive(a));
}

inline void fast_softplus_array(const float *z, float *out, std::size_t n) {
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f), lo = _mm_set1_ps(-87.0f);
    const __m128 log2e = _mm_set1_ps(1.44269504089f), ln2 = _mm_set1_ps(0.693147180560f);
    const __m128 k2 = _mm_set1_ps(0.5f), k3 = _mm_set1_ps(1.0f / 6), k4 = _mm_set1_ps(1.0f / 24);
    const __m128 k5 = _mm_set1_ps(1.0f / 120), k6 = _mm_set1_ps(1.0f / 720), k7 = _mm_set1_ps(1.0f / 5040);
    alignas(16) float e[4];
    alignas(16) float chunk[4];
    // Whole chunks of four; a last partial chunk goes through a padded copy.
    for (; i < n; i += 4) {
        const std::size_t lanes = n - i < 4 ? n - i : 4;
        for (std::size_t k = 0; k < 4; ++k)
            chunk[k] = k < lanes ? z[i + k] : 0.0f;
        const __m128 v = _mm_load_ps(chunk);
        const __m128 pos = _mm_max_ps(v, zero);
        __m128 a = _mm_sub_ps(_mm_min_ps(v, zero), pos); // -|z|
        const __m128 underflow = _mm_cmplt_ps(a, lo);
        a = _mm_max_ps(a, lo);
        const __m128i ni = _mm_cvtps_epi32(_mm_mul_ps(a, log2e)); // round to nearest
        const __m128 nf = _mm_cvtepi32_ps(ni);
        const __m128 r = _mm_sub_ps(a, _mm_mul_ps(nf, ln2));
        __m128 p = _mm_add_ps(k6, _mm_mul_ps(r, k7));
        p = _mm_add_ps(k5, _mm_mul_ps(r, p));
        p = _mm_add_ps(k4, _mm_mul_ps(r, p));
        p = _mm_add_ps(k3, _mm_mul_ps(r, p));
        p = _mm_add_ps(k2, _mm_mul_ps(r, p));
        p = _mm_add_ps(one, _mm_mul_ps(r, p));
        p = _mm_add_ps(one, _mm_mul_ps(r, p));
        // Scale by 2^n: n >= -126 here, so adding n to the exponent field is exact.
        const __m128 scale = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(ni, _mm_set1_epi32(127)), 23));
        const __m128 ex = _mm_andnot_ps(underflow, _mm_mul_ps(p, scale));
        _mm_store_ps(e, ex);
        float l[4];
        fast_log1p_array(e, l, 4);
        _mm_store_ps(chunk, _mm_add_ps(pos, _mm_loadu_ps(l)));
        for (std::size_t k = 0; k < lanes; ++k)
            out[i + k] = chunk[k];
    }
#else
    for (; i < n; ++i)
        out[i] = fast_softplus(z[i]);
#endif
}

} // namespace gpusched
