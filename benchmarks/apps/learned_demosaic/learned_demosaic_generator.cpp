// Learned demosaic: reconstructs an RGB image from an RGGB Bayer mosaic with
// bilinear interpolation plus a residual predicted by a small CNN.
//
// The mosaic is packed into a half-resolution 4-channel image (R, Gr, Gb, B
// of each 2x2 block). The CNN sees the high-pass part of it (each channel
// minus its 3x3 local mean) and is conv 3x3 (4 -> 16) + ReLU, conv 1x1
// (16 -> 16) + ReLU, conv 1x1 (16 -> 12): a correction for each of the 3
// colours at each of the 4 positions of the 2x2 block. The output is the
// bilinear demosaic plus that correction, except where the mosaic sampled
// the colour itself, which passes through untouched. The network has no
// biases, so flat and linearly varying regions (zero high-pass) get exactly
// the bilinear answer, which is exact there.
//
// The weights are not learned here: they come from a fixed integer hash of
// each weight's index (He-style scale sqrt(2 / fan_in)), so every backend
// computes bit-identical weights and nothing is loaded from disk.
//
// Stages: mosaic clamp, packed, local mean, features, 3 weight Funcs, conv1,
// hidden1, conv2, hidden2, residual (conv3), bilinear R, G, B, output =
// 16 Funcs. Sizes: 1536x2560 mosaic, 1536x2560 RGB output. See
// docs/apps/learned_demosaic.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <cmath>
#include <string>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

constexpr int kPacked = 4;    // R, Gr, Gb, B
constexpr int kHidden = 16;   // channels of both hidden layers
constexpr int kResidual = 12; // 4 block positions x 3 colours

// A deterministic weight in [-scale, scale) from a 32-bit integer hash
// (xorshift-multiply) of its index and layer seed. Integer arithmetic only,
// so CPU and GPU builds agree exactly.
Expr hashed_weight(Expr index, uint32_t seed, float scale) {
    auto u32 = [](uint32_t v) { return cast<uint32_t>(Expr((uint64_t)v)); };
    Expr h = cast<uint32_t>(index) * u32(0x9E3779B1u) + u32(seed);
    h = h ^ (h >> 15);
    h = h * u32(0x2C1B3C6Du);
    h = h ^ (h >> 12);
    h = h * u32(0x297A2D39u);
    h = h ^ (h >> 15);
    Expr unit = cast<float>(h & 0xFFFF) * (1.0f / 65536.0f); // [0, 1)
    return (unit * 2.0f - 1.0f) * scale;
}

class LearnedDemosaic : public Generator<LearnedDemosaic> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 2>> mosaic{"mosaic"};  // RGGB: R at (even, even), B at (odd, odd)
    Output<Buffer<float, 3>> output{"output"}; // (x, y, c), RGB

    void generate() {
        // Mirroring about the edge pixel keeps the Bayer phase (x = -1 -> 1).
        clamped = BoundaryConditions::mirror_interior(mosaic);

        // Half resolution, channel k = position (k % 2, k / 2) in the block.
        packed(x, y, k) = clamped(2 * x + k % 2, 2 * y + k / 2);

        Expr sum = 0.0f;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                sum += packed(x + dx, y + dy, k);
            }
        }
        local_mean(x, y, k) = sum * (1.0f / 9.0f);
        features(x, y, k) = packed(x, y, k) - local_mean(x, y, k);

        // Weight tensors: w1(kx, ky, ci, co), w2(ci, co), w3(ci, co).
        w1(kx, ky, ci, co) = hashed_weight(((co * kPacked + ci) * 3 + ky) * 3 + kx, 0x1234567u,
                                           std::sqrt(2.0f / (9 * kPacked)));
        w2(ci, co) = hashed_weight(co * kHidden + ci, 0x2345678u, std::sqrt(2.0f / kHidden));
        w3(ci, co) = hashed_weight(co * kHidden + ci, 0x3456789u, std::sqrt(1.0f / kHidden));

        r1 = RDom(0, 3, 0, 3, 0, kPacked, "r1");
        conv1(x, y, k) = 0.0f;
        conv1(x, y, k) += w1(r1.x, r1.y, r1.z, k) * features(x + r1.x - 1, y + r1.y - 1, r1.z);
        hidden1(x, y, k) = max(0.0f, conv1(x, y, k));

        r2 = RDom(0, kHidden, "r2");
        conv2(x, y, k) = 0.0f;
        conv2(x, y, k) += w2(r2, k) * hidden1(x, y, r2);
        hidden2(x, y, k) = max(0.0f, conv2(x, y, k));

        r3 = RDom(0, kHidden, "r3");
        residual(x, y, k) = 0.0f;
        residual(x, y, k) += w3(r3, k) * hidden2(x, y, r3);

        // Bilinear demosaic, exact for linearly varying images.
        Expr xodd = (x % 2) == 1, yodd = (y % 2) == 1;
        Expr m = clamped(x, y);
        Expr horiz = (clamped(x - 1, y) + clamped(x + 1, y)) * 0.5f;
        Expr vert = (clamped(x, y - 1) + clamped(x, y + 1)) * 0.5f;
        Expr cross = (horiz + vert) * 0.5f;
        Expr diag =
            (clamped(x - 1, y - 1) + clamped(x + 1, y - 1) + clamped(x - 1, y + 1) + clamped(x + 1, y + 1)) *
            0.25f;
        bilinear_g(x, y) = select(xodd != yodd, m, cross);
        bilinear_r(x, y) = select(!xodd && !yodd, m, xodd && !yodd, horiz, !xodd && yodd, vert, diag);
        bilinear_b(x, y) = select(xodd && yodd, m, !xodd && yodd, horiz, xodd && !yodd, vert, diag);

        Expr pos = (x % 2) + 2 * (y % 2);
        // Colour the mosaic sampled here: R at position 0, G at 1 and 2, B at 3.
        Expr sampled = select(pos == 0, 0, pos == 3, 2, 1);
        Expr base = mux(c, {bilinear_r(x, y), bilinear_g(x, y), bilinear_b(x, y)});
        output(x, y, c) = select(c == sampled, base, base + residual(x / 2, y / 2, pos * 3 + c));

        // Paper suite size: 1536x2560.
        mosaic.set_estimates({{0, 1536}, {0, 2560}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule();
    }

private:
    Var x{"x"}, y{"y"}, k{"k"}, c{"c"};
    Var kx{"kx"}, ky{"ky"}, ci{"ci"}, co{"co"};
    RDom r1, r2, r3;
    Func clamped{"clamped"}, packed{"packed"}, local_mean{"local_mean"}, features{"features"};
    Func w1{"w1"}, w2{"w2"}, w3{"w3"};
    Func conv1{"conv1"}, hidden1{"hidden1"}, conv2{"conv2"}, hidden2{"hidden2"}, residual{"residual"};
    Func bilinear_r{"bilinear_r"}, bilinear_g{"bilinear_g"}, bilinear_b{"bilinear_b"};

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("learned_demosaic", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    // Floor: every image-sized Func its own kernel(s), 16x16 threads over
    // (x, y), channels serial per thread. The mosaic clamp and the weight
    // formulas (a handful of integer ops) are inlined.
    void schedule_naive() {
        Var xo, yo, xi, yi;
        for (Func f : {packed, local_mean, features, conv1, hidden1, conv2, hidden2, residual}) {
            f.compute_root().reorder(k, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16,
                                                       TailStrategy::GuardWithIf);
        }
        for (Func f : {conv1, conv2, residual}) {
            f.update().reorder(k, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        }
        for (Func f : {bilinear_r, bilinear_g, bilinear_b}) {
            f.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        }
        output.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16,
                                                        TailStrategy::GuardWithIf);
    }

    // Three small weight kernels plus two image kernels.
    // Weights: computed once (one thread per weight) so the hash is not
    // re-evaluated per multiply-add; then read through the cache.
    // Kernel 1, hidden1 at half resolution: 16x8 pixels per block, each
    // thread accumulates all 16 output channels in registers (unrolled, so
    // each feature value loaded feeds 16 FMAs), the 3x3 taps unrolled. The
    // block's features, with their 1-pixel halo, are staged in shared memory
    // (18 x 10 x 4 floats = 2.9 KB); the local mean and packing are inlined
    // into that staging.
    // Kernel 2, the output at full resolution: 32x16 pixels per block (16x8
    // at half resolution). The block first computes the 12 residual channels
    // for its 16x8 half-resolution pixels into shared memory (6 KB), each
    // thread doing one pixel with hidden2 kept in its registers (16 values);
    // then each thread writes the 3 colours of one full-resolution pixel,
    // with the bilinear interpolation inlined.
    void schedule_manual() {
        Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
        w1.compute_root().gpu_blocks(co).gpu_threads(ci);
        w2.compute_root().gpu_blocks(co).gpu_threads(ci);
        w3.compute_root().gpu_blocks(co).gpu_threads(ci);

        hidden1.compute_root()
            .bound(k, 0, kHidden)
            .reorder(k, x, y)
            .gpu_tile(x, y, xo, yo, xi, yi, 16, 8)
            .unroll(k);
        conv1.compute_at(hidden1, xi).unroll(k);
        conv1.update().reorder(k, r1.x, r1.y, r1.z).unroll(k).unroll(r1.x).unroll(r1.y);
        features.compute_at(hidden1, xo)
            .store_in(MemoryType::GPUShared)
            .reorder(k, x, y)
            .gpu_threads(x, y)
            .unroll(k);

        output.compute_root()
            .bound(c, 0, 3)
            .reorder(c, x, y)
            .gpu_tile(x, y, xo, yo, xi, yi, 32, 16)
            .unroll(c);
        residual.compute_at(output, xo)
            .store_in(MemoryType::GPUShared)
            .reorder(k, x, y)
            .gpu_threads(x, y)
            .unroll(k);
        // r3 unrolled too: hidden2 is then indexed by constants and stays in
        // registers instead of a local-memory array.
        residual.update().reorder(k, r3, x, y).gpu_threads(x, y).unroll(k).unroll(r3);
        hidden2.compute_at(residual, x).unroll(k);
        conv2.compute_at(residual, x).unroll(k);
        conv2.update().reorder(k, r2).unroll(k);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(LearnedDemosaic, learned_demosaic)
