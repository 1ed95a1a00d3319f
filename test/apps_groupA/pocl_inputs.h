// Deterministic inputs shared by the POCL runners (which run an OpenCL build of a GPU schedule
// in their own process) and the test that compares their output with the CPU build. Sizes are
// at least one manual-schedule tile in each dimension.
#pragma once

#include "app_test_util.h"

#include <HalideBuffer.h>

#include <cstdint>

namespace apps_test {

constexpr int kPoclW = 64, kPoclH = 48;

inline Halide::Runtime::Buffer<float> pocl_float_input(int channels, uint64_t seed) {
    Halide::Runtime::Buffer<float> b = channels ? Halide::Runtime::Buffer<float>(kPoclW, kPoclH, channels)
                                                : Halide::Runtime::Buffer<float>(kPoclW, kPoclH);
    Rng rng(seed);
    b.for_each_value([&](float &v) { v = rng.uniform(0.0f, 1.0f); });
    // for_each_value does not mark the host dirty; without it the GPU runtime would never copy
    // these values to the device.
    b.set_host_dirty();
    return b;
}

inline Halide::Runtime::Buffer<uint8_t> pocl_u8_input(uint64_t seed) {
    Halide::Runtime::Buffer<uint8_t> b(kPoclW, kPoclH, 3);
    Rng rng(seed);
    b.for_each_value([&](uint8_t &v) { v = (uint8_t)rng.uniform_int(40, 200); });
    b.set_host_dirty();
    return b;
}

} // namespace apps_test
