// Small generators the driver's tests run as real subprocesses: pipelines
// that work (a two-stage stencil, a reduction), and ones that fail in each
// way a user's generator can: a Func without estimates, an error raised while
// generating, and one that never finishes.

#include <chrono>
#include <thread>

#include "Halide.h"

#include "../../search/generators/rotated_stack_algorithm.h"

// Halide.h undefines its error macros at the end but keeps
// _halide_user_assert, spelled the same from Halide 14 to 21: a user error
// the way Halide reports its own (the generator exits non-zero with
// "Error: <message>").

namespace {

using namespace Halide;

// Tiles every Func 16x16 when asked, so tests get CUDA kernels without an
// autoscheduler.
void naive_gpu(Func f) {
    Var xo, yo, xi, yi;
    f.compute_root().gpu_tile(f.args()[0], f.args()[1], xo, yo, xi, yi, 16, 16);
}

class TinyStencil : public Generator<TinyStencil> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    GeneratorParam<int> width{"width", 256};
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func blur_x("blur_x");
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3.f;
        output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3.f;
        input.set_estimates({{0, width}, {0, 128}});
        output.set_estimates({{0, width}, {0, 128}});
        if (schedule == "naive") {
            naive_gpu(blur_x);
            naive_gpu(output);
        }
    }
};

class RowSums : public Generator<RowSums> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 1};

    void generate() {
        Var y("y");
        RDom r(0, 64);
        Func squares("squares");
        Var x("x");
        squares(x, y) = input(x, y) * input(x, y);
        output(y) = sum(squares(r, y));
        input.set_estimates({{0, 64}, {0, 256}});
        output.set_estimates({{0, 256}});
        if (schedule == "naive") {
            // A 1-D GPU output: the case Halide's RunGen cannot save.
            Var yo, yi;
            output.gpu_tile(y, yo, yi, 32);
        }
    }
};

// A whole image summed to one float: gpusched splits the sum across threads
// (core/reduction_split.h), which adds in another order than the serial sum.
// schedule=manual splits it as an expert would (rfactor into 256 x 64
// partials of 1024 terms), in an order no gpusched record describes; at
// size=4096 the serial float sum drifts 2% below the exact value, past the
// comparison's tolerance, and that split lands near the exact value.
class FloatTotal : public Generator<FloatTotal> {
public:
    GeneratorParam<int> size{"size", 1024};
    GeneratorParam<std::string> schedule{"schedule", "none"};
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 0};

    void generate() {
        RDom r(0, input.dim(0).extent(), 0, input.dim(1).extent(), "r");
        output() = 0.0f;
        output() += input(r.x, r.y) * input(r.x, r.y);
        input.set_estimates({{0, size}, {0, size}});
        if (schedule == "manual") {
            RVar rxo("rxo"), rxi("rxi"), ryo("ryo"), ryi("ryi");
            Var u("u"), v("v"), ub("ub"), vb("vb"), ut("ut"), vt("vt");
            Func partial = output.update()
                               .split(r.x, rxo, rxi, 256, TailStrategy::GuardWithIf)
                               .split(r.y, ryo, ryi, 64, TailStrategy::GuardWithIf)
                               .rfactor({{rxi, u}, {ryi, v}});
            partial.compute_root().gpu_tile(u, v, ub, vb, ut, vt, 64, 1, TailStrategy::GuardWithIf);
            partial.update().gpu_tile(u, v, ub, vb, ut, vt, 64, 1, TailStrategy::GuardWithIf);
            output.compute_root().gpu_single_thread();
            output.update().gpu_single_thread();
        }
    }
};

// Computes something else when compiled for a GPU: stands in for a schedule
// that changes a pipeline's output, so validation has a real failure to find.
class WrongOnGpu : public Generator<WrongOnGpu> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        const float off_by = get_target().has_gpu_feature() ? 0.5f : 0.f;
        output(x, y) = input(x, y) * 2.f + off_by;
        input.set_estimates({{0, 64}, {0, 32}});
        output.set_estimates({{0, 64}, {0, 32}});
        if (schedule == "naive") naive_gpu(output);
    }
};

// A bilateral grid written the way Halide's own apps/bilateral_grid writes
// it: the intensity bin is cast<int>(value / r_sigma) with r_sigma a runtime
// Input<float> that only has an estimate, the slicing stage reads the input
// without a boundary condition and does not clamp the bin index itself, and
// the generator states the grid's z extent as estimates on the intermediate
// Funcs. An autoscheduler must bound the slice's gather from those.
class EstimatedGrid : public Generator<EstimatedGrid> {
public:
    GeneratorParam<int> s_sigma{"s_sigma", 8};
    GeneratorParam<int> width{"width", 1536};
    GeneratorParam<int> height{"height", 2560};
    // false: neither r_sigma nor the grid's Funcs have estimates, so nothing
    // bounds the slice's gather (an autoscheduler must refuse, naming it).
    GeneratorParam<bool> estimates{"estimates", true};
    Input<Buffer<float>> input{"input", 2};
    Input<float> r_sigma{"r_sigma"};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y"), z("z"), c("c");
        const int s = s_sigma;
        Func edge = BoundaryConditions::repeat_edge(input);

        // Splat every s x s block of pixels into its cell's intensity bins.
        RDom r(0, s, 0, s, "cell");
        Expr v = clamp(edge(x * s + r.x - s / 2, y * s + r.y - s / 2), 0.0f, 1.0f);
        Func grid("grid");
        grid(x, y, z, c) = 0.0f;
        grid(x, y, cast<int>(v * (1.0f / r_sigma) + 0.5f), c) += select(c == 0, v, 1.0f);

        // [1 4 6 4 1] along z, then x, then y.
        Func gz("gz"), gx("gx"), gy("gy");
        gz(x, y, z, c) = grid(x, y, z - 2, c) + 4.0f * grid(x, y, z - 1, c) + 6.0f * grid(x, y, z, c) +
                         4.0f * grid(x, y, z + 1, c) + grid(x, y, z + 2, c);
        gx(x, y, z, c) = gz(x - 2, y, z, c) + 4.0f * gz(x - 1, y, z, c) + 6.0f * gz(x, y, z, c) +
                         4.0f * gz(x + 1, y, z, c) + gz(x + 2, y, z, c);
        gy(x, y, z, c) = gx(x, y - 2, z, c) + 4.0f * gx(x, y - 1, z, c) + 6.0f * gx(x, y, z, c) +
                         4.0f * gx(x, y + 1, z, c) + gx(x, y + 2, z, c);

        // Slice: trilinear lookup at the pixel's own position; the bin index
        // is bounded only through the clamp of the value and r_sigma.
        Expr zv = clamp(input(x, y), 0.0f, 1.0f) * (1.0f / r_sigma);
        Expr zi = cast<int>(zv);
        Expr zf = zv - zi;
        Expr xi = x / s, yi = y / s;
        Expr xf = cast<float>(x % s) / s, yf = cast<float>(y % s) / s;
        auto plane = [&](Expr zz) {
            return lerp(lerp(gy(xi, yi, zz, c), gy(xi + 1, yi, zz, c), xf),
                        lerp(gy(xi, yi + 1, zz, c), gy(xi + 1, yi + 1, zz, c), xf), yf);
        };
        Func slice("slice");
        slice(x, y, c) = lerp(plane(zi), plane(zi + 1), zf);
        output(x, y) = slice(x, y, 0) / slice(x, y, 1);

        input.set_estimates({{0, width}, {0, height}});
        output.set_estimates({{0, width}, {0, height}});
        if (!estimates) return;
        r_sigma.set_estimate(0.1f);
        grid.set_estimate(z, -2, 16);
        gz.set_estimate(z, 0, 12);
        gx.set_estimate(z, 0, 12);
        gy.set_estimate(z, 0, 12);
    }
};

class NoEstimates : public Generator<NoEstimates> {
public:
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        output(x, y) = input(x, y) * 2.f;
        input.set_estimates({{0, 64}, {0, 64}});
        // No estimates on output: autoschedulers must refuse, naming it.
    }
};

// A generator that schedules its output itself, unconditionally, as Halide
// v14's own apps/blur does on a GPU target: an autoscheduler must refuse it,
// saying the schedule is there and how to guard it.
class Prescheduled : public Generator<Prescheduled> {
public:
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y"), xi("xi"), yi("yi");
        output(x, y) = input(x, y) * 2.f;
        input.set_estimates({{0, 64}, {0, 64}});
        output.set_estimates({{0, 64}, {0, 64}});
        output.gpu_tile(x, y, xi, yi, 16, 16);
    }
};

class FailsToGenerate : public Generator<FailsToGenerate> {
public:
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        _halide_user_assert(false) << "fails_to_generate: this generator always reports an error";
    }
};

class NeverFinishes : public Generator<NeverFinishes> {
public:
    GeneratorParam<int> seconds{"seconds", 3600};
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        std::this_thread::sleep_for(std::chrono::seconds(seconds));
        Var x, y;
        output(x, y) = input(x, y);
    }
};

// A joint histogram of two images (issue 57): a 256 x 256 result from a
// reduction over every pixel, whose splits make whole copies of the
// histogram as partials: 4096 of them are a 1 GiB intermediate.
class JointHistogram : public Generator<JointHistogram> {
public:
    GeneratorParam<int> size{"size", 4096};
    Input<Buffer<float>> a{"a", 2}, b{"b", 2};
    Output<Buffer<float>> hist{"hist", 2};

    void generate() {
        Var i("i"), j("j");
        RDom r(0, size, 0, size, "r");
        Expr bin_a = clamp(cast<int>(a(r.x, r.y) * 255.0f), 0, 255);
        Expr bin_b = clamp(cast<int>(b(r.x, r.y) * 255.0f), 0, 255);
        hist(i, j) = 0.0f;
        hist(bin_a, bin_b) += 1.0f;
        a.set_estimates({{0, size}, {0, size}});
        b.set_estimates({{0, size}, {0, size}});
        hist.set_estimates({{0, 256}, {0, 256}});
    }
};

} // namespace

// A transposed intermediate (issue 59): the case for a storage layout
// decision (../../search/generators/rotated_stack_algorithm.h).
class RotatedStack : public Generator<RotatedStack> {
public:
    GeneratorParam<int> width{"width", 512};
    GeneratorParam<int> height{"height", 384};
    GeneratorParam<int> frames{"frames", 8};
    Input<Buffer<float>> input{"input", 3};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Func rot("rot");
        rotated_stack::define(BoundaryConditions::repeat_edge(input), rot, output, frames);
        input.set_estimates({{0, width}, {0, height}, {0, frames}});
        output.set_estimates({{0, width}, {0, height}});
    }
};

HALIDE_REGISTER_GENERATOR(TinyStencil, tiny_stencil)
HALIDE_REGISTER_GENERATOR(RotatedStack, rotated_stack)
HALIDE_REGISTER_GENERATOR(JointHistogram, joint_histogram)
HALIDE_REGISTER_GENERATOR(RowSums, row_sums)
HALIDE_REGISTER_GENERATOR(WrongOnGpu, wrong_on_gpu)
HALIDE_REGISTER_GENERATOR(FloatTotal, float_total)
HALIDE_REGISTER_GENERATOR(EstimatedGrid, estimated_grid)
HALIDE_REGISTER_GENERATOR(NoEstimates, no_estimates)
HALIDE_REGISTER_GENERATOR(Prescheduled, prescheduled)
HALIDE_REGISTER_GENERATOR(FailsToGenerate, fails_to_generate)
HALIDE_REGISTER_GENERATOR(NeverFinishes, never_finishes)
