// Conv layer: one convolutional neural-network layer with ReLU activation.
//
// output(x, y, co, n) = max(0, bias(co) + sum over (kx, ky, ci) of
//     filter(kx, ky, ci, co) * input(x + kx, y + ky, ci, n))
// with a 3x3 filter and no padding, so the input is 2 pixels wider and taller
// than the output. Tensors are NCHW-style: x (width) is the innermost,
// contiguous dimension, then y, channel, batch. Stages: conv (pure + 1
// update), relu = 2 Funcs. Sizes from the paper's suite: batch 5, 128 input
// and output channels, 100x80 output. See docs/apps/conv_layer.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <string>

namespace {

using namespace Halide;

class ConvLayer : public Generator<ConvLayer> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};

    Input<Buffer<float, 4>> input{"input"};    // (x, y, ci, n)
    Input<Buffer<float, 4>> filter{"filter"};  // (kx, ky, ci, co)
    Input<Buffer<float, 1>> bias{"bias"};      // (co)
    Output<Buffer<float, 4>> relu{"relu"};     // (x, y, co, n)

    void generate() {
        // Channel count comes from the filter so the reduction is exact.
        r = RDom(0, 3, 0, 3, 0, filter.dim(2).extent(), "r");

        conv(x, y, co, n) = bias(co);
        conv(x, y, co, n) += filter(r.x, r.y, r.z, co) * input(x + r.x, y + r.y, r.z, n);
        relu(x, y, co, n) = max(0.0f, conv(x, y, co, n));

        // Paper suite size: N = 5, CI = CO = 128, 100x80 output.
        constexpr int kW = 100, kH = 80, kCI = 128, kCO = 128, kN = 5;
        input.set_estimates({{0, kW + 2}, {0, kH + 2}, {0, kCI}, {0, kN}});
        filter.set_estimates({{0, 3}, {0, 3}, {0, kCI}, {0, kCO}});
        bias.set_estimates({{0, kCO}});
        relu.set_estimates({{0, kW}, {0, kH}, {0, kCO}, {0, kN}});

        apply_schedule();
    }

private:
    Var x{"x"}, y{"y"}, co{"co"}, n{"n"};
    RDom r;
    Func conv{"conv"};

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        const std::string s = schedule;
        if (s == "none") {
            return;
        }
        _halide_user_assert(s == "naive" || s == "manual")
            << "conv_layer: schedule=" << s << " is not one of none, naive, manual\n";
        _halide_user_assert(get_target().has_gpu_feature())
            << "conv_layer: schedule=" << s << " is a GPU schedule; target " << get_target().to_string()
            << " has no GPU feature (use e.g. host-cuda or host-opencl)\n";
        _halide_user_assert(!auto_schedule) << "conv_layer: schedule=" << s
                                    << " cannot be combined with auto_schedule=true\n";
        if (s == "naive") {
            schedule_naive();
        } else {
            schedule_manual();
        }
    }

    // Floor: conv and relu each their own kernel, 16x16 threads over (x, y),
    // channels and batch as serial loops around the launches' grid (they are
    // outer dimensions), the whole reduction serial per thread.
    void schedule_naive() {
        Var xo, yo, xi, yi;
        conv.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        conv.update().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        relu.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
    }

    // Register-tiled direct convolution, one kernel.
    // Block: 32 x-pixels x 32 output channels of one row y of one image,
    // 128 threads (16 along x for coalescing, 8 along co). Each thread
    // accumulates a 2 (x) x 4 (co) tile in registers (unrolled), so every
    // input value it loads feeds 4 FMAs and every filter value 2, and the
    // 3x3 taps of the reduction are unrolled too. The channel reduction is
    // split by 8: for each chunk of 8 input channels the block stages the
    // input window (34 x 3 x 8 floats, 3.2 KB) and the filter slice
    // (3 x 3 x 8 x 32 floats, 9.2 KB) in shared memory, then every thread
    // reads them from there. The accumulators live at block level in
    // registers (MemoryType::Register), each thread owning its own tile, so
    // they persist across the chunk loop. ReLU is applied as the tile is
    // written out.
    void schedule_manual() {
        Var xo{"xo"}, xi{"xi"}, xt{"xt"}, xu{"xu"}, coo{"coo"}, coi{"coi"}, cot{"cot"}, cou{"cou"}, t{"t"};
        RVar rco{"rco"}, rci{"rci"};
        const int ci_chunk = 8;

        relu.compute_root()
            .split(x, xo, xi, 32)
            .split(co, coo, coi, 32)
            .split(xi, xu, xt, 16)
            .split(coi, cou, cot, 8)
            .reorder(xu, cou, xt, cot, xo, coo, y, n)
            .fuse(y, n, t)
            .gpu_blocks(xo, coo, t)
            .gpu_threads(xt, cot)
            .unroll(xu)
            .unroll(cou);

        conv.compute_at(relu, xo)
            .store_in(MemoryType::Register)
            .bound_extent(x, 32)
            .bound_extent(co, 32)
            .bound_extent(y, 1)
            .bound_extent(n, 1)
            .split(x, xu, xt, 16)
            .split(co, cou, cot, 8)
            .reorder(xu, cou, xt, cot, y, n)
            .gpu_threads(xt, cot)
            .unroll(xu)
            .unroll(cou);
        conv.update()
            .split(r.z, rco, rci, ci_chunk, TailStrategy::GuardWithIf)
            .split(x, xu, xt, 16)
            .split(co, cou, cot, 8)
            .reorder(xu, cou, r.x, r.y, rci, xt, cot, rco, y, n)
            .gpu_threads(xt, cot)
            .unroll(xu)
            .unroll(cou)
            .unroll(r.x)
            .unroll(r.y);

        // Shared-memory staging of both operands for one chunk of channels,
        // loaded cooperatively by the block's threads.
        Func in_s = input.in(), f_s = filter.in();
        in_s.compute_at(conv, rco)
            .store_in(MemoryType::GPUShared)
            .gpu_threads(_0, _1);
        f_s.compute_at(conv, rco)
            .store_in(MemoryType::GPUShared)
            .reorder(_3, _2, _0, _1)
            .gpu_threads(_3, _2);
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(ConvLayer, conv_layer)
