// Per-channel mean of a batch of feature maps (batch-norm statistics, global average pooling
// over the batch), one of issue 27's shapes: a reduction over a huge domain with a tiny
// output. 64 outputs, each over 100,352 terms (56 x 56 pixels x 32 images): unsplit, 64 GPU
// threads read the whole 25.7 MB input, each 100,352 loads in a row.
//
// channel_sum(c) = sum over x, y, n of input(x, y, c, n); output(c) = channel_sum(c) / (the
// number of terms), in float. Stages: the input wrapper, channel_sum (pure definition + one update
// over a 3-D RDom covering x, y and n of the input) and output (3 Funcs, one update). Size: 56 x
// 56 x 64 channels x 32 images, float. See docs/apps/per_channel_mean.md.
//
// GeneratorParam `schedule`: "none" (for autoschedulers), "naive" (every Func at root, each
// channel's sum serial in one GPU thread: the paper's search space) or "manual" (the expert
// schedule below: rfactor twice, 65,536 partial sums and then a block per channel).

#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

class PerChannelMean : public Generator<PerChannelMean> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 4>> input{"input"};
    Output<Buffer<float, 1>> output{"output"};

    void generate() {
        r = RDom(input.dim(0).min(), input.dim(0).extent(), // x
                 input.dim(1).min(), input.dim(1).extent(), // y
                 input.dim(3).min(), input.dim(3).extent(), // n
                 "r");
        channel_sum(c) = 0.0f;
        channel_sum(c) += input(r.x, r.y, c, r.z);
        const Expr count =
            cast<float>(cast<int64_t>(input.dim(0).extent()) * input.dim(1).extent() * input.dim(3).extent());
        output(c) = channel_sum(c) / count;

        input.set_estimates({{0, 56}, {0, 56}, {0, 64}, {0, 32}});
        output.set_estimates({{0, 64}});

        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind = gpusched_apps::parse_schedule("per_channel_mean", schedule, get_target(),
                                                                GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                                                gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

private:
    Var c{"c"};
    Func channel_sum{"channel_sum"};
    RDom r;

    // Every Func at root, three kernels. The update is tiled 16 channels to a block, one thread
    // per channel running all 100,352 terms serially (x innermost).
    void schedule_naive() {
        Var co("naive_uco"), ci("naive_uci");
        gpusched_apps::naive_gpu(channel_sum);
        channel_sum.update().gpu_tile(c, co, ci, 16, TailStrategy::GuardWithIf);
        gpusched_apps::naive_gpu(output);
    }

    // Three kernels. First the update is split with rfactor into 32 lanes x 32 images of partial
    // sums per channel: lane_sums(u, v, c) adds input(x, y, c, v) over the columns x = u mod 32
    // and every row y (112 loads at 56 x 56; a warp is the 32 lanes of one row: coalesced), in
    // 32 x 8 thread blocks (65,536 threads at the estimates; its pure definition, the zeroing,
    // is the first kernel). A second rfactor then makes a block per channel: its 32 threads each
    // add one image's 32 lanes into shared memory, and one thread adds the 32 image sums and
    // divides.
    void schedule_manual() {
        const int kLanes = 32, kImagesPerBlock = 8;
        Var u("u"), v("v"), vo("vo"), vi("vi");
        RVar rxo("rxo"), rxi("rxi");

        // rfactor copies the update's schedule to the intermediate: split first.
        Func lane_sums = channel_sum.update()
                             .split(r.x, rxo, rxi, kLanes, TailStrategy::GuardWithIf)
                             .rfactor({{rxi, u}, {r.z, v}});
        // channel_sum's update now adds lane_sums(rxi, r.z, c); split it again over the images.
        Func image_sums = channel_sum.update().rfactor(r.z, v);

        lane_sums.compute_root()
            .split(v, vo, vi, kImagesPerBlock, TailStrategy::GuardWithIf)
            .reorder(u, vi, vo, c)
            .gpu_blocks(vo, c)
            .gpu_threads(u, vi);
        lane_sums.update()
            .split(v, vo, vi, kImagesPerBlock, TailStrategy::GuardWithIf)
            .reorder(rxo, r.y, u, vi, vo, c)
            .gpu_blocks(vo, c)
            .gpu_threads(u, vi);

        Func out = output;
        out.compute_root().gpu_blocks(c);
        channel_sum.compute_at(out, c).store_in(MemoryType::GPUShared);
        image_sums.compute_at(out, c).store_in(MemoryType::GPUShared).gpu_threads(v);
        image_sums.update().reorder(rxi, v).gpu_threads(v);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(PerChannelMean, per_channel_mean)
