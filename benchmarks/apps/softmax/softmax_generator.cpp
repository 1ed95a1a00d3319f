// Softmax over each row of a matrix (an attention score matrix, a classifier's logits), one of
// issue 27's shapes: two reductions per row whose outputs (one value per row, 512 of them) cannot
// fill a GPU. Unsplit, each row's 4096-column max and sum run serially in one thread: 512 busy
// threads.
//
// Numerically stable: row_max(y) = max over x of input(x, y); row_sum(y) = sum over x of
// exp(input(x, y) - row_max(y)); output(x, y) = exp(input(x, y) - row_max(y)) / row_sum(y). The
// max keeps exp's argument <= 0, so exp never overflows whatever the logits' scale. Stages: the
// input wrapper, row_max and row_sum (pure definition + one update each over a 1-D RDom covering
// the row), and output (4 Funcs, two updates). Size: 4096 columns x 512 rows, float. See
// docs/apps/softmax.md.
//
// GeneratorParam `schedule`: "none" (for autoschedulers), "naive" (every Func at root, each row's
// reductions serial in one GPU thread: the paper's search space) or "manual" (the expert schedule
// below: one 256-thread block per row, everything in one kernel).

#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <limits>

namespace {

using namespace Halide;

class Softmax : public Generator<Softmax> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 2>> input{"input"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        r = RDom(input.dim(0).min(), input.dim(0).extent(), "r");
        // The lowest finite float, not Float(32).min() (-inf): Halide compiles float code with
        // LLVM's no-infinities flag.
        row_max(y) = std::numeric_limits<float>::lowest();
        row_max(y) = max(row_max(y), input(r, y));
        row_sum(y) = 0.0f;
        row_sum(y) += exp(input(r, y) - row_max(y));
        output(x, y) = exp(input(x, y) - row_max(y)) / row_sum(y);

        input.set_estimates({{0, 4096}, {0, 512}});
        output.set_estimates({{0, 4096}, {0, 512}});

        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("softmax", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

private:
    Var x{"x"}, y{"y"};
    Func row_max{"row_max"}, row_sum{"row_sum"};
    RDom r;

    // Every Func at root, three kernels. The reductions' updates are tiled 16 rows to a block, one
    // thread per row running the whole row serially; output is a plain 16x16 tile.
    void schedule_naive() {
        Var yo("naive_uyo"), yi("naive_uyi");
        gpusched_apps::naive_gpu(row_max);
        row_max.update().gpu_tile(y, yo, yi, 16, TailStrategy::GuardWithIf);
        gpusched_apps::naive_gpu(row_sum);
        row_sum.update().gpu_tile(y, yo, yi, 16, TailStrategy::GuardWithIf);
        gpusched_apps::naive_gpu(output);
    }

    // One kernel, one 256-thread block per row. Each reduction is split with rfactor into 256
    // partials, partial u covering the columns x = u mod 256 (thread u: neighbouring threads read
    // neighbouring columns, 16 loads each at 4096 columns), kept in shared memory; one thread
    // then combines the 256 partials into the row's value, also in shared memory. The output row
    // is then written by the same 256 threads, 16 coalesced columns each. The row is read three
    // times (max, sum, output); the second and third reads hit the cache.
    void schedule_manual() {
        const int kThreads = 256;
        Var u("u"), xo("xo"), xi("xi");
        RVar rxo("rxo"), rxi("rxi");

        Func out = output;
        out.compute_root()
            .split(x, xo, xi, kThreads, TailStrategy::GuardWithIf)
            .reorder(xo, xi, y)
            .gpu_blocks(y)
            .gpu_threads(xi);

        // rfactor copies the update's schedule to the intermediate: split first.
        Func max_partial =
            row_max.update().split(r, rxo, rxi, kThreads, TailStrategy::GuardWithIf).rfactor(rxi, u);
        Func sum_partial =
            row_sum.update().split(r, rxo, rxi, kThreads, TailStrategy::GuardWithIf).rfactor(rxi, u);
        for (Func partial : {max_partial, sum_partial}) {
            partial.compute_at(out, y).store_in(MemoryType::GPUShared).gpu_threads(u);
            partial.update().reorder(rxo, u).gpu_threads(u);
        }
        // The row's max and sum: one value each, combined by a single thread of the block.
        for (Func f : {row_max, row_sum})
            f.compute_at(out, y).store_in(MemoryType::GPUShared);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Softmax, softmax)
