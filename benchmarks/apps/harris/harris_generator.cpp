// Harris corner detection (Harris and Stephens 1988) on a float RGB image. Luma is
// differentiated with 3x3 Sobel filters, the structure tensor's three entries (Ix^2, Iy^2,
// Ix*Iy) are summed over a 3x3 box, and the response is det - k * trace^2 with k = 0.04:
// positive at corners, negative along straight edges, near zero in flat regions. The output is
// the response map itself (no thresholding or non-maximum suppression).
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 6): 1536x2560x3 input. Stage
// Funcs: clamped, gray, Iy, Ix, Ixx, Iyy, Ixy, Sxx, Syy, Sxy, det, trace, harris (13).
#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class Harris : public Generator<Harris> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float>> input{"input", 3};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        clamped = BoundaryConditions::repeat_edge(input);
        gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);

        // Sobel: [-1 0 1] x [1 2 1]; scaled by 1/12 as is customary.
        Iy(x, y) = (gray(x - 1, y + 1) + 2 * gray(x, y + 1) + gray(x + 1, y + 1) - gray(x - 1, y - 1) -
                    2 * gray(x, y - 1) - gray(x + 1, y - 1)) /
                   12.0f;
        Ix(x, y) = (gray(x + 1, y - 1) + 2 * gray(x + 1, y) + gray(x + 1, y + 1) - gray(x - 1, y - 1) -
                    2 * gray(x - 1, y) - gray(x - 1, y + 1)) /
                   12.0f;

        Ixx(x, y) = Ix(x, y) * Ix(x, y);
        Iyy(x, y) = Iy(x, y) * Iy(x, y);
        Ixy(x, y) = Ix(x, y) * Iy(x, y);

        auto box3 = [&](Func f) {
            return f(x - 1, y - 1) + f(x, y - 1) + f(x + 1, y - 1) + f(x - 1, y) + f(x, y) + f(x + 1, y) +
                   f(x - 1, y + 1) + f(x, y + 1) + f(x + 1, y + 1);
        };
        Sxx(x, y) = box3(Ixx);
        Syy(x, y) = box3(Iyy);
        Sxy(x, y) = box3(Ixy);

        det(x, y) = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
        trace(x, y) = Sxx(x, y) + Syy(x, y);
        output(x, y) = det(x, y) - 0.04f * trace(x, y) * trace(x, y);

        input.dim(2).set_bounds(0, 3);
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}});

        apply_schedule(gpusched_apps::parse_schedule("harris", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"};
    Func clamped{"clamped"}, gray{"gray"}, Iy{"Iy"}, Ix{"Ix"}, Ixx{"Ixx"}, Iyy{"Iyy"}, Ixy{"Ixy"}, Sxx{"Sxx"},
        Syy{"Syy"}, Sxy{"Sxy"}, det{"det"}, trace{"trace"};

    void apply_schedule(ScheduleKind kind) {
        Func out = output;
        // Every stencil stage is a stage; the pointwise products, det and trace are inlined.
        const std::vector<Func> stage_funcs = {gray, Iy, Ix, Sxx, Syy, Sxy};
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            for (Func f : stage_funcs)
                f.compute_root();
            return;
        case ScheduleKind::Naive:
            for (Func f : stage_funcs)
                gpusched_apps::naive_gpu(f);
            gpusched_apps::naive_gpu(out);
            return;
        case ScheduleKind::Manual:
            schedule_manual(out);
            return;
        }
    }

    void schedule_manual(Func out) {
        // The whole pipeline is one kernel per 32x8 output tile. Gray is staged in shared memory
        // for the tile plus a 2-pixel halo (36x12 floats), the two gradients for a 1-pixel halo
        // (34x10 each); the products and box sums are inlined into the output, reading the
        // gradients from shared memory. 5 KB of shared memory, 36x12 = 432 threads at most.
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
        out.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        for (Func f : {gray, Ix, Iy}) {
            f.compute_at(out, xo).store_in(MemoryType::GPUShared).gpu_threads(x, y);
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Harris, harris)
