// Small generators the driver's tests run as real subprocesses: pipelines
// that work (a two-stage stencil, a reduction), and ones that fail in each
// way a user's generator can: a Func without estimates, an error raised while
// generating, and one that never finishes.

#include <chrono>
#include <thread>

#include "Halide.h"

// Halide.h undefines its error macros at the end; generators report user
// errors the same way Halide does, through ErrorReport (the generator exits
// non-zero with "Error: <message>").
#define GENERATOR_USER_ERROR \
    Halide::Internal::ErrorReport(__FILE__, __LINE__, nullptr, Halide::Internal::ErrorReport::User)

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

class FailsToGenerate : public Generator<FailsToGenerate> {
public:
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        GENERATOR_USER_ERROR << "fails_to_generate: this generator always reports an error";
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

} // namespace

HALIDE_REGISTER_GENERATOR(TinyStencil, tiny_stencil)
HALIDE_REGISTER_GENERATOR(RowSums, row_sums)
HALIDE_REGISTER_GENERATOR(WrongOnGpu, wrong_on_gpu)
HALIDE_REGISTER_GENERATOR(NoEstimates, no_estimates)
HALIDE_REGISTER_GENERATOR(FailsToGenerate, fails_to_generate)
HALIDE_REGISTER_GENERATOR(NeverFinishes, never_finishes)
