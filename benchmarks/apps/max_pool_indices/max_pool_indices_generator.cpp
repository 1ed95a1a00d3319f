// Max pooling with indices: PyTorch's max_pool2d(kernel 3, stride 2,
// return_indices=True), the pooling layer whose indices a max_unpool or the
// backward pass reads. Two outputs from ONE tuple reduction: per output
// point, a 9-iteration argmax over the window. The output (55 x 55 x 64) is
// small next to the input, and each point's reduction is tiny: the shape an
// ML compiler hands a GPU autoscheduler for a pooling layer (issue 27).
//
// For an input of W x H x C (x, y, channel), the output is
// ((W-3)/2+1) x ((H-3)/2+1) x C:
//   values(x, y, c)  = max over rx, ry in [0, 3) of input(2x+rx, 2y+ry, c);
//   indices(x, y, c) = the flat index (2y+ry) * W + (2x+rx) of that max within
//                      channel c's W x H plane, the first in row-major
//                      window order on ties (ry outer, rx inner: the
//                      smallest flat index);
// all input coordinates relative to the input's min.
// NaN inputs are not given any particular treatment.
// Stages: the input wrapper, pool (a Tuple Func: pure definition = the
// window's first element, one update over RDom(0, 3, 0, 3)), and the two
// outputs reading its elements (3 Funcs besides the input, one update).
// Size: 112 x 112 x 64 float input (a ResNet stem's pooling layer, without
// its padding). See docs/apps/max_pool_indices.md.
//
// GeneratorParam `schedule`: "none" (for autoschedulers), "naive" (every Func
// its own 16x16-tiled kernel, the window serial in the thread) or "manual"
// (the expert schedule below).

#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <string>

namespace {

using namespace Halide;

class MaxPoolIndices : public Generator<MaxPoolIndices> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 3>> input{"input"};
    Output<Buffer<float, 3>> values{"values"};
    Output<Buffer<int32_t, 3>> indices{"indices"};

    void generate() {
        const Expr x0 = input.dim(0).min(), y0 = input.dim(1).min(), c0 = input.dim(2).min();
        const Expr width = input.dim(0).extent();
        r = RDom(0, kWindow, 0, kWindow, "r");

        // Output (x, y, c) pools channel c0 + c from the window at (2x, 2y)
        // relative to the input's min.
        const Expr wx = x * kStride, wy = y * kStride;
        // The update visits the window from its last element to its first
        // (ry, rx mirrored), and an element replaces the running best unless
        // it is smaller: on a tie the later visit, the earlier element in
        // row-major order, wins. This is how Halide's associativity table
        // spells an argmax (ties to the newer element), so rfactor could
        // split the window; the mirrored order turns that into PyTorch's
        // first-wins. The pure definition is the window's first element,
        // which the update visits last anyway.
        pool(x, y, c) = Tuple(input(x0 + wx, y0 + wy, c0 + c), wy * width + wx);
        const Expr px = wx + (kWindow - 1 - r.x), py = wy + (kWindow - 1 - r.y);
        const Expr v = input(x0 + px, y0 + py, c0 + c);
        const Expr old_v = pool(x, y, c)[0], old_i = pool(x, y, c)[1];
        pool(x, y, c) = Tuple(max(old_v, v), select(v < old_v, old_i, py * width + px));

        values(x, y, c) = pool(x, y, c)[0];
        indices(x, y, c) = pool(x, y, c)[1];

        input.set_estimates({{0, 112}, {0, 112}, {0, 64}});
        values.set_estimates({{0, 55}, {0, 55}, {0, 64}});
        indices.set_estimates({{0, 55}, {0, 55}, {0, 64}});

        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("max_pool_indices", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

private:
    static constexpr int kWindow = 3, kStride = 2;

    Var x{"x"}, y{"y"}, c{"c"};
    RDom r;
    Func pool{"pool"};

    // The floor: pool's pure definition, its update and each output are
    // their own kernel of 16x16 threads over (x, y), channels serial in the
    // thread; the update runs the 9 window iterations serially.
    void schedule_naive() {
        gpusched_apps::naive_gpu(pool);
        gpusched_apps::naive_gpu_update(pool.update(), {x, y, c}, {r.x, r.y});
        gpusched_apps::naive_gpu(values);
        gpusched_apps::naive_gpu(indices);
    }

    // Two kernels, one per output, each one thread per output element:
    // 32 x 8 threads over (x, y), blocks over (x, y, c). pool is computed
    // per thread in registers with the 3 x 3 window fully unrolled (9 loads,
    // neighbouring threads 2 floats apart, and 9 compare-selects), once for
    // values and once, through a clone, for indices: the second kernel reads
    // the input again, mostly from L2, rather than the first writing the
    // tuple to global memory for two copy kernels. One kernel writing both
    // outputs needs compute_with, which Halide 14 cannot lower inside GPU
    // loops (an internal error in PartitionLoops, with any tail strategy).
    void schedule_manual() {
        schedule_per_thread(values, pool);
        schedule_per_thread(indices, pool.clone_in(indices));
    }

    void schedule_per_thread(Func out, Func producer) {
        Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
        out.compute_root()
            .split(x, xo, xi, 32, TailStrategy::GuardWithIf)
            .split(y, yo, yi, 8, TailStrategy::GuardWithIf)
            .reorder(xi, yi, xo, yo, c)
            .gpu_blocks(xo, yo, c)
            .gpu_threads(xi, yi);
        producer.compute_at(out, xi);
        producer.update().unroll(r.x).unroll(r.y);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(MaxPoolIndices, max_pool_indices)
