#pragma once
// log(1 + x) for the schedule-feature compression of sec. 5.2, fast enough to
// run 75 times per stage evaluation (glibc's log1p alone would eat most of
// the per-stage budget). Both inference and training use this function, so
// the network sees identical inputs in both.
//
// Accuracy: error < 2e-7 x max(1, log1p(x)) against std::log1p for 0 <= x < 3e38
// (test/costmodel checks it). Defined for x >= 0; negative inputs are clamped
// to 0 (features are >= 0 by invariant).

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpusched {

inline float fast_log1p(float x) {
    x = x > 0.0f ? x : 0.0f;
    const float y = 1.0f + x;
    std::uint32_t bits;
    std::memcpy(&bits, &y, 4);
    int e = static_cast<int>(bits >> 23) - 127;
    bits = (bits & 0x007FFFFFu) | 0x3F800000u;
    float m;
    std::memcpy(&m, &bits, 4);
    // Centre the mantissa on 1 (m in [sqrt(1/2), sqrt(2))) so t stays small.
    if (m > 1.41421356f) {
        m *= 0.5f;
        e += 1;
    }
    // log(m) = 2 atanh(t), t = (m-1)/(m+1), |t| <= 0.1716: the odd series to
    // t^9 leaves an error below 2 * t^11 / 11 ~ 1e-9.
    const float t = (m - 1.0f) / (m + 1.0f);
    const float t2 = t * t;
    const float series =
        t * (2.0f + t2 * (2.0f / 3.0f + t2 * (2.0f / 5.0f + t2 * (2.0f / 7.0f + t2 * (2.0f / 9.0f)))));
    // log(y) is of the rounded y = 1 + x; scaling by x / (y - 1) (y - 1 is
    // exact) corrects for that rounding (Goldberg 1991, "What every computer
    // scientist should know about floating-point arithmetic", thm. 4), so the
    // error stays relative for small x. Below 1e-4, x - x^2/2 is exact to
    // ~3e-13 and avoids the division by a tiny y - 1.
    const float result = (static_cast<float>(e) * 0.69314718056f + series) * (x / (y - 1.0f));
    return x < 1e-4f ? x - 0.5f * x * x : result;
}

// out[i] = fast_log1p(in[i]) for i < n, four lanes at a time where SSE2 is
// available. The SSE2 path performs the same IEEE operations in the same
// order as the scalar one, so both give bit-identical results.
inline void fast_log1p_array(const float *in, float *out, std::size_t n) {
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f), half = _mm_set1_ps(0.5f);
    const __m128 sqrt2 = _mm_set1_ps(1.41421356f), ln2 = _mm_set1_ps(0.69314718056f),
                 tiny = _mm_set1_ps(1e-4f);
    const __m128i mant_mask = _mm_set1_epi32(0x007FFFFF), one_bits = _mm_set1_epi32(0x3F800000);
    const __m128i bias = _mm_set1_epi32(127);
    const __m128 c1 = _mm_set1_ps(2.0f), c3 = _mm_set1_ps(2.0f / 3.0f), c5 = _mm_set1_ps(2.0f / 5.0f);
    const __m128 c7 = _mm_set1_ps(2.0f / 7.0f), c9 = _mm_set1_ps(2.0f / 9.0f);
    for (; i + 4 <= n; i += 4) {
        __m128 x = _mm_loadu_ps(in + i);
        x = _mm_and_ps(x, _mm_cmpgt_ps(x, zero)); // x > 0 ? x : 0 (also maps NaN to 0)
        const __m128 y = _mm_add_ps(one, x);
        const __m128i bits = _mm_castps_si128(y);
        __m128i e = _mm_sub_epi32(_mm_srli_epi32(bits, 23), bias);
        __m128 m = _mm_castsi128_ps(_mm_or_si128(_mm_and_si128(bits, mant_mask), one_bits));
        const __m128 big = _mm_cmpgt_ps(m, sqrt2);
        m = _mm_or_ps(_mm_and_ps(big, _mm_mul_ps(m, half)), _mm_andnot_ps(big, m));
        e = _mm_sub_epi32(e, _mm_castps_si128(big)); // big lanes are all-ones = -1
        const __m128 t = _mm_div_ps(_mm_sub_ps(m, one), _mm_add_ps(m, one));
        const __m128 t2 = _mm_mul_ps(t, t);
        __m128 s = _mm_add_ps(c7, _mm_mul_ps(t2, c9));
        s = _mm_add_ps(c5, _mm_mul_ps(t2, s));
        s = _mm_add_ps(c3, _mm_mul_ps(t2, s));
        s = _mm_add_ps(c1, _mm_mul_ps(t2, s));
        s = _mm_mul_ps(t, s);
        const __m128 small = _mm_cmplt_ps(x, tiny);
        // Small lanes would divide by a tiny or zero y - 1; give them a safe divisor.
        const __m128 u = _mm_or_ps(_mm_and_ps(small, one), _mm_andnot_ps(small, _mm_sub_ps(y, one)));
        const __m128 result =
            _mm_mul_ps(_mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(e), ln2), s), _mm_div_ps(x, u));
        const __m128 series2 = _mm_sub_ps(x, _mm_mul_ps(half, _mm_mul_ps(x, x)));
        _mm_storeu_ps(out + i, _mm_or_ps(_mm_and_ps(small, series2), _mm_andnot_ps(small, result)));
    }
#endif
    for (; i < n; ++i)
        out[i] = fast_log1p(in[i]);
}

} // namespace gpusched
