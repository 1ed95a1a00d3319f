// Small helpers shared by the group B app tests: deterministic pseudo-random
// buffer filling and comparisons. Inputs come from a fixed-seed LCG so every
// run (and every machine) tests the same values.
#pragma once

#include "HalideBuffer.h"

#include <cmath>
#include <cstdint>

namespace appsB {

// Park-Miller style LCG, enough for test inputs; uniform in [lo, hi).
class Lcg {
public:
    explicit Lcg(uint32_t seed) : state_(seed ? seed : 1u) {}
    float uniform(float lo, float hi) {
        state_ = (uint32_t)(((uint64_t)state_ * 48271u) % 2147483647u);
        return lo + (hi - lo) * (float)(state_ / 2147483647.0);
    }

private:
    uint32_t state_;
};

template <int D>
void fill_uniform(Halide::Runtime::Buffer<float, D> &buf, uint32_t seed, float lo, float hi) {
    Lcg rng(seed);
    buf.for_each_value([&](float &v) { v = rng.uniform(lo, hi); });
    // Writes through the host pointer do not set the flag; without it a GPU
    // pipeline would never copy the values to the device.
    buf.set_host_dirty();
}

} // namespace appsB
