// Runs one OpenCL build of a group B app (POCL_FN, declared in POCL_HEADER,
// on the inputs of pocl_cases.h's POCL_RUN) and writes its output, copied
// back to the host, as raw native-endian floats to argv[1]. Run by
// pocl_test.cpp in its own process, so a crash or hang in the OpenCL
// runtime or in POCL is a failed test, not a dead test harness.
#include "pocl_cases.h"

#include POCL_HEADER

#include <cstdio>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT_FILE\n", argv[0]);
        return 2;
    }
    Halide::Runtime::Buffer<float> out;
    const int status = appsB::pocl::POCL_RUN(POCL_FN, out);
    if (status != 0) {
        std::fprintf(stderr, "pipeline returned error %d\n", status);
        return 1;
    }
    std::FILE *f = std::fopen(argv[1], "wb");
    if (!f) {
        std::perror(argv[1]);
        return 2;
    }
    const size_t n = out.number_of_elements();
    const bool ok = std::fwrite(out.data(), sizeof(float), n, f) == n;
    std::fclose(f);
    return ok ? 0 : 2;
}
