// Runs the OpenCL library (gpusched's schedule) and the CPU library (Halide's
// default schedule) on the same seeded input and compares their outputs.
// Prints one line; exit 0 when they agree, 1 when they do not, 2 when a
// pipeline fails.
#include <cmath>
#include <cstdio>
#include <random>

#include "HalideBuffer.h"
#include "blur_cpu.h"
#include "blur_opencl.h"

int main() {
    const int width = 512, height = 384;
    Halide::Runtime::Buffer<float> input(width, height);
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> dist(0.f, 1.f);
    input.for_each_value([&](float &v) { v = dist(rng); });
    input.set_host_dirty();

    Halide::Runtime::Buffer<float> on_opencl(width, height), on_cpu(width, height);
    if (int e = blur_opencl(input, on_opencl); e != 0) {
        std::printf("blur_opencl failed with Halide error %d\n", e);
        return 2;
    }
    on_opencl.copy_to_host();
    if (int e = blur_cpu(input, on_cpu); e != 0) {
        std::printf("blur_cpu failed with Halide error %d\n", e);
        return 2;
    }

    double max_error = 0;
    long mismatches = 0;
    on_cpu.for_each_element([&](int x, int y) {
        const double a = on_opencl(x, y), b = on_cpu(x, y);
        const double error = std::fabs(a - b);
        max_error = std::max(max_error, error);
        if (!(error <= 1e-5 * std::max(1.0, std::fabs(b)))) ++mismatches;
    });
    std::printf("%s: %d x %d float32 values, %ld differ, max abs error %g\n",
                mismatches ? "mismatch" : "agree", width, height, mismatches, max_error);
    return mismatches ? 1 : 0;
}
