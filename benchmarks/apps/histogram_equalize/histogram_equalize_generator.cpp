// Histogram equalization of an 8-bit RGB image's luma. Luma is the integer BT.601 approximation
// Y = (77 R + 150 G + 29 B + 128) >> 8; its 256-bin histogram over the whole image is scanned
// into a cumulative histogram, which maps each luma value to
// eq(Y) = round(255 * cdf(Y) / pixel_count). Every channel is shifted by eq(Y) - Y (clamped to
// [0, 255]), which equalizes luma while keeping the colour differences. All integer, so a plain
// C++ reference reproduces it bit for bit.
//
// Sizes from the paper's benchmark (Anderson et al. 2021, sec. 6): 1536x2560x3 input. Stage
// Funcs: luma, hist, cdf, eq, histogram_equalize (5).
#include "Halide.h"

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;
using gpusched_apps::ScheduleKind;

class HistogramEqualize : public Generator<HistogramEqualize> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<uint8_t>> input{"input", 3};
    Output<Buffer<uint8_t>> output{"output", 3};

    void generate() {
        luma(x, y) = (77 * cast<int>(input(x, y, 0)) + 150 * cast<int>(input(x, y, 1)) +
                      29 * cast<int>(input(x, y, 2)) + 128) >>
                     8;

        r = RDom(0, input.dim(0).extent(), 0, input.dim(1).extent(), "r");
        hist(b) = 0;
        hist(clamp(luma(r.x, r.y), 0, 255)) += 1;

        // Inclusive prefix sum over the 256 bins: a serial scan.
        scan = RDom(1, 255, "scan");
        cdf(b) = hist(b);
        cdf(scan) = cdf(scan - 1) + hist(scan);

        // 255 * cdf can exceed 2^31 for images above 8.4 Mpixel: widen.
        Expr count = cast<int64_t>(input.dim(0).extent()) * input.dim(1).extent();
        eq(b) = cast<int>((cast<int64_t>(cdf(b)) * 255 + count / 2) / count);

        Expr yv = clamp(luma(x, y), 0, 255);
        output(x, y, c) = cast<uint8_t>(clamp(cast<int>(input(x, y, c)) + eq(yv) - yv, 0, 255));

        input.dim(2).set_bounds(0, 3);
        output.dim(2).set_bounds(0, 3);
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule(gpusched_apps::parse_schedule("histogram_equalize", schedule, get_target(),
                                                     GPUSCHED_GENERATOR_AUTOSCHEDULED()));
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, b{"b"};
    Func luma{"luma"}, hist{"hist"}, cdf{"cdf"}, eq{"eq"};
    RDom r, scan;

    void apply_schedule(ScheduleKind kind) {
        Func out = output;
        switch (kind) {
        case ScheduleKind::None:
            return;
        case ScheduleKind::CpuRoot:
            for (Func f : {luma, hist, cdf, eq})
                f.compute_root();
            return;
        case ScheduleKind::Naive: {
            // luma at root; the histogram's scatter as plain global atomics, one thread per
            // pixel in 16x16 tiles; the scan on a single GPU thread; eq and output tiled.
            gpusched_apps::naive_gpu(luma);
            gpusched_apps::naive_gpu(hist);
            RVar rxo("rxo"), ryo("ryo"), rxi("rxi"), ryi("ryi");
            hist.update().atomic().gpu_tile(r.x, r.y, rxo, ryo, rxi, ryi, 16, 16);
            cdf.compute_root().gpu_single_thread();
            cdf.update().gpu_single_thread();
            gpusched_apps::naive_gpu(eq);
            gpusched_apps::naive_gpu(out);
            return;
        }
        case ScheduleKind::Manual:
            schedule_manual(out);
            return;
        }
    }

    void schedule_manual(Func out) {
        // Histogram: rfactor the scatter over 128-row strips of 256-pixel-wide tiles; each block
        // builds its strip's histogram in shared memory (256 ints = 1 KB) with shared-memory
        // atomics from 256 threads, then adds it into the global histogram with 256 global
        // atomics - instead of one global atomic per pixel. luma is inlined (3 loads, 4 ops).
        Var u("u"), v("v"), bo("bo"), bi("bi"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
        RVar rxo("rxo"), rxi("rxi"), ryo("ryo"), ryi("ryi");
        hist.compute_root().gpu_tile(b, bo, bi, 256);
        Func strip = hist.update()
                         .split(r.x, rxo, rxi, 256, TailStrategy::GuardWithIf)
                         .split(r.y, ryo, ryi, 128, TailStrategy::GuardWithIf)
                         .rfactor({{rxo, u}, {ryo, v}});
        hist.update().atomic().reorder(b, rxo, ryo).gpu_blocks(rxo, ryo).gpu_threads(b);
        strip.compute_at(hist, rxo).store_in(MemoryType::GPUShared).gpu_threads(b);
        strip.update().atomic().reorder(rxi, ryi, u, v).gpu_threads(rxi);
        // The 256-step scan is tiny and serial: one thread.
        cdf.compute_root().gpu_single_thread();
        cdf.update().gpu_single_thread();
        // eq is 256 values: compute them into shared memory per output block (the 64-bit divide
        // then runs 256 times per block rather than once per pixel), 3 channels unrolled.
        out.compute_root().reorder(c, x, y).unroll(c).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        eq.compute_at(out, xo).store_in(MemoryType::GPUShared).bound(b, 0, 256).gpu_threads(b);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(HistogramEqualize, histogram_equalize)
