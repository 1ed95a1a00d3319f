// Runs one OpenCL build (naive or manual GPU schedule) of a group-A app on fixed inputs from
// pocl_inputs.h and writes the output's bytes to argv[1]. It is its own process because an
// OpenCL driver that misbehaves must not take the test binary down with it; the test compares
// the bytes with the CPU build. Which app and function: POCL_APP_* and POCL_FN, set by CMake.
#include "pocl_inputs.h"
#include POCL_HEADER

#include <cstdio>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT_FILE\n", argv[0]);
        return 2;
    }
    using namespace apps_test;
#if defined(POCL_APP_stencil_chain) || defined(POCL_APP_bilateral_grid)
    auto in = pocl_float_input(0, 21);
    Halide::Runtime::Buffer<float> out(kPoclW, kPoclH);
#elif defined(POCL_APP_harris)
    auto in = pocl_float_input(3, 22);
    Halide::Runtime::Buffer<float> out(kPoclW, kPoclH);
#elif defined(POCL_APP_max_filter)
    auto in = pocl_float_input(3, 23);
    Halide::Runtime::Buffer<float> out(kPoclW, kPoclH, 3);
#elif defined(POCL_APP_histogram_equalize)
    auto in = pocl_u8_input(24);
    Halide::Runtime::Buffer<uint8_t> out(kPoclW, kPoclH, 3);
#else
#error "pocl_runner.cpp: unknown POCL_APP"
#endif
    const int err = POCL_FN(in, out);
    if (err != 0) {
        std::fprintf(stderr, "%s failed with Halide error %d\n", "POCL_FN", err);
        return 1;
    }
    out.copy_to_host();
    std::FILE *f = std::fopen(argv[1], "wb");
    if (!f) return 3;
    std::fwrite(out.data(), 1, out.size_in_bytes(), f);
    std::fclose(f);
    return 0;
}
