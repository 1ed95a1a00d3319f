// max_pool_indices: the CPU build equals a plain C++ 3x3 stride-2 max pool with indices, exactly
// (the values are selected input values and the indices integers: no rounding anywhere), on
// inputs with many ties (first in row-major window order must win) and on random floats, for an
// odd size whose last window ends on the input's last row and column. The tie input is checked to
// tell first-wins from last-wins ties apart (what a reordered window would give), and a shifted
// input to give indices relative to the input's own min.
#include "max_pool_indices_cpu.h"
#include "ml_app_checks.h"

#include <HalideBuffer.h>

#include <cstdint>

namespace {

using Halide::Runtime::Buffer;

struct PoolRef {
    Buffer<float> values;
    Buffer<int32_t> indices;
};

int pooled(int extent) {
    return (extent - 3) / 2 + 1;
}

// PyTorch's max_pool2d(kernel 3, stride 2, return_indices=True) on each channel: the window is
// scanned in row-major order and an element replaces the best only if strictly greater (or, with
// last_wins, also if equal: the planted fault).
PoolRef reference(const Buffer<float> &in, bool last_wins = false) {
    const int W = in.dim(0).extent(), H = in.dim(1).extent(), C = in.dim(2).extent();
    const int x0 = in.dim(0).min(), y0 = in.dim(1).min(), c0 = in.dim(2).min();
    PoolRef r{Buffer<float>(pooled(W), pooled(H), C), Buffer<int32_t>(pooled(W), pooled(H), C)};
    for (int c = 0; c < C; c++) {
        for (int y = 0; y < pooled(H); y++) {
            for (int x = 0; x < pooled(W); x++) {
                float best = 0;
                int32_t idx = -1;
                for (int ry = 0; ry < 3; ry++) {
                    for (int rx = 0; rx < 3; rx++) {
                        const int px = 2 * x + rx, py = 2 * y + ry;
                        const float v = in(x0 + px, y0 + py, c0 + c);
                        if (idx < 0 || v > best || (last_wins && v == best)) {
                            best = v;
                            idx = py * W + px;
                        }
                    }
                }
                r.values(x, y, c) = best;
                r.indices(x, y, c) = idx;
            }
        }
    }
    return r;
}

// Points where the two outputs differ from the reference (0: equal everywhere).
int mismatches(const Buffer<float> &values, const Buffer<int32_t> &indices, const PoolRef &ref) {
    int n = 0;
    values.for_each_element([&](int x, int y, int c) {
        if (values(x, y, c) != ref.values(x, y, c) || indices(x, y, c) != ref.indices(x, y, c)) n++;
    });
    return n;
}

int index_mismatches(const PoolRef &a, const PoolRef &b) {
    int n = 0;
    a.indices.for_each_element([&](int x, int y, int c) {
        if (a.indices(x, y, c) != b.indices(x, y, c)) n++;
    });
    return n;
}

TEST_CASE("max_pool_indices: values and indices equal a plain C++ max pool with first-wins ties",
          "[apps_ml][max_pool_indices]") {
    // 37 x 23: 18 x 11 windows, the last ones ending on column 36 and row 22. Integer values in
    // [0, 3] make most windows' maximum appear more than once.
    const int W = 37, H = 23, C = 5;
    Buffer<float> in(W, H, C);
    apps_test::Rng rng(31);
    in.for_each_value([&](float &v) { v = static_cast<float>(rng.uniform_int(0, 3)); });
    Buffer<float> values(pooled(W), pooled(H), C);
    Buffer<int32_t> indices(pooled(W), pooled(H), C);
    REQUIRE(max_pool_indices_cpu(in, values, indices) == 0);

    const PoolRef ref = reference(in);
    CHECK(mismatches(values, indices, ref) == 0);
    // The input tells the tie rule apart: last-wins ties (a window scanned in another order)
    // would give other indices at many points.
    const PoolRef last_wins = reference(in, /*last_wins=*/true);
    CHECK(index_mismatches(ref, last_wins) > 50);
}

TEST_CASE("max_pool_indices: random floats, negative windows included, match exactly, with indices relative "
          "to the input's min",
          "[apps_ml][max_pool_indices]") {
    const int W = 37, H = 23, C = 5;
    Buffer<float> in(W, H, C);
    apps_test::Rng rng(32);
    // Channel 0 entirely negative: a pool seeded with 0 instead of a window element would show.
    in.for_each_element([&](int x, int y, int c) {
        in(x, y, c) = c == 0 ? rng.uniform(-5.0f, -1.0f) : rng.uniform(-1.0f, 1.0f);
    });
    Buffer<float> values(pooled(W), pooled(H), C);
    Buffer<int32_t> indices(pooled(W), pooled(H), C);
    REQUIRE(max_pool_indices_cpu(in, values, indices) == 0);
    const PoolRef ref = reference(in);
    CHECK(mismatches(values, indices, ref) == 0);

    // The same data at another origin: same values, same (plane-relative) indices.
    Buffer<float> shifted = in.copy();
    shifted.set_min(5, -3, 2);
    Buffer<float> values2(pooled(W), pooled(H), C);
    Buffer<int32_t> indices2(pooled(W), pooled(H), C);
    REQUIRE(max_pool_indices_cpu(shifted, values2, indices2) == 0);
    CHECK(mismatches(values2, indices2, ref) == 0);
}

} // namespace

ML_APP_PTX_TESTS("max_pool_indices")
