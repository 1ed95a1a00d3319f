// Camera pipe: a flat raw image through identity colour matrices must come out flat and grey at
// exactly the tone curve's value (a short C++ reference of the curve); brighter raw gives
// brighter output; a mosaic lit only at red sites comes out red; a single hot pixel is
// suppressed.
#include "app_test_util.h"
#include "camera_pipe_cpu.h"

#include "test/catch2_compat.h"
#include <HalideBuffer.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace {

constexpr int kOutW = 40, kOutH = 32; // raw is 32 wider and 24 taller (the crop)
constexpr float kGamma = 2.0f, kContrast = 50.0f;

struct Pipe {
    Halide::Runtime::Buffer<float> m3200{4, 3}, m7000{4, 3};
    Pipe() {
        // Identity colour correction at both temperatures: [I | 0].
        for (auto *m : {&m3200, &m7000})
            m->for_each_element([&](int i, int j) { (*m)(i, j) = i == j ? 1.0f : 0.0f; });
    }
    Halide::Runtime::Buffer<uint8_t> run(Halide::Runtime::Buffer<uint16_t> &raw) {
        Halide::Runtime::Buffer<uint8_t> out(kOutW, kOutH, 3);
        int err = camera_pipe_cpu(raw, m3200, m7000, 5000.0f, kGamma, kContrast, 1.0f, 0, 1023, out);
        REQUIRE(err == 0);
        return out;
    }
};

int curve_reference(int v) {
    const float g = std::pow(v / 1023.0f, 1.0f / kGamma);
    const float s = kContrast / 100.0f;
    const float toned = g + s * (g * g * (3.0f - 2.0f * g) - g);
    return (int)std::clamp(toned * 255.0f + 0.5f, 0.0f, 255.0f);
}

Halide::Runtime::Buffer<uint16_t> flat_raw(uint16_t v) {
    Halide::Runtime::Buffer<uint16_t> raw(kOutW + 32, kOutH + 24);
    raw.fill(v);
    return raw;
}

} // namespace

TEST_CASE("camera_pipe: a flat raw image gives flat grey at the tone curve's value",
          "[apps_groupA][camera_pipe]") {
    Pipe pipe;
    for (int v : {100, 400, 900}) {
        auto raw = flat_raw((uint16_t)v);
        auto out = pipe.run(raw);
        const int expected = curve_reference(v);
        out.for_each_element([&](int x, int y, int c) { CHECK(std::abs(out(x, y, c) - expected) <= 1); });
    }
}

TEST_CASE("camera_pipe: brighter raw gives brighter output", "[apps_groupA][camera_pipe]") {
    Pipe pipe;
    auto dark_raw = flat_raw(200), bright_raw = flat_raw(600);
    auto dark = pipe.run(dark_raw), bright = pipe.run(bright_raw);
    CHECK((int)bright(7, 9, 1) > (int)dark(7, 9, 1) + 20);
}

TEST_CASE("camera_pipe: light only at red sites comes out red", "[apps_groupA][camera_pipe]") {
    Pipe pipe;
    Halide::Runtime::Buffer<uint16_t> raw(kOutW + 32, kOutH + 24);
    // GRBG: red at odd x on even rows.
    raw.for_each_element([&](int x, int y) { raw(x, y) = (x % 2 == 1 && y % 2 == 0) ? 800 : 50; });
    auto out = pipe.run(raw);
    for (int y = 2; y < kOutH - 2; y++) {
        for (int x = 2; x < kOutW - 2; x++) {
            CHECK((int)out(x, y, 0) > (int)out(x, y, 1) + 50);
            CHECK((int)out(x, y, 0) > (int)out(x, y, 2) + 50);
        }
    }
}

TEST_CASE("camera_pipe: a single hot pixel is suppressed", "[apps_groupA][camera_pipe]") {
    Pipe pipe;
    auto raw = flat_raw(300);
    raw(16 + 20, 12 + 14) = 1023; // output pixel (20, 14)
    auto out = pipe.run(raw);
    const int expected = curve_reference(300);
    out.for_each_element([&](int x, int y, int c) { CHECK(std::abs(out(x, y, c) - expected) <= 1); });
}
