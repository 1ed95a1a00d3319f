// SGEMM (benchmarks/apps/sgemm): alpha * A * B + beta * C against a double
// precision C++ loop, with non-square odd sizes and alpha, beta != 1 so
// swapped dimensions or a dropped term would show.
#include "appsB_sgemm_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

using Halide::Runtime::Buffer;

TEST_CASE("sgemm matches the C++ reference", "[apps_groupB][sgemm]") {
    constexpr int kM = 11, kN = 17, kK = 13;
    const float alpha = 1.5f, beta = -0.5f;
    Buffer<float, 2> a(kK, kM), b(kN, kK), c(kN, kM);
    appsB::fill_uniform(a, 31, -1.0f, 1.0f);
    appsB::fill_uniform(b, 32, -1.0f, 1.0f);
    appsB::fill_uniform(c, 33, -1.0f, 1.0f);
    Buffer<float, 2> out(kN, kM);
    REQUIRE(appsB_sgemm_cpu(alpha, beta, a, b, c, out) == 0);
    for (int i = 0; i < kM; i++) {
        for (int j = 0; j < kN; j++) {
            double sum = 0;
            for (int k = 0; k < kK; k++) {
                sum += (double)a(k, i) * b(j, k);
            }
            CHECK(out(j, i) == Approx(alpha * sum + beta * c(j, i)).margin(1e-4));
        }
    }
}
