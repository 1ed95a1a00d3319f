// Learned demosaic (benchmarks/apps/learned_demosaic): properties of a
// residual-CNN demosaic. Sampled colours pass through exactly; flat and
// linearly varying images (where bilinear demosaicking is exact and the
// network's high-pass input is zero) are reconstructed exactly away from the
// border; and on textured input the output is the bilinear answer plus the
// residual of the network, recomputed here in plain C++ (hashed weights,
// three convolutions), a correction that is not negligible.
#include "appsB_learned_demosaic_cpu.h"
#include "apps_test_util.h"

#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace {

using Halide::Runtime::Buffer;

constexpr int kMosaicW = 32, kMosaicH = 24;

// Colour the RGGB mosaic sampled at (x, y): 0 red, 1 green, 2 blue.
int sampled_colour(int x, int y) {
    const int pos = (x % 2) + 2 * (y % 2);
    return pos == 0 ? 0 : (pos == 3 ? 2 : 1);
}

Buffer<float, 3> run(Buffer<float, 2> &mosaic) {
    Buffer<float, 3> out(mosaic.width(), mosaic.height(), 3);
    REQUIRE(appsB_learned_demosaic_cpu(mosaic, out) == 0);
    return out;
}

// The mosaic as the generator reads it: BoundaryConditions::mirror_interior
// (x = -1 reads x = 1, x = w reads x = w - 2).
float mirrored(const Buffer<float, 2> &m, int x, int y) {
    auto mirror = [](int i, int extent) {
        const int limit = extent - 1;
        const int wrapped = ((i % (2 * limit)) + 2 * limit) % (2 * limit);
        return limit - std::abs(wrapped - limit);
    };
    return m(mirror(x, m.width()), mirror(y, m.height()));
}

// Plain bilinear demosaic, for comparison.
float bilinear(const Buffer<float, 2> &m, int x, int y, int c) {
    auto at = [&](int dx, int dy) { return mirrored(m, x + dx, y + dy); };
    const bool xo = x % 2, yo = y % 2;
    const float h = (at(-1, 0) + at(1, 0)) / 2, v = (at(0, -1) + at(0, 1)) / 2;
    const float d = (at(-1, -1) + at(1, -1) + at(-1, 1) + at(1, 1)) / 4;
    if (c == sampled_colour(x, y)) {
        return at(0, 0);
    }
    if (c == 1) {
        return (h + v) / 2;
    }
    const bool at_same_row = (c == 0) ? !yo : yo; // row containing this colour's samples
    const bool at_same_col = (c == 0) ? !xo : xo;
    if (at_same_row) {
        return h;
    }
    if (at_same_col) {
        return v;
    }
    return d;
}

// The generator's weights, written out again: a 32-bit hash of the weight's
// index and layer seed mapped to [-scale, scale).
float hashed_weight(uint32_t index, uint32_t seed, float scale) {
    uint32_t h = index * 0x9E3779B1u + seed;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    const float unit = static_cast<float>(h & 0xFFFF) * (1.0f / 65536.0f);
    return (unit * 2.0f - 1.0f) * scale;
}

// The residual CNN of benchmarks/apps/learned_demosaic in plain C++: at each
// half-resolution pixel, 12 corrections (4 block positions x 3 colours).
// Layers: the high-pass of the packed mosaic (each channel minus its 3x3
// mean), conv 3x3 4->16 + ReLU, conv 1x1 16->16 + ReLU, conv 1x1 16->12.
Buffer<float, 3> reference_residual(const Buffer<float, 2> &m) {
    const int w = m.width() / 2, h = m.height() / 2;
    auto packed = [&](int x, int y, int k) { return mirrored(m, 2 * x + k % 2, 2 * y + k / 2); };
    auto features = [&](int x, int y, int k) {
        float sum = 0.0f;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                sum += packed(x + dx, y + dy, k);
        return packed(x, y, k) - sum * (1.0f / 9.0f);
    };
    Buffer<float, 3> residual(w, h, 12);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            float hidden1[16], hidden2[16];
            for (int co = 0; co < 16; co++) {
                float acc = 0.0f;
                for (int ci = 0; ci < 4; ci++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++)
                            acc += hashed_weight(((co * 4 + ci) * 3 + ky) * 3 + kx, 0x1234567u,
                                                 std::sqrt(2.0f / 36)) *
                                   features(x + kx - 1, y + ky - 1, ci);
                hidden1[co] = std::max(0.0f, acc);
            }
            for (int co = 0; co < 16; co++) {
                float acc = 0.0f;
                for (int ci = 0; ci < 16; ci++)
                    acc += hashed_weight(co * 16 + ci, 0x2345678u, std::sqrt(2.0f / 16)) * hidden1[ci];
                hidden2[co] = std::max(0.0f, acc);
            }
            for (int co = 0; co < 12; co++) {
                float acc = 0.0f;
                for (int ci = 0; ci < 16; ci++)
                    acc += hashed_weight(co * 16 + ci, 0x3456789u, std::sqrt(1.0f / 16)) * hidden2[ci];
                residual(x, y, co) = acc;
            }
        }
    }
    return residual;
}

} // namespace

TEST_CASE("learned_demosaic passes sampled colours through", "[apps_groupB][learned_demosaic]") {
    Buffer<float, 2> mosaic(kMosaicW, kMosaicH);
    appsB::fill_uniform(mosaic, 71, 0.0f, 1.0f);
    Buffer<float, 3> out = run(mosaic);
    mosaic.for_each_element([&](int x, int y) { CHECK(out(x, y, sampled_colour(x, y)) == mosaic(x, y)); });
}

TEST_CASE("learned_demosaic reconstructs flat and linear images exactly", "[apps_groupB][learned_demosaic]") {
    Buffer<float, 2> flat(kMosaicW, kMosaicH), ramp(kMosaicW, kMosaicH);
    flat.fill(0.4f);
    ramp.for_each_element([&](int x, int y) { ramp(x, y) = 0.1f + 0.01f * x + 0.02f * y; });
    Buffer<float, 3> out_flat = run(flat), out_ramp = run(ramp);
    out_flat.for_each_element(
        [&](int x, int y, int c) { CHECK(out_flat(x, y, c) == Approx(0.4f).margin(1e-5)); });
    // The network sees 2 half-res pixels (4 full-res) around each pixel and
    // the mirrored border is not linear, so only the interior is exact.
    for (int y = 6; y < kMosaicH - 6; y++) {
        for (int x = 6; x < kMosaicW - 6; x++) {
            for (int c = 0; c < 3; c++) {
                CHECK(out_ramp(x, y, c) == Approx(ramp(x, y)).margin(1e-5));
            }
        }
    }
}

TEST_CASE("learned_demosaic adds its CNN's residual to the bilinear result on texture",
          "[apps_groupB][learned_demosaic]") {
    Buffer<float, 2> mosaic(kMosaicW, kMosaicH);
    appsB::fill_uniform(mosaic, 72, 0.0f, 1.0f);
    Buffer<float, 3> out = run(mosaic);
    const Buffer<float, 3> residual = reference_residual(mosaic);
    double max_residual = 0;
    for (int y = 0; y < kMosaicH; y++) {
        for (int x = 0; x < kMosaicW; x++) {
            const int pos = (x % 2) + 2 * (y % 2);
            for (int c = 0; c < 3; c++) {
                const float r = c == sampled_colour(x, y) ? 0.0f : residual(x / 2, y / 2, pos * 3 + c);
                max_residual = std::max(max_residual, (double)std::abs(r));
                INFO("pixel (" << x << ", " << y << ") colour " << c << ": bilinear "
                               << bilinear(mosaic, x, y, c) << ", residual " << r);
                CHECK(out(x, y, c) == Approx(bilinear(mosaic, x, y, c) + r).margin(1e-4));
            }
        }
    }
    // On texture the network's correction is not negligible, so the
    // comparison above tells a wrong network from the bilinear answer.
    INFO("largest residual " << max_residual);
    CHECK(max_residual > 1e-2);
    CHECK(max_residual < 10.0);
}
