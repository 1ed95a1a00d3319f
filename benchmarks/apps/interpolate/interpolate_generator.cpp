// Interpolate: fills the transparent parts of an RGBA image by multi-scale
// pyramid interpolation (push-pull).
//
// The input colour is premultiplied by alpha, then a pyramid of `levels`
// levels is built by [1 2 1]/4 filtering and 2x decimation (x pass, then y
// pass). Going back up, each level is the sum of its own premultiplied value
// and, weighted by its transparency (1 - alpha), the linear 2x upsampling of
// the coarser interpolated level. Dividing the finest level by its alpha gives
// the output colour: opaque pixels keep their colour exactly, transparent ones
// get a smooth blend of the nearest opaque colours. Edges repeat the border.
//
// Stages with levels = L (default 10): input clamp, premultiply, L-1 x
// (downsample x, downsample y), L-1 x (upsample x, upsample y, interpolate),
// normalize: 5L - 2 = 48 Funcs. Sizes: 1536x2560 RGBA float in, RGB out.
// See docs/apps/interpolate.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <string>
#include <vector>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class Interpolate : public Generator<Interpolate> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    GeneratorParam<int> levels{"levels", 10};

    // RGBA, channel 3 is alpha in [0, 1].
    Input<Buffer<float, 3>> input{"input"};
    // RGB.
    Output<Buffer<float, 3>> output{"output"};

    void generate() {
        const int nl = levels;
        _halide_user_assert(nl >= 1) << "interpolate: levels must be >= 1, got " << nl << "\n";

        clamped = BoundaryConditions::repeat_edge(input);

        downsampled.resize(nl);
        downx.resize(nl);
        interpolated.resize(nl);
        upsampledx.resize(nl);
        upsampled.resize(nl);

        downsampled[0] = Func("premultiplied");
        downsampled[0](x, y, c) = select(c < 3, clamped(x, y, c) * clamped(x, y, 3), clamped(x, y, 3));

        for (int l = 1; l < nl; l++) {
            Func prev = downsampled[l - 1];
            downx[l] = Func("downx_" + std::to_string(l));
            downx[l](x, y, c) =
                (prev(2 * x - 1, y, c) + 2.0f * prev(2 * x, y, c) + prev(2 * x + 1, y, c)) * 0.25f;
            downsampled[l] = Func("downsampled_" + std::to_string(l));
            downsampled[l](x, y, c) =
                (downx[l](x, 2 * y - 1, c) + 2.0f * downx[l](x, 2 * y, c) + downx[l](x, 2 * y + 1, c)) *
                0.25f;
        }

        interpolated[nl - 1] = downsampled[nl - 1];
        for (int l = nl - 2; l >= 0; l--) {
            Func coarse = interpolated[l + 1];
            upsampledx[l] = Func("upsampledx_" + std::to_string(l));
            // Even x sit on a coarse sample, odd x halfway between two.
            upsampledx[l](x, y, c) = (coarse(x / 2, y, c) + coarse((x + 1) / 2, y, c)) * 0.5f;
            upsampled[l] = Func("upsampled_" + std::to_string(l));
            upsampled[l](x, y, c) = (upsampledx[l](x, y / 2, c) + upsampledx[l](x, (y + 1) / 2, c)) * 0.5f;
            interpolated[l] = Func("interpolated_" + std::to_string(l));
            interpolated[l](x, y, c) =
                downsampled[l](x, y, c) + (1.0f - downsampled[l](x, y, 3)) * upsampled[l](x, y, c);
        }

        output(x, y, c) = interpolated[0](x, y, c) / interpolated[0](x, y, 3);

        // Paper suite size: 1536x2560.
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 4}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule();
    }

private:
    Var x{"x"}, y{"y"}, c{"c"};
    Func clamped{"clamped"};
    std::vector<Func> downsampled, downx, interpolated, upsampledx, upsampled;

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("interpolate", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    // Floor: every stage but the input clamp is its own kernel, 16x16 threads
    // over (x, y), channels serial in each thread.
    void schedule_naive() {
        const int nl = levels;
        Var xo, yo, xi, yi;
        auto root = [&](Func f) {
            f.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16,
                                                       TailStrategy::GuardWithIf);
        };
        root(downsampled[0]);
        for (int l = 1; l < nl; l++) {
            root(downx[l]);
            root(downsampled[l]);
        }
        for (int l = nl - 2; l >= 0; l--) {
            root(upsampledx[l]);
            root(upsampled[l]);
            root(interpolated[l]);
        }
        root(output);
    }

    // One kernel per pyramid level and direction. Every Func carries the four
    // channels unrolled in each thread (the loads of one pixel's RGBA are
    // adjacent in the inner loop; bound() makes the channel loop constant).
    // Downsampling: the x pass of each level is staged in shared memory per
    // block (tile rows 2y-1..2y+1 are shared by neighbouring threads), the y
    // pass is the kernel. Upsampling is cheap (4 reads), so both passes are
    // inlined into the interpolate kernel of each level. The premultiply is
    // inlined into the first downsample and the finest interpolate. The finest
    // level is fused into the output kernel: the output only needs
    // interpolated[0] pointwise. Blocks are 32x8 threads: coalesced rows,
    // enough blocks on the small coarse levels. Shared memory per block:
    // downx tile 32 x 17 x 4 floats = 8.7 KB.
    void schedule_manual() {
        const int nl = levels;
        Var xo, yo, xi, yi;
        output.compute_root().bound(c, 0, 3).reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 32, 8).unroll(c);
        for (int l = 1; l < nl; l++) {
            downsampled[l]
                .compute_root()
                .bound(c, 0, 4)
                .reorder(c, x, y)
                .gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
                .unroll(c);
            downx[l]
                .compute_at(downsampled[l], xo)
                .store_in(MemoryType::GPUShared)
                .bound(c, 0, 4)
                .reorder(c, x, y)
                .gpu_threads(x, y)
                .unroll(c);
        }
        for (int l = nl - 2; l >= 1; l--) {
            interpolated[l]
                .compute_root()
                .bound(c, 0, 4)
                .reorder(c, x, y)
                .gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
                .unroll(c);
        }
        // interpolated[0] is inlined into the output.
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Interpolate, interpolate)
