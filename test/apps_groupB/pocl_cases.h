// The inputs on which a GPU schedule of each group B app is checked on POCL
// (OpenCL on the CPU). Shared by the runner (which runs the OpenCL build,
// in its own process) and the test (which runs the CPU build on the same
// inputs and compares). Sizes are small but at least one tile of the GPU
// schedules in every dimension (their outputs are tiled with ShiftInwards),
// deliberately not multiples of the tiles where the schedule allows it, and
// at least 256x256 for interpolate and BGU, whose CPU build is tiled by 256.
//
// Each run_<app>(fn, out) builds the app's deterministic inputs, calls fn
// (the AOT pipeline, CPU or OpenCL) and returns its status; `out` comes back
// on the host, laid out densely.
#pragma once

#include "apps_test_util.h"

#include "HalideBuffer.h"

#include <string>

namespace appsB::pocl {

using Halide::Runtime::Buffer;

// Marks inputs written on the host as such, so the GPU runtime copies them.
template <typename... Bufs> void host_written(Bufs &...bufs) {
    (bufs.set_host_dirty(), ...);
}

template <typename Fn> int finish(int status, Buffer<float> &out) {
    if (status == 0) {
        out.copy_to_host();
    }
    return status;
}

template <typename Fn> int run_unsharp_mask(Fn fn, Buffer<float> &out) {
    Buffer<float, 3> in(96, 70, 3);
    fill_uniform(in, 101, 0.05f, 1.0f);
    out = Buffer<float>(96, 70, 3);
    host_written(in);
    return finish<Fn>(fn(in, out), out);
}

template <typename Fn> int run_interpolate(Fn fn, Buffer<float> &out) {
    Buffer<float, 3> in(256, 260, 4);
    fill_uniform(in, 102, 0.0f, 1.0f);
    in.for_each_element([&](int x, int y, int c) {
        if (c == 3 && (x * 7 + y * 3) % 4 != 0) {
            in(x, y, c) = 0.0f; // holes to fill
        }
    });
    out = Buffer<float>(256, 260, 3);
    host_written(in);
    return finish<Fn>(fn(in, out), out);
}

template <typename Fn> int run_conv_layer(Fn fn, Buffer<float> &out) {
    constexpr int kW = 40, kH = 6, kCI = 13, kCO = 64, kN = 2; // CI: not a multiple of the splits by 4
    Buffer<float, 4> input(kW + 2, kH + 2, kCI, kN), filter(3, 3, kCI, kCO);
    Buffer<float, 1> bias(kCO);
    fill_uniform(input, 103, -1.0f, 1.0f);
    fill_uniform(filter, 104, -0.5f, 0.5f);
    fill_uniform(bias, 105, -0.5f, 0.5f);
    out = Buffer<float>(kW, kH, kCO, kN);
    host_written(input, filter, bias);
    return finish<Fn>(fn(input, filter, bias, out), out);
}

template <typename Fn> int run_sgemm(Fn fn, Buffer<float> &out) {
    constexpr int kM = 96, kN = 128, kK = 40;
    Buffer<float, 2> a(kK, kM), b(kN, kK), c(kN, kM);
    fill_uniform(a, 106, -1.0f, 1.0f);
    fill_uniform(b, 107, -1.0f, 1.0f);
    fill_uniform(c, 108, -1.0f, 1.0f);
    out = Buffer<float>(kN, kM);
    host_written(a, b, c);
    return finish<Fn>(fn(1.5f, -0.5f, a, b, c, out), out);
}

template <typename Fn> int run_iir_blur(Fn fn, Buffer<float> &out) {
    Buffer<float, 3> in(70, 45, 3);
    fill_uniform(in, 109, 0.0f, 1.0f);
    out = Buffer<float>(70, 45, 3);
    host_written(in);
    return finish<Fn>(fn(in, 0.25f, out), out);
}

template <typename Fn> int run_bgu(Fn fn, Buffer<float> &out) {
    Buffer<float, 3> low_in(32, 33, 3), low_out(32, 33, 3), full_in(256, 264, 3);
    fill_uniform(low_in, 110, 0.0f, 1.0f);
    fill_uniform(full_in, 111, 0.0f, 1.0f);
    // A non-affine operator, so the per-cell fits differ.
    low_out.for_each_element([&](int x, int y, int c) {
        const float v = low_in(x, y, c);
        low_out(x, y, c) = v * v * (c + 1) * 0.5f + 0.1f * low_in(x, y, (c + 1) % 3);
    });
    out = Buffer<float>(256, 264, 3);
    host_written(low_in, low_out, full_in);
    return finish<Fn>(fn(low_in, low_out, full_in, out), out);
}

template <typename Fn> int run_depthwise_separable_conv(Fn fn, Buffer<float> &out) {
    constexpr int kW = 70, kH = 9, kCI = 8, kCO = 6, kN = 2;
    Buffer<float, 4> input(kW, kH, kCI, kN);
    Buffer<float, 3> dw(3, 3, kCI);
    Buffer<float, 2> pw(kCI, kCO);
    Buffer<float, 1> bias(kCO);
    fill_uniform(input, 112, -1.0f, 1.0f);
    fill_uniform(dw, 113, -0.5f, 0.5f);
    fill_uniform(pw, 114, -1.0f, 1.0f);
    fill_uniform(bias, 115, -0.2f, 0.2f);
    out = Buffer<float>(kW, kH, kCO, kN);
    host_written(input, dw, pw, bias);
    return finish<Fn>(fn(input, dw, pw, bias, out), out);
}

template <typename Fn> int run_learned_demosaic(Fn fn, Buffer<float> &out) {
    Buffer<float, 2> mosaic(70, 52);
    fill_uniform(mosaic, 116, 0.0f, 1.0f);
    out = Buffer<float>(70, 52, 3);
    host_written(mosaic);
    return finish<Fn>(fn(mosaic, out), out);
}

} // namespace appsB::pocl
