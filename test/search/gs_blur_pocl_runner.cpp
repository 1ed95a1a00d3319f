// Runs the gs_blur pipeline twice in this process: the CPU reference build and
// the OpenCL build scheduled by the gpusched plugin (on POCL when there is no
// GPU), and compares the outputs. Exit 0 if every value is within 1e-4 of the
// reference, 1 if not (a NaN counts as a mismatch), 2 or 3 if a build failed.
// Kept out of the test process: Halide's OpenCL runtime and libHalide's JIT
// do not mix.
//
// --plant-nan overwrites the OpenCL output with NaN before the comparison:
// the tests run it to see the comparison fail an output that is all NaN.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "HalideBuffer.h"
#include "gs_blur_cpu.h"

// The build links the library the plugin scheduled at build time; the e2e
// test recompiles this file against libraries it schedules with forced
// decisions (-DGS_HEADER=... -DGS_FUNC=...).
#ifndef GS_FUNC
#define GS_FUNC gs_blur_ocl
#define GS_HEADER "gs_blur_ocl.h"
#endif
#include GS_HEADER

int main(int argc, char **argv) {
    const bool plant_nan = argc > 1 && std::strcmp(argv[1], "--plant-nan") == 0;
    const int w = 512, h = 256;
    Halide::Runtime::Buffer<float> in(w, h), ref(w, h), out(w, h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            in(x, y) = std::sin(0.05f * x) * std::cos(0.11f * y) + 0.001f * ((x * 7 + y * 13) % 97);
    if (int e = gs_blur_cpu(in, 1.5f, ref)) {
        std::fprintf(stderr, "cpu build failed: %d\n", e);
        return 2;
    }
    if (int e = GS_FUNC(in, 1.5f, out)) {
        std::fprintf(stderr, "opencl build failed: %d\n", e);
        return 3;
    }
    out.copy_to_host();
    if (plant_nan) out.fill(std::numeric_limits<float>::quiet_NaN());
    long differ = 0;
    double worst = 0;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            const double d = std::fabs(double(out(x, y)) - double(ref(x, y)));
            if (!(d <= 1e-4)) differ++; // true for NaN
            if (d > worst) worst = d;
        }
    }
    std::printf("mismatches: %ld of %d values differ by more than 1e-4 (largest finite difference %g)\n",
                differ, w * h, worst);
    return differ == 0 ? 0 : 1;
}
