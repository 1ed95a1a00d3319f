// Camera pipe: a raw-to-RGB camera pipeline. Input is a 10-bit Bayer mosaic (GRBG: green and
// red on even rows, blue and green on odd rows) in uint16; output is 8-bit RGB, cropped by
// 16 columns and 12 rows on each side so no boundary condition is needed. Stages:
//   1. hot-pixel suppression: clamp each sample to the max of its four same-colour neighbours;
//   2. deinterleave into four half-resolution planes (g_gr, r_r, b_b, g_gb);
//   3. demosaic: green at red and blue sites by edge-directed interpolation (average along the
//      direction of the smaller gradient), red and blue everywhere else by interpolating the
//      colour difference (r - g, b - g) from the nearest sites that have it;
//   4. colour correction by a 3x4 matrix interpolated (in 1/temperature) between a 3200 K and a
//      7000 K calibration, after black-level subtraction and white-level scaling;
//   5. tone curve: a 1024-entry LUT of gamma followed by a contrast S-curve, to 8 bits;
//   6. sharpening: unsharp mask with a 3x3 [1 2 1] blur.
//
// Sizes: the paper's camera pipe (Anderson et al. 2021, sec. 6) runs on a 2592x1968 raw image
// giving 2560x1920x3 RGB. Stage Funcs: shifted, denoised, the 4 planes, g_r, g_b, r_gr, b_gr,
// r_gb, b_gb, r_b, b_r, demosaicked, matrix, corrected, curve, curved, blur_x, blur_y,
// camera_pipe (22).
#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class CameraPipe : public Generator<CameraPipe> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<uint16_t>> raw{"raw", 2};
    Input<Buffer<float>> matrix_3200{"matrix_3200", 2}; // [column 0..3][row 0..2]
    Input<Buffer<float>> matrix_7000{"matrix_7000", 2};
    Input<float> color_temp{"color_temp"};
    Input<float> gamma{"gamma"};
    Input<float> contrast{"contrast"}; // 0 = none .. 100 = full smoothstep S-curve
    Input<float> sharpen_strength{"sharpen_strength"};
    Input<int> black_level{"black_level"};
    Input<int> white_level{"white_level"};
    Output<Buffer<uint8_t>> output{"output", 3};

    void generate() {
        shifted(x, y) = cast<int16_t>(raw(x + 16, y + 12));

        // 1. Hot pixels: never brighter than the brightest same-colour neighbour.
        Expr nmax = max(max(shifted(x - 2, y), shifted(x + 2, y)), max(shifted(x, y - 2), shifted(x, y + 2)));
        denoised(x, y) = min(shifted(x, y), nmax);

        // 2. Half-resolution planes; (x, y) indexes 2x2 cells.
        g_gr(x, y) = denoised(2 * x, 2 * y);
        r_r(x, y) = denoised(2 * x + 1, 2 * y);
        b_b(x, y) = denoised(2 * x, 2 * y + 1);
        g_gb(x, y) = denoised(2 * x + 1, 2 * y + 1);

        // 3. Demosaic. Green at a red site: neighbours left/right are g_gr, up/down g_gb.
        auto avg = [](Expr a, Expr b) { return cast<int16_t>((cast<int32_t>(a) + b) / 2); };
        auto directed = [&](Expr l, Expr r, Expr u, Expr d) {
            return select(absd(l, r) < absd(u, d), avg(l, r), avg(u, d));
        };
        g_r(x, y) = directed(g_gr(x, y), g_gr(x + 1, y), g_gb(x, y - 1), g_gb(x, y));
        g_b(x, y) = directed(g_gb(x - 1, y), g_gb(x, y), g_gr(x, y), g_gr(x, y + 1));
        // Red/blue at green sites from the colour difference of the two nearest red/blue sites.
        r_gr(x, y) = g_gr(x, y) + avg(r_r(x - 1, y) - g_r(x - 1, y), r_r(x, y) - g_r(x, y));
        b_gr(x, y) = g_gr(x, y) + avg(b_b(x, y - 1) - g_b(x, y - 1), b_b(x, y) - g_b(x, y));
        r_gb(x, y) = g_gb(x, y) + avg(r_r(x, y) - g_r(x, y), r_r(x, y + 1) - g_r(x, y + 1));
        b_gb(x, y) = g_gb(x, y) + avg(b_b(x, y) - g_b(x, y), b_b(x + 1, y) - g_b(x + 1, y));
        // Red at blue sites and blue at red sites: the four diagonal neighbours.
        r_b(x, y) =
            g_b(x, y) + avg(avg(r_r(x - 1, y) - g_r(x - 1, y), r_r(x, y) - g_r(x, y)),
                            avg(r_r(x - 1, y + 1) - g_r(x - 1, y + 1), r_r(x, y + 1) - g_r(x, y + 1)));
        b_r(x, y) = g_r(x, y) + avg(avg(b_b(x, y - 1) - g_b(x, y - 1), b_b(x + 1, y - 1) - g_b(x + 1, y - 1)),
                                    avg(b_b(x, y) - g_b(x, y), b_b(x + 1, y) - g_b(x + 1, y)));
        // Interleave back to full resolution.
        Expr cx = x / 2, cy = y / 2, even_x = x % 2 == 0, even_y = y % 2 == 0;
        auto pick = [&](Func gr, Func r, Func b, Func gb) {
            return select(even_y, select(even_x, gr(cx, cy), r(cx, cy)),
                          select(even_x, b(cx, cy), gb(cx, cy)));
        };
        demosaicked(x, y, c) = select(c == 0, pick(r_gr, r_r, r_b, r_gb), c == 1, pick(g_gr, g_r, g_b, g_gb),
                                      pick(b_gr, b_r, b_b, b_gb));

        // 4. Colour correction.
        Expr t = (1.0f / color_temp - 1.0f / 3200) / (1.0f / 7000 - 1.0f / 3200);
        matrix(x, y) = lerp(matrix_3200(x, y), matrix_7000(x, y), t);
        Expr scale = 1023.0f / cast<float>(max(white_level - black_level, 1));
        auto lin = [&](int ch) { return cast<float>(demosaicked(x, y, ch) - black_level) * scale; };
        corrected(x, y, c) =
            matrix(0, c) * lin(0) + matrix(1, c) * lin(1) + matrix(2, c) * lin(2) + matrix(3, c) * 1023.0f;

        // 5. Tone curve LUT over 10-bit values.
        Expr g = pow(cast<float>(v) / 1023.0f, 1.0f / gamma);
        Expr s = clamp(contrast / 100.0f, 0.0f, 1.0f);
        Expr toned = lerp(g, g * g * (3.0f - 2.0f * g), s);
        curve(v) = cast<uint8_t>(clamp(toned * 255.0f + 0.5f, 0.0f, 255.0f));
        curved(x, y, c) = curve(clamp(cast<int>(corrected(x, y, c) + 0.5f), 0, 1023));

        // 6. Unsharp mask.
        Expr cv = cast<int16_t>(curved(x, y, c));
        blur_x(x, y, c) = cast<int16_t>(curved(x - 1, y, c)) + 2 * cv + cast<int16_t>(curved(x + 1, y, c));
        blur_y(x, y, c) = (blur_x(x, y - 1, c) + 2 * blur_x(x, y, c) + blur_x(x, y + 1, c) + 8) / 16;
        Expr sharp = cast<float>(cv) + sharpen_strength * cast<float>(cv - blur_y(x, y, c));
        output(x, y, c) = cast<uint8_t>(clamp(sharp + 0.5f, 0.0f, 255.0f));

        matrix_3200.dim(0).set_bounds(0, 4).dim(1).set_bounds(0, 3);
        matrix_7000.dim(0).set_bounds(0, 4).dim(1).set_bounds(0, 3);
        output.dim(2).set_bounds(0, 3);
        raw.set_estimates({{0, 2592}, {0, 1968}});
        matrix_3200.set_estimates({{0, 4}, {0, 3}});
        matrix_7000.set_estimates({{0, 4}, {0, 3}});
        color_temp.set_estimate(3700.0f);
        gamma.set_estimate(2.0f);
        contrast.set_estimate(50.0f);
        sharpen_strength.set_estimate(1.0f);
        black_level.set_estimate(25);
        white_level.set_estimate(1023);
        output.set_estimates({{0, 2560}, {0, 1920}, {0, 3}});

        apply_schedule(gpusched_apps::parse_schedule("camera_pipe", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, v{"v"};
    Func shifted{"shifted"}, denoised{"denoised"}, g_gr{"g_gr"}, r_r{"r_r"}, b_b{"b_b"}, g_gb{"g_gb"},
        g_r{"g_r"}, g_b{"g_b"}, r_gr{"r_gr"}, b_gr{"b_gr"}, r_gb{"r_gb"}, b_gb{"b_gb"}, r_b{"r_b"},
        b_r{"b_r"}, demosaicked{"demosaicked"}, matrix{"matrix"}, corrected{"corrected"}, curve{"curve"},
        curved{"curved"}, blur_x{"blur_x"}, blur_y{"blur_y"};

    std::vector<Func> stage_funcs() {
        // shifted is a cast of the input: inlined everywhere.
        return {denoised, g_gr, r_r, b_b,         g_gb,   g_r,       g_b,   r_gr,   b_gr,   r_gb,
                b_gb,     r_b,  b_r, demosaicked, matrix, corrected, curve, curved, blur_x, blur_y};
    }

    void apply_schedule(ScheduleKind kind) {
        Func out = output;
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            for (Func f : stage_funcs())
                f.compute_root();
            return;
        case ScheduleKind::Naive:
            for (Func f : stage_funcs())
                gpusched_apps::naive_gpu(f);
            gpusched_apps::naive_gpu(out);
            return;
        case ScheduleKind::Manual:
            schedule_manual(out);
            return;
        }
    }

    void schedule_manual(Func out) {
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), vo("vo"), vi("vi");
        // Tiny tables first: the 12 matrix entries on one thread, the 1024-entry curve in
        // 256-thread blocks (it has a pow per entry, so a LUT beats recomputing per pixel).
        matrix.compute_root().gpu_single_thread();
        curve.compute_root().gpu_tile(v, vo, vi, 256);
        // Everything else is one kernel per 32x8 output tile (all three channels per thread,
        // unrolled). Shared memory per block:
        //  - curved for the tile plus the sharpening halo: 34 x 10 x 3 bytes;
        //  - the four raw planes, 2x2 cells covering that plus the demosaic halo: about
        //    20 x 8 int16 each (denoising, a max of 4 loads, inlined into them);
        //  - the two interpolated green planes (g_r, g_b), read by every red/blue interpolation.
        // The colour differences, demosaicked and corrected are inlined into curved: each is
        // used once. About 2 KB in all; at most 34x10 = 340 threads.
        out.compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        curved.compute_at(out, xo)
            .store_in(MemoryType::GPUShared)
            .reorder(c, x, y)
            .unroll(c)
            .gpu_threads(x, y);
        for (Func f : {g_gr, r_r, b_b, g_gb, g_r, g_b}) {
            f.compute_at(out, xo).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(CameraPipe, camera_pipe)
