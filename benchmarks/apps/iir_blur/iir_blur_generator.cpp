// IIR blur: a first-order recursive (exponential) blur in both directions.
//
// One pass filters every column down (causal: f(y) = (1 - a) f(y - 1) +
// a in(y), f(0) = in(0)) and back up (anticausal: g(y) = (1 - a) g(y + 1) +
// a f(y), g(H - 1) = f(H - 1)), then transposes the result. Running the pass
// twice filters the columns, then the rows, and restores the orientation.
// A constant image stays constant. `alpha` (a) sets the blur strength.
// Stages: per pass causal (pure + 1 update), anticausal (pure + 1 update) and
// transpose; the second transpose is the output: 6 Funcs. Sizes: 1536x2560
// RGB float. See docs/apps/iir_blur.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <string>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class IirBlur : public Generator<IirBlur> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 3>> input{"input"}; // (x, y, c)
    Input<float> alpha{"alpha"};
    Output<Buffer<float, 3>> output{"output"};

    void generate() {
        blur_cols(input, input.dim(1).extent(), 0);
        transpose1(x, y, c) = anticausal[0](y, x, c);
        // After the transpose, the original width is the column length.
        blur_cols(transpose1, input.dim(0).extent(), 1);
        output(x, y, c) = anticausal[1](y, x, c);

        // Paper suite size: 1536x2560 RGB; alpha is the blur's feedback weight.
        alpha.set_estimate(0.1f);
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule();
    }

private:
    Var x{"x"}, y{"y"}, c{"c"};
    Func causal[2], anticausal[2];
    RDom down[2], up[2];
    Func transpose1{"transpose_1"};

    // Filters the columns of `in` (of length `height`) down into causal[pass]
    // and back up into anticausal[pass].
    void blur_cols(Func in, Expr height, int pass) {
        const std::string p = std::to_string(pass + 1);
        Func &f = causal[pass];
        Func &g = anticausal[pass];
        f = Func("causal_" + p);
        g = Func("anticausal_" + p);

        f(x, y, c) = in(x, y, c);
        RDom &rd = down[pass];
        rd = RDom(1, height - 1, "down_" + p);
        f(x, rd, c) = (1.0f - alpha) * f(x, rd - 1, c) + alpha * f(x, rd, c);

        g(x, y, c) = f(x, y, c);
        RDom &ru = up[pass];
        ru = RDom(1, height - 1, "up_" + p);
        Expr yy = height - 1 - ru;
        g(x, yy, c) = (1.0f - alpha) * g(x, yy + 1, c) + alpha * g(x, yy, c);
    }

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("iir_blur", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    // Floor: every Func its own kernels. Pure stages 16x16 over (x, y); the
    // scans are only parallel over (x, c), so their tiles are 16 x 1.
    void schedule_naive() {
        Var xo, yo, xi, yi;
        for (int p = 0; p < 2; p++) {
            for (Func f : {causal[p], anticausal[p]}) {
                f.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16,
                                                           TailStrategy::GuardWithIf);
                f.update().gpu_tile(x, c, xo, yo, xi, yi, 16, 1, TailStrategy::GuardWithIf);
            }
        }
        transpose1.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16,
                                                            TailStrategy::GuardWithIf);
        output.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 16, 16,
                                                        TailStrategy::GuardWithIf);
    }

    // Scans: one thread per (column, channel), 32 columns per block so each
    // row step is one coalesced 128-byte access per warp; the serial scan is
    // split by 8 and unrolled so loads of later rows are issued early. The
    // pure initialisations are plain copies, 32x8 tiles. Transposes go
    // through a 32x32 shared-memory tile (4 KB) staged at block level, so
    // both the read of the scanned image and the write of the transposed one
    // are coalesced; each thread moves 4 values (32x8 threads, unrolled).
    void schedule_manual() {
        Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, yii{"yii"};
        for (int p = 0; p < 2; p++) {
            for (int which = 0; which < 2; which++) {
                Func f = which == 0 ? causal[p] : anticausal[p];
                RVar r = which == 0 ? down[p].x : up[p].x;
                RVar ro{"ro"}, ri{"ri"};
                f.compute_root().reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
                f.update()
                    .split(r, ro, ri, 8, TailStrategy::GuardWithIf)
                    .unroll(ri)
                    .gpu_tile(x, c, xo, yo, xi, yi, 32, 1, TailStrategy::GuardWithIf);
            }
        }
        Func transposes[2] = {transpose1, output};
        for (int p = 0; p < 2; p++) {
            Func t = transposes[p];
            t.compute_root()
                .tile(x, y, xo, yo, xi, yi, 32, 32)
                .split(yi, yi, yii, 4)
                .reorder(yii, xi, yi, xo, yo, c)
                .gpu_blocks(xo, yo, c)
                .gpu_threads(xi, yi)
                .unroll(yii);
            // Stage the anticausal tile being transposed in shared memory.
            Func s = anticausal[p].in(t);
            Var sx = s.args()[0], sy = s.args()[1], syo{"syo"}, syi{"syi"};
            s.compute_at(t, xo)
                .store_in(MemoryType::GPUShared)
                .split(sy, syo, syi, 4)
                .reorder(syi, sx, syo)
                .gpu_threads(sx, syo)
                .unroll(syi);
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(IirBlur, iir_blur)
