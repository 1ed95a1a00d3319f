// Stencil chain: `stencils` (32 in the paper) chained 5x5 stencils over a float image, each stage
// a weighted sum of its predecessor over a 5x5 window with the binomial kernel
// [1 4 6 4 1]^T [1 4 6 4 1] / 256 (weights sum to 1, so a constant image stays constant). Only
// the input has a boundary condition (clamp to edge); every later stage is defined everywhere,
// so the output at a pixel depends on a 129x129 window of the clamped input. Deliberately
// non-separable: the point of the benchmark is long-range fusion across many cheap stages.
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 2 and 6): 1536x2560 input, 32
// stages. Stage Funcs: clamped, stage_1 .. stage_31, stencil_chain (the 32nd) = 33.
#include "Halide.h"

#include "../common/schedule_helpers.h"

#include <vector>

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class StencilChain : public Generator<StencilChain> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    GeneratorParam<int> stencils{"stencils", 32, 1, 128};

    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        static const int kTaps[5] = {1, 4, 6, 4, 1};
        const int n = stencils;
        stages.clear();
        Func prev = BoundaryConditions::repeat_edge(input);
        stages.push_back(prev);
        for (int i = 1; i <= n; i++) {
            Expr e = 0.0f;
            for (int dy = -2; dy <= 2; dy++) {
                for (int dx = -2; dx <= 2; dx++) {
                    e += (kTaps[dx + 2] * kTaps[dy + 2] / 256.0f) * prev(x + dx, y + dy);
                }
            }
            Func f = (i == n) ? Func(output) : Func("stage_" + std::to_string(i));
            f(x, y) = e;
            stages.push_back(f);
            prev = f;
        }

        input.set_estimates({{0, 1536}, {0, 2560}});
        output.set_estimates({{0, 1536}, {0, 2560}});

        apply_schedule(gpusched_apps::parse_schedule("stencil_chain", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"};
    std::vector<Func> stages; // stages[0] is the clamped input, stages.back() the output

    void apply_schedule(ScheduleKind kind) {
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            for (size_t i = 1; i < stages.size(); i++)
                stages[i].compute_root();
            return;
        case ScheduleKind::Naive:
            for (size_t i = 1; i < stages.size(); i++)
                gpusched_apps::naive_gpu(stages[i]);
            return;
        case ScheduleKind::Manual:
            schedule_manual();
            return;
        }
    }

    void schedule_manual() {
        // Groups of 4 stages per kernel: the last of each group is at root with 32x8 blocks and a
        // 2-row register tile per thread (y split by 2, unrolled: the two rows share 20 of their
        // 25 loads' rows); the three before it are computed per block in shared memory. Halos
        // grow by 4 per stage: 36x12, 40x16, 44x20 floats = 8.8 KB. Their threads are capped at
        // 32x8 by tiling each staged Func with guarded thread tiles, so no block exceeds 256
        // threads.
        const int group = 4;
        const int n = (int)stages.size() - 1;
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), yii("yii"), txo("txo"), tyo("tyo"), tx("tx"), ty("ty");
        Func root;
        for (int i = n; i >= 1; i--) {
            Func f = stages[i];
            if ((n - i) % group == 0) {
                root = f;
                f.compute_root()
                    .gpu_tile(x, y, xo, yo, xi, yi, 32, 8)
                    .split(yi, yi, yii, 2, TailStrategy::GuardWithIf)
                    .unroll(yii);
            } else {
                f.compute_at(root, xo)
                    .store_in(MemoryType::GPUShared)
                    .tile(x, y, txo, tyo, tx, ty, 32, 8, TailStrategy::GuardWithIf)
                    .gpu_threads(tx, ty);
            }
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(StencilChain, stencil_chain)
